import Foundation
import OrpcAgentFFI

/// Registry-wide options.
public struct RegistryOptions: Sendable {
    /// Runtime defaults (`{timeoutMs, approvalExpiresInMs, …}`).
    public var defaults: JSONValue?
    /// Runtime-level policies: run before every capability's own (SI-6),
    /// after the ones `json` declares (both apply; a declared host marker
    /// is implemented by the host policy of its name).
    public var policies: [Policy]
    /// An approver may not decide their own request.
    public var approverMustDiffer: Bool?
    public var approvalStore: ApprovalStoreConfig
    /// Receives every audit record (`started`, `finished`).
    public var audit: (@Sendable (AuditRecord) -> Void)?
    /// Finished records carry the (redacted) output.
    public var auditPayloads: Bool
    /// Also write every audit record to PostgreSQL (open the registry with
    /// `CapabilityRegistry.connect`); works with any approval store and
    /// with or without `audit`.
    public var auditSink: AuditSinkConfig?
    /// The time source for deadlines, backoff and approval expiry.
    public var clock: any AgentClock
    /// Where the operator is told what failed: the real error of a
    /// handler, validator, redactor or host policy that threw (the caller
    /// and the model get only the core's generic error). Default
    /// `.standard` (`os.Logger`, else standard error); `.off` for none.
    public var logger: OperatorLogger
    /// Options read from a declaration file (`{defaults, policies,
    /// approverMustDiffer}`): the base the typed fields above override —
    /// except `policies`, which add to the declared ones.
    public var json: JSONValue?

    /// The runtime policies as the core indexes them: declared, then given.
    var policyList: PolicyList { PolicyList(declared: json?["policies"], given: policies) }

    public init(
        defaults: JSONValue? = nil, policies: [Policy] = [], approverMustDiffer: Bool? = nil,
        approvalStore: ApprovalStoreConfig = .memory, audit: (@Sendable (AuditRecord) -> Void)? = nil,
        auditPayloads: Bool = false, clock: any AgentClock = SystemClock(), auditSink: AuditSinkConfig? = nil,
        logger: OperatorLogger = .standard
    ) {
        self.logger = logger
        self.auditSink = auditSink
        self.defaults = defaults
        self.policies = policies
        self.approverMustDiffer = approverMustDiffer
        self.approvalStore = approvalStore
        self.audit = audit
        self.auditPayloads = auditPayloads
        self.clock = clock
    }

    var coreJSON: String {
        var o = json?.objectValue ?? JSONObject()
        if let json, json.objectValue == nil { return json.jsonText }
        if let defaults { o["defaults"] = defaults }
        if let list = policyList.wire { o["policies"] = list }
        // The runtime host policies implemented here (MISSING_HOOK otherwise).
        o["hostPolicies"] = PolicyList.held(policyList.policies)
        if let approverMustDiffer { o["approverMustDiffer"] = .bool(approverMustDiffer) }
        return JSONValue.object(o).jsonText
    }
}

/// Who may resume a request through `CapabilityRegistry.resume(_:frame:limitedTo:)`
/// — a caller who may resume only its own requests (a remote client, a
/// tool call). The core decides; a request the limit does not allow is
/// APPROVAL_NOT_FOUND, exactly as a missing one, and is not consumed.
public enum ResumeLimit: Sendable, Hashable {
    /// Only a request the frame's actor made, on the frame's surface. A
    /// frame whose actor has no id resumes nothing.
    case requester
    /// As `.requester`, through one capability's tool (its id or adapter
    /// tool name; a name no capability has resumes nothing): only a request
    /// for that capability. A frame whose actor has no id may resume only a
    /// request made by an identical actor without one, in the same session.
    case throughTool(String)
}

/// Capabilities an agent may call, governed by the orpc-agent core.
///
/// Build it once; `invoke` from any task. Every decision — exposure,
/// policies and their order, approvals, deadlines, retries, redaction,
/// audit — is the core's; this class runs your Swift code when the core
/// asks, on Swift concurrency.
public final class CapabilityRegistry: @unchecked Sendable {
    let core: FfiRegistry
    let capabilities: [Capability]
    let runtimePolicies: [Policy]
    let indexById: [String: UInt32]
    let options: RegistryOptions

