import Foundation

// `Surface` (where a call comes from) and its `index`, what crosses into
// Rust, are generated from the core: Generated/Protocol.swift.

public enum SideEffect: String, Sendable, Codable { case none, read, write, destructive, external }
public enum Risk: String, Sendable, Codable { case low, medium, high, critical }
public enum Discovery: String, Sendable, Codable { case discoverable, contextual }

/// A capability's metadata (spec/000): what the core validates, all at once,
/// when the registry is built. Host hooks (redactors, `retryOn`, host
/// policies) are given on `Capability`; their declared-present markers are
/// added for you.
public struct AgentMeta: Sendable, Hashable {
    public var description: String
    /// Surfaces the capability is exposed on; only `true` exposes (SI-1).
    public var expose: [Surface: Bool]
    public var sideEffect: SideEffect
    public var risk: Risk
    public var tags: [String]?
    public var timeoutMs: Int?
    public var retry: Retry?
    public var idempotent: Bool?
    public var approval: Approval?
    public var discovery: Discovery?
    /// `{aiSdk: {toolName}, mcp: {toolName, annotations}}`.
    public var adapters: JSONValue?
    /// Declarative policies (`{when, decision, …}`, see docs/decisions.md).
    /// Host policies are closures on `Capability.policies`; both apply, the
    /// declared ones first (a declared `{"host": true, "name": n}` marker
    /// is implemented by the host policy named `n`, in its place).
    public var policies: [JSONValue]
    /// Metadata given as JSON (a file, a vector): passed to the core as is.
    var raw: JSONValue?

    public struct Retry: Sendable, Hashable {
        public var maxAttempts: Int
        public var backoffMs: Int?
        public init(maxAttempts: Int, backoffMs: Int? = nil) {
            self.maxAttempts = maxAttempts
            self.backoffMs = backoffMs
        }
    }

    public struct Approval: Sendable, Hashable {
        public var required: Bool
        public var type: String?
        public var expiresInMs: Int?
        public init(required: Bool, type: String? = nil, expiresInMs: Int? = nil) {
            self.required = required
            self.type = type
            self.expiresInMs = expiresInMs
        }
    }

    public init(
        description: String, expose: [Surface: Bool], sideEffect: SideEffect, risk: Risk,
        tags: [String]? = nil, timeoutMs: Int? = nil, retry: Retry? = nil, idempotent: Bool? = nil,
        approval: Approval? = nil, discovery: Discovery? = nil, adapters: JSONValue? = nil,
        policies: [JSONValue] = []
    ) {
        self.description = description
        self.expose = expose
        self.sideEffect = sideEffect
        self.risk = risk
        self.tags = tags
        self.timeoutMs = timeoutMs
        self.retry = retry
        self.idempotent = idempotent
        self.approval = approval
        self.discovery = discovery
        self.adapters = adapters
        self.policies = policies
    }

    /// Metadata as JSON (`AgentMeta` wire form), e.g. read from a file: it
    /// goes to the core as is, which validates it at build like any other
    /// and refuses the registry if it is invalid (SI-4). The typed fields
    /// are read from it: for valid metadata they are what it declares (a
    /// file's `"sideEffect": "destructive"` reads `.destructive`, never a
    /// default). A field the JSON lacks or mistypes — metadata the core
    /// will refuse — reads as a placeholder (`""`, `[:]`, `.destructive`,
    /// `.critical` for the two enums: the gravest, should anyone look at
    /// them before the build fails) or `nil`.
    public init(json: JSONValue) {
        func enumValue<E: RawRepresentable>(_ key: String, _: E.Type) -> E? where E.RawValue == String {
            json[key]?.stringValue.flatMap(E.init(rawValue:))
        }
        func int(_ v: JSONValue?) -> Int? { v?.uint64Value.flatMap { Int(exactly: $0) } }
        var expose: [Surface: Bool] = [:]
        for (k, v) in json["expose"]?.objectValue ?? JSONObject() {
            if let s = Surface(rawValue: k), let b = v.boolValue { expose[s] = b }
        }
        let tags = json["tags"]?.arrayValue.map { $0.compactMap(\.stringValue) }
        let retry = json["retry"].flatMap { r in
            int(r["maxAttempts"]).map { Retry(maxAttempts: $0, backoffMs: int(r["backoffMs"])) }
        }
        let approval = json["approval"].flatMap { a in
            a["required"]?.boolValue.map {
                Approval(required: $0, type: a["type"]?.stringValue, expiresInMs: int(a["expiresInMs"]))
            }
        }
        self.init(
            description: json["description"]?.stringValue ?? "", expose: expose,
            sideEffect: enumValue("sideEffect", SideEffect.self) ?? .destructive,
            risk: enumValue("risk", Risk.self) ?? .critical, tags: tags, timeoutMs: int(json["timeoutMs"]),
            retry: retry,
            idempotent: json["idempotent"]?.boolValue, approval: approval,
            discovery: enumValue("discovery", Discovery.self), adapters: json["adapters"],
            policies: json["policies"]?.arrayValue ?? [])
        raw = json
    }

