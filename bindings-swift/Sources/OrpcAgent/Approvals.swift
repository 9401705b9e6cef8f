import Foundation
import OrpcAgentFFI

/// A request for human approval (DESIGN §5), as stored.
public struct ApprovalRequest: Sendable, Hashable {
    public let id: String
    public let capabilityId: String
    /// Lowercase hex SHA-256 binding capability + full validated input (SI-7).
    public let inputHash: String
    /// The full validated input. Show it through `approvalInput(_:)`, which
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
    /// The request as JSON.
    public let json: JSONValue

    init(json text: String) throws {
        let v = try JSONValue(parsing: text)
        json = v
        id = v["id"]?.stringValue ?? ""
        capabilityId = v["capabilityId"]?.stringValue ?? ""
        inputHash = v["inputHash"]?.stringValue ?? ""
        input = v["input"] ?? .null
        surface = Surface(rawValue: v["surface"]?.stringValue ?? "") ?? .direct
        actor = (try? JSONBridge.convert(v["actor"] ?? .null, to: Actor.self)) ?? Actor()
        type = v["type"]?.stringValue
        reason = v["reason"]?.stringValue
        createdAt = v["createdAt"]?.uint64Value ?? 0
        expiresAt = v["expiresAt"]?.uint64Value ?? 0
        status = v["status"]?.stringValue ?? ""
        decidedBy = v["decidedBy"]?.stringValue
        decidedAt = v["decidedAt"]?.uint64Value
        decisionReason = v["decisionReason"]?.stringValue
    }
}

/// A page request for approval UIs.
public struct ApprovalFilter: Sendable {
    public var capabilityId: String?
    public var actorId: String?
    public var status: String?
    public var limit: Int?
    public var cursor: String?
    public init(
        capabilityId: String? = nil, actorId: String? = nil, status: String? = nil, limit: Int? = nil,
        cursor: String? = nil
    ) {
        self.capabilityId = capabilityId
        self.actorId = actorId
        self.status = status
        self.limit = limit
        self.cursor = cursor
    }

    var json: String {
        var o = JSONObject()
        if let capabilityId { o["capabilityId"] = .string(capabilityId) }
        if let actorId { o["actorId"] = .string(actorId) }
        if let status { o["status"] = .string(status) }
        if let limit { o["limit"] = .int(Int64(limit)) }
        if let cursor { o["cursor"] = .string(cursor) }
        return JSONValue.object(o).jsonText
    }
}

/// One audit record (camelCase JSON, schema in docs/decisions.md).
public struct AuditRecord: Sendable {
    public let json: JSONValue
    /// `started` or `finished`.
    public var event: String { json["event"]?.stringValue ?? "" }
    /// `ok`, `approval_required` or an error code; `nil` for `started`.
    public var outcome: String? { json["outcome"]?.stringValue }
}

/// How a governed call ended, when it did not fail.
public enum Outcome<Output: Sendable>: Sendable {
    case ok(Output)
    /// Stage 8 gated the call and the request is stored: approve it, then
    /// `resume` it. Not an error for the application.
    case approvalRequired(ApprovalRequest)

    public var value: Output? { if case .ok(let v) = self { return v }; return nil }
    public var approval: ApprovalRequest? { if case .approvalRequired(let r) = self { return r }; return nil }
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
    /// "noVerify" | {caPem}}` (see `core::host::postgres_options_from_json`).
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
