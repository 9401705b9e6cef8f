// The registry's approval API (`CapabilityRegistry` is in Registry.swift):
// resuming an approved request through the driver, reading, listing and
// deciding requests, and the model-safe view of a request's input.

import Foundation
import OrpcAgentFFI

extension CapabilityRegistry {
    /// Resumes an approved request: runs it once (single use) with the
    /// surface and actor recorded when it was made (SI-3). Without `limit`
    /// the caller is trusted to resume any request (an approval UI, the
    /// app) and `frame` gives only trace, ids and your context; with one,
    /// `frame`'s surface and actor are the caller the core checks (see
    /// `ResumeLimit`): any other request is APPROVAL_NOT_FOUND and is not
    /// consumed.
    public func resume<Output: Decodable & Sendable>(
        _ approvalId: String, frame: Frame, limitedTo limit: ResumeLimit? = nil, as _: Output.Type = Output.self
    ) async throws -> Outcome<Output> {
        let now = options.clock.nowMs()
        // A task already cancelled consumes nothing: the core ends the call
        // CANCELLED before its consume step.
        let cancelled = Task.isCancelled
        let ffiLimit: FfiResumeLimit
        switch limit {
        case nil: ffiLimit = .trusted
        case .requester: ffiLimit = .requester
        case .throughTool(let name): ffiLimit = .throughTool(idOrToolName: name)
        }
        // A trusted resume takes no caller from its frame (the core replaces
        // its surface and actor): the actor is not sent, so not converted.
        var sent = frame
        if limit == nil { sent.actor = Actor() }
        let inv = try ffi {
            try core.resume(
                approvalId: approvalId, surface: frame.surface.index, details: sent.coreDetails, nowMs: now,
                limit: ffiLimit, cancelled: cancelled)
        }
        return try await Driver(registry: self, inv: inv, call: Call(raw: nil, frame: frame, resumed: true)).run(
            Output.self)
    }

    // MARK: approvals

    public func approval(_ id: String) throws -> ApprovalRequest? {
        let now = options.clock.nowMs()
        return try ffi { try core.approval(id: id, nowMs: now) }.map(ApprovalRequest.init(core:))
    }

    public func approvals(_ filter: ApprovalFilter = ApprovalFilter()) throws -> [ApprovalRequest] {
        let now = options.clock.nowMs()
        return try ffi { try core.approvals(filterJson: filter.json, nowMs: now) }.map(ApprovalRequest.init(core:))
    }

    @discardableResult
    public func approve(_ id: String, approver: String?, reason: String? = nil) throws -> ApprovalRequest {
        try decide(id, approve: true, approver: approver, reason: reason)
    }

    @discardableResult
    public func reject(_ id: String, approver: String?, reason: String? = nil) throws -> ApprovalRequest {
        try decide(id, approve: false, approver: approver, reason: reason)
    }

    private func decide(_ id: String, approve: Bool, approver: String?, reason: String?) throws -> ApprovalRequest {
        let now = options.clock.nowMs()
        let decided = try ffi {
            try core.decide(id: id, approve: approve, approver: approver, reason: reason, nowMs: now)
        }
        return try ApprovalRequest(core: decided)
    }

    /// The model-safe view of a request's input for approval UIs: through
    /// the capability's `redactApprovalInput` with the request's recorded
    /// surface and actor. A throwing redactor gives EXECUTION_FAILED.
    public func approvalInput(_ id: String, context: (any Sendable)? = nil) async throws -> JSONValue {
        let view: FfiApprovalView
        do { view = try await core.approvalInputView(id: id) } catch { throw liftError(error) }
        guard let inputText = view.inputJson else {
            throw CoreJSON.malformed("approval input view", field: "input", expected: "present")
        }
        let input = try CoreJSON.parse("approval input", inputText)
        switch ApprovalViewCode(rawValue: view.kind) {
        case .asStored: return input
        case .redact:
            guard Int(view.capabilityIndex) < capabilities.count,
                let redact = capabilities[Int(view.capabilityIndex)].hooks.redactApprovalInput
            else { throw CapabilityError(.internal, "no approval-input redactor") }
            guard let recorded = view.info else {
                throw CoreJSON.malformed("approval input view", field: "info", expected: "present")
            }
            let info = try RedactionInfo(core: recorded, context: context)
            // Bounded by the core's `timeoutMs`: a redactor that never
            // settles fails the view, as one that throws.
            let clock = options.clock
            let redacted: JSONValue?
            do {
                redacted = try await settled(by: clock.nowMs().addingSaturated(view.timeoutMs), on: clock) {
                    try await redact(input, info)
                }
            } catch is CancellationError where Task.isCancelled {
                throw CancellationError()  // the caller's own: not the redactor's failure
            } catch {
                options.logger.log(
                    OperatorFailure(capabilityId: info.capabilityId, hook: .approvalInputRedactor, error: error))
                throw CapabilityError(.executionFailed, approvalViewFailedMessage)
            }
            guard let redacted else {
                let late = CapabilityError(.timeout, "the redactor did not finish within its \(view.timeoutMs) ms")
                options.logger.log(
                    OperatorFailure(capabilityId: info.capabilityId, hook: .approvalInputRedactor, error: late))
                throw CapabilityError(.executionFailed, approvalViewFailedMessage)
            }
            return redacted
        case nil:
            throw CapabilityError(.internal, "unknown approval view")
        }
    }
}
