import Foundation
import OrpcAgentFFI

// `ErrorCode`, one case per core error code, is generated from the core
// (Generated/Protocol.swift; a drift test also compares the linked core).
extension ErrorCode {
    /// The `std:` error kind (`std:not-found`, `std:internal`, …), from the core.
    public var kind: String { errorKind(code: rawValue) ?? "std:internal" }
}

/// What every capability error carries besides its code. The message is
/// written for a model and never quotes unredacted data (SI-10).
public struct ErrorInfo: Sendable, Hashable {
    public var message: String
    /// Whether the caller may try again; `nil`: the code's default, the
    /// core's (only TIMEOUT is retryable), as in Node and Python — so
    /// `throw CapabilityError.timeout(ErrorInfo("upstream slow"))` is
    /// retried where the capability's retry policy allows. The error's
    /// `retryable` reads the resolved value.
    public var retryable: Bool?
    public var details: JSONValue?

    public init(_ message: String, retryable: Bool? = nil, details: JSONValue? = nil) {
        self.message = message
        self.retryable = retryable
        self.details = details
    }
}

/// A governed call's failure: one case per core error code, so callers can
/// `catch CapabilityError.policyDenied(let info)`. Handlers throw these too
/// to fail with their own code; any other thrown error becomes a generic
/// `executionFailed` whose message never reaches the caller.
public enum CapabilityError: Error, Sendable, Hashable, CustomStringConvertible {
    case notFound(ErrorInfo)
    case invalidInput(ErrorInfo)
    case policyDenied(ErrorInfo)
    case approvalRequired(ErrorInfo)
    case approvalNotFound(ErrorInfo)
    case approvalPending(ErrorInfo)
    case approvalRejected(ErrorInfo)
    case approvalExpired(ErrorInfo)
    case approvalConsumed(ErrorInfo)
    case approvalInvalid(ErrorInfo)
    case timeout(ErrorInfo)
    case cancelled(ErrorInfo)
    case executionFailed(ErrorInfo)
    case outputInvalid(ErrorInfo)
    case limitExceeded(ErrorInfo)
    case sessionNotFound(ErrorInfo)
    case credentialRequired(ErrorInfo)
    case `internal`(ErrorInfo)

    /// An error with `code`.
    public init(_ code: ErrorCode, _ info: ErrorInfo) {
        switch code {
        case .notFound: self = .notFound(info)
        case .invalidInput: self = .invalidInput(info)
        case .policyDenied: self = .policyDenied(info)
        case .approvalRequired: self = .approvalRequired(info)
        case .approvalNotFound: self = .approvalNotFound(info)
        case .approvalPending: self = .approvalPending(info)
        case .approvalRejected: self = .approvalRejected(info)
        case .approvalExpired: self = .approvalExpired(info)
        case .approvalConsumed: self = .approvalConsumed(info)
        case .approvalInvalid: self = .approvalInvalid(info)
        case .timeout: self = .timeout(info)
        case .cancelled: self = .cancelled(info)
        case .executionFailed: self = .executionFailed(info)
        case .outputInvalid: self = .outputInvalid(info)
        case .limitExceeded: self = .limitExceeded(info)
        case .sessionNotFound: self = .sessionNotFound(info)
        case .credentialRequired: self = .credentialRequired(info)
        case .internal: self = .internal(info)
        }
    }

    /// An error with `code` and `message`. Without `retryable`, the code's
    /// default from the core (TIMEOUT is retryable, as in Node and Python).
    public init(_ code: ErrorCode, _ message: String, retryable: Bool? = nil, details: JSONValue? = nil) {
        self.init(code, ErrorInfo(message, retryable: retryable, details: details))
    }

    public var code: ErrorCode {
        switch self {
        case .notFound: return .notFound
        case .invalidInput: return .invalidInput
        case .policyDenied: return .policyDenied
        case .approvalRequired: return .approvalRequired
        case .approvalNotFound: return .approvalNotFound
        case .approvalPending: return .approvalPending
        case .approvalRejected: return .approvalRejected
        case .approvalExpired: return .approvalExpired
        case .approvalConsumed: return .approvalConsumed
        case .approvalInvalid: return .approvalInvalid
        case .timeout: return .timeout
        case .cancelled: return .cancelled
        case .executionFailed: return .executionFailed
        case .outputInvalid: return .outputInvalid
        case .limitExceeded: return .limitExceeded
        case .sessionNotFound: return .sessionNotFound
        case .credentialRequired: return .credentialRequired
        case .internal: return .internal
        }
    }

    public var info: ErrorInfo {
        switch self {
        case .notFound(let i), .invalidInput(let i), .policyDenied(let i), .approvalRequired(let i),
            .approvalNotFound(let i), .approvalPending(let i), .approvalRejected(let i), .approvalExpired(let i),
            .approvalConsumed(let i), .approvalInvalid(let i), .timeout(let i), .cancelled(let i),
            .executionFailed(let i), .outputInvalid(let i), .limitExceeded(let i), .sessionNotFound(let i),
            .credentialRequired(let i), .internal(let i):
            return i
        }
    }