    /// Validates every capability at once; throws ONE `RegistryError`
    /// listing every problem (SI-4), or a `CapabilityError` for a store
    /// that cannot be opened.
    public convenience init(capabilities: [Capability], options: RegistryOptions = RegistryOptions()) throws {
        if options.auditSink != nil {
            throw CapabilityError(
                .internal, "a registry with an audit sink is opened with `CapabilityRegistry.connect` (asynchronous)")
        }
        let decls = try JSONValue.array(capabilities.map(\.declaration)).checkedJSONText()
        // A declared hook without an implementation is the core's
        // MISSING_HOOK, in its one aggregate error (`hostHooks`).
        let core: FfiRegistry
        do {
            core = try FfiRegistry(
                declarationsJson: decls, optionsJson: options.coreJSON, storeJson: options.approvalStore.json,
                audit: options.audit != nil, auditPayloads: options.auditPayloads)
        } catch {
            throw liftError(error)
        }
        self.init(core: core, capabilities: capabilities, options: options)
    }

    /// A registry on a built core (`init`, or `connect` for PostgreSQL).
    init(core: FfiRegistry, capabilities: [Capability], options: RegistryOptions) {
        self.core = core
        // Registry order is declaration order; the core confirms it. Ids are
        // matched by their UTF-8 bytes, as the core compares them: Swift's
        // `String ==` makes "café" and "cafe\u{301}" (or "K" and the Kelvin
        // sign) one key, and one capability would run as the other.
        let ids = core.capabilityIds()
        var byId: [ByteKey: Capability] = [:]
        for c in capabilities { byId[ByteKey(c.id)] = c }
        self.capabilities = ids.compactMap { byId[ByteKey($0)] }
        var index: [String: UInt32] = [:]
        for (i, id) in ids.enumerated() { index[id] = UInt32(i) }
        indexById = index
        runtimePolicies = options.policyList.policies
        self.options = options
    }

    /// Runs a capability (by id or adapter tool name) through the governed
    /// pipeline. Returns `.ok(output)` or `.approvalRequired(request)`;
    /// throws `CapabilityError` (by code) otherwise. Cancelling the calling
    /// task cancels the invocation (CANCELLED).
    public func invoke<Input: Encodable & Sendable, Output: Decodable & Sendable>(
        _ name: String, input: Input, frame: Frame, as _: Output.Type = Output.self
    ) async throws -> Outcome<Output> {
        let now = options.clock.nowMs()
        // Only an id that is these very bytes (else the core resolves the name).
        let index = indexById[name].flatMap { i in
            Int(i) < capabilities.count && capabilities[Int(i)].id.utf8.elementsEqual(name.utf8) ? i : nil
        }
        // The raw input as the core measures it before any step: its JSON
        // text, written without unbounded recursion (HostJSON).
        let measured = HostJSON.input(input)
        // A task already cancelled: the core stores, consumes and runs nothing.
        let cancelled = Task.isCancelled
        let inv = try ffi {
            if let i = index {
                return try core.start(
                    capabilityIndex: i, surface: frame.surface.index, details: frame.coreDetails, input: measured,
                    nowMs: now, cancelled: cancelled)
            }
            return try core.startNamed(
                idOrToolName: name, surface: frame.surface.index, details: frame.coreDetails, input: measured,
                nowMs: now, cancelled: cancelled
            )
        }
        let call = Call(raw: input, frame: frame, resumed: false)
        // Known by id: no crossing to learn the capability (by tool name it
        // is read from the invocation when first needed).
        if let i = index { call.capability = capabilities[Int(i)] }
        return try await Driver(registry: self, inv: inv, call: call).run(Output.self)
    }

    // MARK: introspection

    /// The capability id an id or adapter tool name resolves to (stage 1),
    /// whatever the surface; `nil` when unknown.
    public func capabilityId(for idOrToolName: String) -> String? {
        core.resolve(idOrToolName: idOrToolName).flatMap { i in
            Int(i) < capabilities.count ? capabilities[Int(i)].id : nil
        }
    }

    /// The inspect() report: resolved values, surfaces, tool names, warnings.
    public func inspect() throws -> JSONValue {
        try CoreJSON.parse("inspect report", try ffi { try core.inspect() })
    }

    /// Portable descriptors of the capabilities exposed on `surface`.
    public func descriptors(surface: Surface) throws -> [JSONValue] {
        let text = try ffi { try core.descriptors(surface: surface.rawValue) }
        return try CoreJSON.array("descriptor list", text)
    }

    /// The same descriptors as one CBOR array, each item the JSON fields
    /// plus a `metadata` map of their `std:` tool-definition keys (the
    /// core's encoding, as Node's gateway sends it).
    public func descriptorsCBOR(surface: Surface) throws -> Data {
        try ffi { try core.descriptorsCbor(surface: surface.rawValue) }
    }
}
