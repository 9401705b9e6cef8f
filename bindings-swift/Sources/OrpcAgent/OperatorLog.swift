import Foundation

#if canImport(os)
    import os
#endif

/// What the operator is told when application code fails — a handler, an
/// input or output validator, a redactor or a host policy threw — or when
/// this binding could not read what the core sent. The caller and the
/// model never get this: they get the core's generic error (a plain
/// thrown error is EXECUTION_FAILED "…failed", a throwing policy denies);
/// the registry's `logger` gets the real error.
public struct OperatorFailure: Sendable, CustomStringConvertible {
    /// Which code failed.
    public enum Hook: Sendable, Hashable, CustomStringConvertible {
        /// The handler threw an error that is not a `CapabilityError`.
        case handler
        /// `validateInput` threw an error that is not a `CapabilityError`.
        case inputValidator
        /// `validateOutput` threw (the output is then OUTPUT_INVALID).
        case outputValidator
        /// `redactOutput` threw (the output is then dropped).
        case outputRedactor
        /// `redactApprovalInput` threw (`approvalInput` is then EXECUTION_FAILED).
        case approvalInputRedactor
        /// A host policy threw (it then denies): a runtime one
        /// (`RegistryOptions.policies`) or the capability's, by its position
        /// in the list the core runs and its name.
        case policy(runtime: Bool, index: Int, name: String?)
        /// Not application code: this binding could not read what the core
        /// sent (`what`); the call ended INTERNAL or failed closed.
        case coreData(String)

        public var description: String {
            switch self {
            case .handler: return "the handler"
            case .inputValidator: return "the input validator"
            case .outputValidator: return "the output validator"
            case .outputRedactor: return "the output redactor"
            case .approvalInputRedactor: return "the approval-input redactor"
            case .policy(let runtime, let index, let name):
                let named = name.map { " \"\($0)\"" } ?? ""
                return "\(runtime ? "runtime" : "capability") policy #\(index)\(named)"
            case .coreData(let what): return "reading the core's \(what)"
            }
        }
    }

    /// The capability of the call (`nil` when it was not known yet).
    public let capabilityId: String?
    public let hook: Hook
    /// The error as thrown: the operator's alone.
    public let error: any Error

    /// The error's type name (`StoreError`).
    public var errorType: String { String(describing: type(of: error)) }

    /// One line: what failed, of which capability, and the error.
    public var description: String {
        let of = capabilityId.map { " of capability \"\($0)\"" } ?? ""
        return "orpc-agent: \(hook)\(of) failed; the caller was only told that it failed: \(errorType): \(error)"
    }
}

/// Where a registry tells its operator what failed (`OperatorFailure`):
/// `RegistryOptions(logger:)`. `.standard` (the default) writes to
/// `os.Logger` where the `os` module exists (Apple platforms: subsystem
/// `orpc-agent`, category `failures`, the error's text at the default
/// private privacy), else a line on standard error; `.off` logs nothing;
/// `OperatorLogger { failure in … }` sends it wherever you log. Called on
/// whichever thread the failure settles on; it must be thread-safe and
/// should return quickly.
public struct OperatorLogger: Sendable {
    public let log: @Sendable (OperatorFailure) -> Void

    public init(_ log: @escaping @Sendable (OperatorFailure) -> Void) {
        self.log = log
    }

    /// Logs nothing.
    public static let off = OperatorLogger { _ in }

    /// One line per failure on standard error.
    public static let standardError = OperatorLogger { failure in
        FileHandle.standardError.write(Data((failure.description + "\n").utf8))
    }

    /// `os.Logger` where the `os` module exists, else `standardError`.
    public static let standard: OperatorLogger = {
        #if canImport(os)
            if #available(macOS 11.0, iOS 14.0, tvOS 14.0, watchOS 7.0, *) {
                let logger = os.Logger(subsystem: "orpc-agent", category: "failures")
                return OperatorLogger { f in
                    let of = f.capabilityId ?? "?"
                    logger.warning(
                        "orpc-agent: \(f.hook.description, privacy: .public) of capability \(of, privacy: .public) failed; the caller was only told that it failed: \(f.errorType, privacy: .public): \(String(describing: f.error))"
                    )
                }
            }
        #endif
        return standardError
    }()
}