    public var message: String { info.message }
    /// Whether the caller may try again: the info's flag, or the code's
    /// default (the core's) when it names none.
    public var retryable: Bool { info.retryable ?? defaultRetryable(code: code.rawValue) }
    public var details: JSONValue? { info.details }
    public var description: String { "\(code.rawValue): \(message)" }

    /// Equal when code, message, details and the resolved `retryable` are:
    /// `.timeout(ErrorInfo("late"))` (no flag: the default) equals the same
    /// error as the core sends it (`retryable: true`).
    public static func == (a: CapabilityError, b: CapabilityError) -> Bool {
        a.code == b.code && a.message == b.message && a.details == b.details && a.retryable == b.retryable
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
        hasher.combine(details)
        hasher.combine(retryable)
    }

    /// `{code, message, retryable, kind, details?}`, as every binding shows it.
    public var json: JSONValue {
        var o = JSONObject()
        o["code"] = .string(code.rawValue)
        o["message"] = .string(message)
        o["retryable"] = .bool(retryable)
        o["kind"] = .string(code.kind)
        if let d = details { o["details"] = d }
        return .object(o)
    }

    /// An error as the core sent it. A code this mirror does not know is
    /// INTERNAL (the drift test keeps them equal); details that are not
    /// JSON make the error the typed INTERNAL of `CoreJSON`, never an error
    /// without them.
    init(code: String, message: String, retryable: Bool, detailsJson: String?) {
        var details: JSONValue?
        if let detailsJson {
            do { details = try CoreJSON.parse("error details", detailsJson) } catch {
                self = error as? CapabilityError ?? CapabilityError(.internal, internalMessage)
                return
            }
        }
        self.init(ErrorCode(rawValue: code) ?? .internal, ErrorInfo(message, retryable: retryable, details: details))
    }

    init(_ e: FfiErrorInfo) {
        self.init(code: e.code, message: e.message, retryable: e.retryable, detailsJson: e.detailsJson)
    }
}

/// One problem of a registry build: which capability (`nil` for runtime
/// options), the dotted field path, a stable code and a message.
public struct Problem: Sendable, Hashable, CustomStringConvertible {
    public let capability: String?
    public let path: String
    public let code: String
    public let message: String
    public var description: String { "\(capability ?? "<options>") \(path): \(code) — \(message)" }

    /// The build problems as the core wrote them, read strictly (`CoreJSON`).
    static func list(core text: String) throws -> [Problem] {
        try CoreJSON.array("registry problems", text).map { v in
            let p = try CoreObject("registry problem", v)
            return Problem(
                capability: try p.optionalString("capability"), path: try p.string("path"), code: try p.string("code"),
                message: try p.string("message"))
        }
    }
}

/// The registry could not be built. `problems` lists EVERY problem found,
/// not the first (SI-4: invalid metadata never serves).
public struct RegistryError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public let problems: [Problem]
    public var description: String { ([message] + problems.map { "  - \($0)" }).joined(separator: "\n") }
}

/// Maps an error thrown by the FFI layer to the Swift types above.
func liftError(_ error: Error) -> Error {
    switch error {
    case FfiError.Capability(let code, let message, let retryable, let detailsJson):
        return CapabilityError(code: code, message: message, retryable: retryable, detailsJson: detailsJson)
    case FfiError.Registry(let message, let problemsJson):
        do {
            return RegistryError(message: message, problems: try Problem.list(core: problemsJson))
        } catch {
            return error
        }
    case let e as CapabilityError: return e
    default:
        // A Rust panic caught by uniffi, or a conversion failure: never an abort.
        return CapabilityError(.internal, internalMessage)
    }
}

/// Runs an FFI call, mapping its errors.
func ffi<T>(_ body: () throws -> T) throws -> T {
    do { return try body() } catch { throw liftError(error) }
}

/// A call that ended ok (the handler ran, the outcome was audited `ok`)
/// whose output does not decode as the `Output` type the caller asked
/// `invoke` or `resume` for: the caller's type and the capability's output
/// (after redaction) differ. Not a `CapabilityError`: nothing in the call
/// failed, so do not run it again — read `output`, or ask for the type the
/// capability returns (or `JSONValue`).
public struct OutputTypeMismatch: Error, CustomStringConvertible, Sendable {
    /// The capability that ran.
    public let capabilityId: String
    /// The type the caller asked for.
    public let requestedType: String
    /// The output as JSON (`nil` only when it has no JSON form).
    public let output: JSONValue?

    public var description: String {
        "the call to '\(capabilityId)' succeeded, but its output does not decode as \(requestedType)"
    }
}
