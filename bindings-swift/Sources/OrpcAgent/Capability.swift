import Foundation

/// What a handler is told about its call.
public struct HandlerContext: Sendable {
    /// 1 for the first attempt.
    public let attempt: UInt32
    /// The deadline (unix ms). At it the handler's task is cancelled and a
    /// late result is discarded (SI-9): check `Task.isCancelled`.
    public let deadlineAtMs: UInt64
    public let capabilityId: String
    /// The frozen frame (on a resumed approval: the recorded surface/actor).
    public let frame: Frame
    /// The core's check of one report (nil outside a governed call).
    let reporter: (@Sendable (UInt64, UInt64?) -> ProgressEvent?)?

    /// For calling a handler directly (unit tests of your own handlers).
    public init(attempt: UInt32 = 1, deadlineAtMs: UInt64 = 0, capabilityId: String, frame: Frame) {
        self.init(attempt: attempt, deadlineAtMs: deadlineAtMs, capabilityId: capabilityId, frame: frame, reporter: nil)
    }

    init(
        attempt: UInt32, deadlineAtMs: UInt64, capabilityId: String, frame: Frame,
        reporter: (@Sendable (UInt64, UInt64?) -> ProgressEvent?)?
    ) {
        self.attempt = attempt
        self.deadlineAtMs = deadlineAtMs
        self.capabilityId = capabilityId
        self.frame = frame
        self.reporter = reporter
    }

    /// Reports progress: `done` units, and the `total` when known. The core
    /// checks it (per invocation, across retries); an accepted report goes
    /// to the frame's `onProgress` and returns `true`, a rejected one is
    /// dropped and returns `false` — the call goes on either way.
    @discardableResult
    public func progress(_ done: UInt64, total: UInt64? = nil) -> Bool {
        guard let event = reporter?(done, total) else { return false }
        frame.onProgress?(event)
        return true
    }
}

/// One accepted progress report (spec/004 `std:progress`, `std:progress-total`).
public struct ProgressEvent: Sendable, Hashable {
    public let done: UInt64
    /// Carried forward once given.
    public let total: UInt64?

    public init(done: UInt64, total: UInt64? = nil) {
        self.done = done
        self.total = total
    }
}

/// A capability: metadata plus the Swift code that implements it.
///
/// `Input` and `Output` are your `Codable` types (or `JSONValue`). An input
/// of the same type as `Input` reaches the handler as is; anything else is
/// converted through JSON at stage 4, where a mismatch is INVALID_INPUT.
/// `policies` add to the metadata's declared ones (`PolicyList`): a
/// declared deny stays whatever host policies are given. A plain error
/// thrown by `validateInput` is INVALID_INPUT with a generic message (its
/// text may quote the input); throw a `CapabilityError` to choose the
/// message.
public struct Capability: Sendable {
    /// Everything, held by reference: the driver reads the capability at
    /// several steps of every call, and a copy of a struct holding these
    /// directly retained and released each of its fields (two dozen).
    private let storage: Storage

    public var id: String { storage.id }
    public var meta: AgentMeta { storage.meta }
    public var inputSchema: JSONValue? { storage.inputSchema }
    public var outputSchema: JSONValue? { storage.outputSchema }
    var hooks: Hooks { storage.hooks }

    private final class Storage: Sendable {
        let id: String
        let meta: AgentMeta
        let inputSchema: JSONValue?
        let outputSchema: JSONValue?
        let hooks: Hooks

        init(id: String, meta: AgentMeta, inputSchema: JSONValue?, outputSchema: JSONValue?, hooks: Hooks) {
            self.id = id
            self.meta = meta
            self.inputSchema = inputSchema
            self.outputSchema = outputSchema
            self.hooks = hooks
        }
    }

    /// Type-erased hooks: values cross as `any Sendable`.
    struct Hooks: Sendable {
        var accept: @Sendable (Any) throws -> any Sendable
        var acceptJSON: @Sendable (String) throws -> any Sendable
        var needsConversion: Bool
        var validateInput: (@Sendable (any Sendable) async throws -> any Sendable)?
        var validateOutput: (@Sendable (any Sendable) async throws -> any Sendable)?
        var redactOutput: (@Sendable (any Sendable, RedactionInfo) async throws -> any Sendable)?
        var redactApprovalInput: (@Sendable (JSONValue, RedactionInfo) async throws -> JSONValue)?
        var retryOn: (@Sendable (CapabilityError) -> Bool)?
        /// Declared and given, as the core indexes them (`PolicyList`).
        var policies: [Policy]
        var handler: @Sendable (any Sendable, HandlerContext) async throws -> any Sendable
    }

