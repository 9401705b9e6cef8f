import Foundation
import OrpcAgentFFI

/// Where audit records are written besides the `audit` subscriber.
public enum AuditSinkConfig: Sendable {
    /// A PostgreSQL table (`orpc_audit`), written in batches in the
    /// background; `options` as for `ApprovalStoreConfig.postgres`, plus
    /// `auditQueue` (records held while the database is slow; beyond it
    /// records are dropped and counted).
    case postgres(url: String, options: JSONValue? = nil)
}

/// The audit sink's counters.
public struct AuditSinkStats: Sendable, Equatable {
    public let written: UInt64
    public let dropped: UInt64
    public let failed: UInt64
}

/// One page of approval requests and where the next starts (`nil`: this
/// was the last page; pass it as `ApprovalFilter.cursor`).
public struct ApprovalPage: Sendable {
    public let requests: [ApprovalRequest]
    public let nextCursor: String?

    init(requests: [ApprovalRequest], nextCursor: String?) {
        self.requests = requests
        self.nextCursor = nextCursor
    }

    init(core page: FfiApprovalPage) throws {
        requests = try page.requests.map(ApprovalRequest.init(core:))
        nextCursor = page.nextCursor
    }
}

/// PostgreSQL (issue 8): one approval queue shared by every instance of an
/// app. Its calls really wait, so a PostgreSQL registry is opened with
/// `connect` and its approval operations are the `async` ones below (they
/// work on every store). The synchronous `approval`/`approvals`/`approve`
/// refuse on PostgreSQL with INTERNAL instead of blocking a thread.
extension CapabilityRegistry {
    /// Builds a registry; with `.postgres` it connects first (pool +
    /// migrations). Throws ONE `RegistryError` listing every problem, or a
    /// `CapabilityError` (INTERNAL, `details.store` = the backend kind)
    /// when the database cannot be reached.
    public static func connect(
        capabilities: [Capability], options: RegistryOptions = RegistryOptions()
    ) async throws -> CapabilityRegistry {
        let registry = try await connectStore(capabilities: capabilities, options: options)
        if case .postgres(let url, let sinkOptions) = options.auditSink {
            do {
                try await registry.core.attachPostgresAudit(url: url, optionsJson: (sinkOptions ?? .null).jsonText)
            } catch { throw liftError(error) }
        }
        return registry
    }

    /// The PostgreSQL audit sink's counters, or `nil` without one.
    public func auditStats() -> AuditSinkStats? {
        core.auditStats().map { AuditSinkStats(written: $0.written, dropped: $0.dropped, failed: $0.failed) }
    }

    /// Waits until every audit record queued so far is written (or counted
    /// as failed). Call before the process exits: queued records are lost
    /// with it.
    public func flushAudit() async {
        await core.auditFlush()
    }

    private static func connectStore(
        capabilities: [Capability], options: RegistryOptions
    ) async throws -> CapabilityRegistry {
        guard case .postgres(let url, let pgOptions) = options.approvalStore else {
            var local = options
            local.auditSink = nil  // attached by `connect` once built
            return try CapabilityRegistry(capabilities: capabilities, options: local)
        }
        // A declared hook without an implementation is the core's
        // MISSING_HOOK, in its one aggregate error (`hostHooks`).
        let core: FfiRegistry
        do {
            core = try await openPostgresRegistry(
                declarationsJson: JSONValue.array(capabilities.map(\.declaration)).jsonText,
                optionsJson: options.coreJSON, url: url, postgresOptionsJson: (pgOptions ?? .null).jsonText,
                audit: options.audit != nil, auditPayloads: options.auditPayloads)
        } catch {
            throw liftError(error)
        }
        return CapabilityRegistry(core: core, capabilities: capabilities, options: options)
    }

    /// One request, or `nil`.
    public func approvalAsync(_ id: String) async throws -> ApprovalRequest? {
        do {
            return try await core.approvalAsync(id: id, nowMs: options.clock.nowMs()).map(ApprovalRequest.init(core:))
        } catch { throw liftError(error) }
    }

    /// One page of requests (oldest first) and the next page's cursor.
    public func approvalsPageAsync(_ filter: ApprovalFilter = ApprovalFilter()) async throws -> ApprovalPage {
        let page: FfiApprovalPage
        let now = options.clock.nowMs()
        do { page = try await core.approvalsPageAsync(filterJson: filter.json, nowMs: now) } catch {
            throw liftError(error)
        }
        return try ApprovalPage(core: page)
    }

    @discardableResult
    public func approveAsync(_ id: String, approver: String?, reason: String? = nil) async throws -> ApprovalRequest {
        try await decideAsync(id, approve: true, approver: approver, reason: reason)
    }

    @discardableResult
    public func rejectAsync(_ id: String, approver: String?, reason: String? = nil) async throws -> ApprovalRequest {
        try await decideAsync(id, approve: false, approver: approver, reason: reason)
    }

    private func decideAsync(_ id: String, approve: Bool, approver: String?, reason: String?) async throws
        -> ApprovalRequest
    {
        let now = options.clock.nowMs()
        do {
            let decided = try await core.decideAsync(
                id: id, approve: approve, approver: approver, reason: reason, nowMs: now)
            return try ApprovalRequest(core: decided)
        } catch { throw liftError(error) }
    }
}
