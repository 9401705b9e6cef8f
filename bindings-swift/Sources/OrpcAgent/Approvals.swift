import Foundation
import OrpcAgentFFI

/// A request for human approval (DESIGN §5), as stored.
public struct ApprovalRequest: Sendable, Hashable {
    public let id: String
    public let capabilityId: String
    /// The full validated input (the input hash that binds it stays in the
    /// store: no view shows it, since a redacted value with few possible
    /// values could be recovered from it). Show it through `approvalInput(_:)`, which
    /// applies the capability's `redactApprovalInput`.
    public let input: JSONValue
    public let surface: Surface
    public let actor: Actor
    public let type: String?
    public let reason: String?
    public let createdAt: UInt64
    public let expiresAt: UInt64
    /// As of the read: `pending`, `approved`, `rejected`, `consumed`, or
    /// `expired` (pending or approved, past `expiresAt`).
    public let status: String
    public let decidedBy: String?
    public let decidedAt: UInt64?
    public let decisionReason: String?
    /// The session of the call that asked (the frame's `sessionId`).
    public let sessionId: String?
    /// The request as JSON.
    public let json: JSONValue
}

/// A page request for approval UIs.
public struct ApprovalFilter: Sendable {
    public var capabilityId: String?
    public var actorId: String?
    /// Only requests made on this surface (with `actorId`: exactly that
    /// requester's own).
    public var surface: Surface?
    public var status: String?
    public var limit: Int?
    public var cursor: String?
    public init(
        capabilityId: String? = nil, actorId: String? = nil, surface: Surface? = nil, status: String? = nil,
        limit: Int? = nil, cursor: String? = nil
    ) {
        self.capabilityId = capabilityId
        self.actorId = actorId
        self.surface = surface
        self.status = status
        self.limit = limit
        self.cursor = cursor
    }

    var json: String {
        var o = JSONObject()
        if let capabilityId { o["capabilityId"] = .string(capabilityId) }
        if let actorId { o["actorId"] = .string(actorId) }
        if let surface { o["surface"] = .string(surface.rawValue) }
        if let status { o["status"] = .string(status) }
        if let limit { o["limit"] = .int(Int64(limit)) }
        if let cursor { o["cursor"] = .string(cursor) }
        return JSONValue.object(o).jsonText
    }
}

/// One audit record (schema in docs/decisions.md), as the core wrote it.
public struct AuditRecord: Sendable {
    /// The record as JSON (camelCase keys).
    public let json: JSONValue
    /// `started` or `finished`.
    public let event: String
    /// The resolved capability; `nil` when nothing resolved.
    public let capabilityId: String?
    /// The id or tool name the caller asked for (`nil` on resume).
    public let requested: String?
    /// The surface the call ran on (the recorded one on resume).
    public let surface: Surface
    public let actorId: String?
    /// The call resumed an approved request.
    public let resumed: Bool
    /// Every policy evaluated, in order, shadow ones included.
    public let policies: [Policy]
    public let approvalId: String?
    /// Handler attempts made (0 if the handler never ran).
    public let attempts: Int
    /// The clock at the start (unix ms).
    public let startedAt: UInt64
    public let durationMs: UInt64
    /// `ok`, `approval_required` or an error code; `nil` for `started`.
    public let outcome: String?
    /// The pipeline stage reached (1–14).
    public let stage: Int
    public let trace: TraceContext?
    public let requestId: String?
    public let agentId: String?
    public let sessionId: String?
    /// Operators only: the type of a handler's plain error. Its description
    /// is never recorded (it may quote data); the registry's logger gets it.
    public let failure: String?

    /// One policy decision, enforced or shadow.
    public struct Policy: Sendable, Hashable {
        /// `runtime` or `capability`.
        public let scope: String
        /// Position in its list.
        public let index: Int
        public let name: String?
        /// `enforce` or `shadow`.
        public let mode: String
        /// A host callback (not a declarative matcher).
        public let host: Bool
        /// `allow`, `deny`, `requireApproval` or `abstain` (a failed host
        /// policy is `deny` with `failed`).
        public let decision: String
        public let reason: String?
        public let approvalType: String?
        /// The host policy threw or timed out.
        public let failed: Bool
    }
}

/// How a governed call ended, when it did not fail.
public enum Outcome<Output: Sendable>: Sendable {
    case ok(Output)
    /// Stage 8 gated the call and the request is stored: approve it, then
    /// `resume` it. Not an error for the application.
    case approvalRequired(ApprovalRequest)

    public var value: Output? {
        if case .ok(let v) = self { return v }
        return nil
    }
    public var approval: ApprovalRequest? {
        if case .approvalRequired(let r) = self { return r }
        return nil
    }
}

/// Where approvals are stored.
public enum ApprovalStoreConfig: Sendable {
    /// In memory (tests; lost on restart).
    case memory
    /// A SQLite file: the embedded default, survives restarts.
    case sqlite(path: String)
    /// PostgreSQL, shared by every instance of an app: open the registry
    /// with `CapabilityRegistry.connect`. `options`: `{maxConnections,
    /// connectTimeoutMs, statementTimeoutMs, clock, tls: "system" |
    /// "noVerify" | {caPem}}` (see `core::ffi::postgres_options_from_json`).
    case postgres(url: String, options: JSONValue? = nil)

    var json: String {
        switch self {
        case .memory: return "\"memory\""
        case .sqlite(let p): return JSONValue.object(JSONObject([("sqlite", .string(p))])).jsonText
        case .postgres(let u, _): return JSONValue.object(JSONObject([("postgres", .string(u))])).jsonText
        }
    }
}

/// The approval input hash of DESIGN §5, computed by the core. What JSON
/// cannot hold is refused by the core with INVALID_INPUT and
/// `details.reason`: a NaN or infinity (`NON_FINITE_NUMBER`), nesting past
/// the hash's depth (`TOO_DEEP`), as on the CBOR path.
public enum InputHash {
    /// Hash of a JSON-model input.
    public static func of(capability: String, input: JSONValue) throws -> String {
        try ffi { try inputHashHost(capabilityId: capability, input: HostJSON.export(input)) }
    }
    /// Hash of any `Encodable` input (through its JSON form).
    public static func of<T: Encodable>(capability: String, encoding input: T) throws -> String {
        try ffi { try inputHashHost(capabilityId: capability, input: HostJSON.export(input)) }
    }
    /// Hash of an input held as CBOR bytes.
    public static func of(capability: String, cbor: Data) throws -> String {
        try ffi { try inputHashCbor(capabilityId: capability, inputCbor: cbor) }
    }
}

/// Every error code of the linked core (for drift checks).
public func coreErrorCodes() -> [String] { allErrorCodes() }