    public init<Input: Codable & Sendable, Output: Codable & Sendable>(
        _ id: String,
        meta: AgentMeta,
        input: Input.Type = Input.self,
        output: Output.Type = Output.self,
        inputSchema: JSONValue? = nil,
        outputSchema: JSONValue? = nil,
        validateInput: (@Sendable (Input) async throws -> Input)? = nil,
        validateOutput: (@Sendable (Output) async throws -> Output)? = nil,
        redactOutput: (@Sendable (Output, RedactionInfo) async throws -> Output)? = nil,
        redactApprovalInput: (@Sendable (JSONValue, RedactionInfo) async throws -> JSONValue)? = nil,
        retryOn: (@Sendable (CapabilityError) -> Bool)? = nil,
        policies: [Policy] = [],
        handler: @escaping @Sendable (Input, HandlerContext) async throws -> Output
    ) {
        @Sendable func typed<T>(_ v: any Sendable, _: T.Type) throws -> T {
            guard let t = v as? T else { throw CapabilityError(.internal, "a value changed type inside the pipeline") }
            return t
        }
        let policyList = PolicyList(declared: meta.json["policies"], given: policies)
        let hooks = Hooks(
            accept: { raw in try JSONBridge.convert(raw, to: Input.self) },
            acceptJSON: { text in try JSONBridge.convert(try JSONValue(parsing: text), to: Input.self) },
            needsConversion: Input.self != JSONValue.self,
            validateInput: validateInput.map { f in { @Sendable v in try await f(try typed(v, Input.self)) } },
            validateOutput: validateOutput.map { f in { @Sendable v in try await f(try typed(v, Output.self)) } },
            redactOutput: redactOutput.map { f in { @Sendable v, info in try await f(try typed(v, Output.self), info) }
            },
            redactApprovalInput: redactApprovalInput,
            retryOn: retryOn,
            policies: policyList.policies,
            handler: { v, cx in try await handler(try typed(v, Input.self), cx) }
        )
        storage = Storage(id: id, meta: meta, inputSchema: inputSchema, outputSchema: outputSchema, hooks: hooks)
    }

    /// The declaration JSON the core builds from: metadata with the
    /// declared-present markers of the hooks given here.
    var declaration: JSONValue {
        var d = JSONObject()
        d["id"] = .string(id)
        d["meta"] = withMarkers(meta.json)
        if let inputSchema { d["inputSchema"] = inputSchema }
        if let outputSchema { d["outputSchema"] = outputSchema }
        // Stage 4 converts the input to the handler's type (or runs the
        // validator); JSONValue handlers without a validator skip it.
        d["validateInput"] = .bool(hooks.validateInput != nil || hooks.needsConversion)
        d["validateOutput"] = .bool(hooks.validateOutput != nil)
        // The hooks held here: one the metadata declares without one (a
        // `redact.output: true` from a file, an unbound host marker) is the
        // core's MISSING_HOOK, reported with every other problem.
        d["hostHooks"] = .object(
            JSONObject([
                ("redactOutput", .bool(hooks.redactOutput != nil)),
                ("redactApprovalInput", .bool(hooks.redactApprovalInput != nil)),
                ("retryOn", .bool(hooks.retryOn != nil)),
                ("policies", PolicyList.held(hooks.policies)),
            ]))
        return .object(d)
    }

    /// The metadata with the markers of the hooks given here. Metadata that
    /// is not an object goes to the core as is (it reports the problem).
    private func withMarkers(_ meta: JSONValue) -> JSONValue {
        guard var m = meta.objectValue else { return meta }
        if hooks.redactOutput != nil || hooks.redactApprovalInput != nil {
            var r = m["redact"]?.objectValue ?? JSONObject()
            if hooks.redactOutput != nil { r["output"] = .bool(true) }
            if hooks.redactApprovalInput != nil { r["approvalInput"] = .bool(true) }
            m["redact"] = .object(r)
        }
        if hooks.retryOn != nil, var r = m["retry"]?.objectValue {
            r["retryOn"] = .bool(true)
            m["retry"] = .object(r)
        }
        // Declared and given (a declared `policies` that is not a list goes
        // as is: the core reports it).
        if m["policies"].map({ $0.arrayValue != nil }) ?? true, !hooks.policies.isEmpty {
            m["policies"] = .array(hooks.policies.map(\.wire))
        }
        return .object(m)
    }
}