    /// The wire form the core reads.
    var json: JSONValue {
        if let raw { return raw }
        var o = JSONObject()
        o["description"] = .string(description)
        var e = JSONObject()
        for s in Surface.allCases { if let v = expose[s] { e[s.rawValue] = .bool(v) } }
        o["expose"] = .object(e)
        o["sideEffect"] = .string(sideEffect.rawValue)
        o["risk"] = .string(risk.rawValue)
        if let tags { o["tags"] = .array(tags.map { .string($0) }) }
        if let timeoutMs { o["timeoutMs"] = .int(Int64(timeoutMs)) }
        if let retry {
            var r = JSONObject()
            r["maxAttempts"] = .int(Int64(retry.maxAttempts))
            if let b = retry.backoffMs { r["backoffMs"] = .int(Int64(b)) }
            o["retry"] = .object(r)
        }
        if let idempotent { o["idempotent"] = .bool(idempotent) }
        if let approval {
            var a = JSONObject()
            a["required"] = .bool(approval.required)
            if let t = approval.type { a["type"] = .string(t) }
            if let x = approval.expiresInMs { a["expiresInMs"] = .int(Int64(x)) }
            o["approval"] = .object(a)
        }
        if let discovery { o["discovery"] = .string(discovery.rawValue) }
        if let adapters { o["adapters"] = adapters }
        if !policies.isEmpty { o["policies"] = .array(policies) }
        return .object(o)
    }
}

/// The caller, from the authenticated transport (SI-3).
public struct Actor: Sendable, Hashable, Codable {
    public var id: String?
    public var roles: [String]
    public var attributes: [String: JSONValue]
    public init(id: String? = nil, roles: [String] = [], attributes: [String: JSONValue] = [:]) {
        self.id = id
        self.roles = roles
        self.attributes = attributes
    }
    public init(from d: Decoder) throws {
        let c = try d.container(keyedBy: AnyKey.self)
        id = try c.decodeIfPresent(String.self, forKey: AnyKey("id"))
        roles = try c.decodeIfPresent([String].self, forKey: AnyKey("roles")) ?? []
        attributes = try c.decodeIfPresent([String: JSONValue].self, forKey: AnyKey("attributes")) ?? [:]
    }
}

/// W3C trace context.
public struct TraceContext: Sendable, Hashable, Codable {
    public var traceparent: String
    public var tracestate: String?
    public init(traceparent: String, tracestate: String? = nil) {
        self.traceparent = traceparent
        self.tracestate = tracestate
    }
}

/// Everything about a call that is not its input, built by the adapter
/// from the authenticated transport — never from model input (SI-2, SI-3).
public struct Frame: Sendable {
    public var surface: Surface
    public var actor: Actor
    public var trace: TraceContext?
    public var requestId: String?
    public var agentId: String?
    public var sessionId: String?
    /// Your application's context: opaque to the core, handed back to
    /// handlers, policies and redactors.
    public var context: (any Sendable)?
    /// Receives the handler's accepted progress reports (checked by the
    /// core: `done` increases, `done <= total`, the total is fixed once given).
    public var onProgress: (@Sendable (ProgressEvent) -> Void)?

    public init(
        surface: Surface, actor: Actor = Actor(), trace: TraceContext? = nil, requestId: String? = nil,
        agentId: String? = nil, sessionId: String? = nil, context: (any Sendable)? = nil,
        onProgress: (@Sendable (ProgressEvent) -> Void)? = nil
    ) {
        self.surface = surface
        self.actor = actor
        self.trace = trace
        self.requestId = requestId
        self.agentId = agentId
        self.sessionId = sessionId
        self.context = context
        self.onProgress = onProgress
    }
}

/// What a redactor is told (DESIGN §6): from the frozen frame, or for a
/// resumed approval from the request as recorded.
public struct RedactionInfo: Sendable {
    public let surface: Surface
    public let capabilityId: String
    public let actor: Actor
    public let context: (any Sendable)?
}
