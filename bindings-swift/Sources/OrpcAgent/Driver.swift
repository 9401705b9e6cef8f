import Foundation
import OrpcAgentFFI

// `StepKind`, the core's step integers, is generated from the core
// (Generated/Protocol.swift), with `doneOkHost`, what the glue returns in
// place of `done` when the call ended ok with the output Swift holds. A
// drift test also compares names and numbers with the linked core
// (`stepKindNames()`); a kind this mirror does not know ends the call in
// INTERNAL (`abandon`), never as done.

/// What the driver keeps of one call while the core holds the rest.
final class Call: @unchecked Sendable {
    /// The caller's input as given (invoke), until stage 4 converts it.
    let raw: Any?
    /// The input as the handler's type, once converted/validated.
    var input: (any Sendable)?
    var output: (any Sendable)?
    let frame: Frame
    let resumed: Bool
    var capability: Capability?

    init(raw: Any?, frame: Frame, resumed: Bool) {
        self.raw = raw
        self.frame = frame
        self.resumed = resumed
    }
}

/// One invocation's host loop (DESIGN §4): read the step kind, perform it
/// in Swift, answer with one synchronous call that returns the next kind.
/// No governance here: order, eligibility, deadlines and backoff all come
/// from the core.
///
/// Where code runs. The loop runs on the calling task (its executor, the
/// cooperative pool for most callers); handlers, validators, redactors and
/// host policies are async closures on Swift's global executor, each in its
/// own task. Each is raced against its deadline (a handler's, a policy's
/// timeout, the call's for validators and redactors: `bounded`) and the
/// caller's cancellation, and whichever comes first settles the step on
/// the thread it arrives on — the timer's (`SystemClock`: a dispatch queue,
/// never the cooperative pool), the cancelling one, the work's — answering
/// the core (every answer carries the clock's time, so the core decides
/// whether a deadline passed) and performing the
/// steps that need no await after it (retry verdict, exports, audit
/// records) before the loop resumes. So with every pool thread blocked by
/// handlers, a call still ends at its deadline: TIMEOUT decided and audited
/// then; only the caller's own task waits for a thread to resume on. (On
/// Swift 6.2 a hook starts on the caller's thread, `startTask`: one that
/// blocks before it first suspends holds that thread until it stops.)
/// Only one side touches the call at a time: the loop is suspended while a
/// winner settles.
final class Driver: @unchecked Sendable {
    let registry: CapabilityRegistry
    let inv: FfiInvocation
    let call: Call
    /// Reads a step kind (tests give one that does not know some kinds).
    let kinds: @Sendable (UInt8) -> StepKind?

    init(
        registry: CapabilityRegistry, inv: FfiInvocation, call: Call,
        kinds: @escaping @Sendable (UInt8) -> StepKind? = { StepKind(rawValue: $0) }
    ) {
        self.registry = registry
        self.inv = inv
        self.call = call
        self.kinds = kinds
    }

    var options: RegistryOptions { registry.options }

    /// Runs the invocation to its outcome.
    func run<Output: Decodable & Sendable>(_: Output.Type) async throws -> Outcome<Output> {
        let clock = options.clock
        var next = inv.stepKind()
        loop: while true {
            // Done, ok, and Swift holds the output: nothing to read.
            if next == doneOkHost { break }
            guard let kind = kinds(next) else {
                // A step this mirror does not know: the core ends the call,
                // and the finished record it owes is delivered.
                _ = advanceSync(inv.abandon(nowMs: clock.nowMs()))
                break
            }
            switch kind {
            case .done:
                break loop
            case .validateInput:
                next = await validateInput()
            case .evaluatePolicy:
                next = await evaluatePolicy()
            case .exportInput, .askRetryOn, .exportOutput, .audit:
                next = advanceSync(next)
            case .runHandler:
                next = await runHandler()
            case .sleep:
                let until = clock.nowMs().addingSaturated(inv.sleepMs())
                do {
                    try await clock.sleep(untilMs: until)
                    next = inv.answer(.slept, nowMs: clock.nowMs())
                } catch {
                    next = inv.answer(.cancelled, nowMs: clock.nowMs())
                }
            case .validateOutput:
                next = await validateOutput()
            case .redactOutput:
                next = await redactOutput()
            case .persistApproval, .consumeApproval:
                // Only a store that waits (PostgreSQL) hands its steps back:
                // the one async crossing; memory and SQLite run inside the
                // core's synchronous calls.
                next = await inv.storeStep(nowMs: clock.nowMs())
            }
        }
        let outcome = next == doneOkHost ? .okHost : OutcomeCode(rawValue: inv.outcomeKind())
        switch outcome {
        case .okHost, .okJson:
            // Swift holds the output, or the core holds it as JSON (only
            // then is it fetched: a crossing that returns a string costs).
            let value: Any
            if outcome == .okJson, let text = inv.outcomeOutputJson() {
                value = try CoreJSON.parse("output", text)
            } else if let out = call.output {
                value = out
            } else {
                throw CoreJSON.malformed("outcome", field: "output", expected: "present")
            }
            do {
                return .ok(try JSONBridge.convert(value, to: Output.self))
            } catch {
                // The call ended ok (audited so): only reading its output as
                // the caller's type failed. Not a capability error, so no
                // caller takes it for a failed call and runs it again; the
                // output is handed over as JSON (nothing is lost).
                throw OutputTypeMismatch(
                    capabilityId: capability()?.id ?? "", requestedType: String(describing: Output.self),
                    output: try? JSONValue(parsing: JSONBridge.text(of: value)))
            }
        case .approvalRequired:
            guard let request = inv.outcomeApproval() else {
                throw CoreJSON.malformed("outcome", field: "approval request", expected: "present")
            }
            return .approvalRequired(try ApprovalRequest(core: request))
        default:
            guard let e = inv.outcomeError() else { throw CapabilityError(.internal, "the invocation did not finish") }
            throw CapabilityError(e)
        }
    }

    /// Performs, from `next`, the steps that need no await — the retry
    /// verdict, the exports, the audit records — until one that does (or
    /// Done, or a kind this mirror does not know); returns its kind. Run by
    /// the loop, and by whoever settles a race (see the type's doc).
    func advanceSync(_ next: UInt8) -> UInt8 {
        let clock = options.clock
        var next = next
        while let kind = kinds(next) {
            switch kind {
            case .askRetryOn:
                let retry =
                    inv.retryError().map { error in
                        capability()?.hooks.retryOn?(CapabilityError(error)) ?? false
                    } ?? false
                next = inv.answer(.retryOn, flag: retry, nowMs: clock.nowMs())
            case .exportInput:
                next = exportInput()
            case .exportOutput:
                // An output with no JSON form is recorded as null (the core's rule).
                var text: String?
                if let out = call.output, case .json(let t, nil) = HostJSON.export(out) { text = t }
                next = inv.answer(.outputExported, text: text, nowMs: clock.nowMs())
            case .audit:
                if let sink = options.audit {
                    do {
                        guard let record = inv.auditRecord() else {
                            throw CoreJSON.malformed("audit record", field: nil, expected: "present")
                        }
                        sink(try AuditRecord(core: record))
                    } catch {
                        // A record that does not read as the core's is not
                        // delivered in some other shape; the operator is told.
                        report(.coreData("audit record"), error)
                    }
                }
                next = inv.answer(.audited, nowMs: clock.nowMs())
            default:
                return next
            }
        }
        return next
    }

    /// Tells the operator that `hook` failed with `error` (`OperatorFailure`).
    func report(_ hook: OperatorFailure.Hook, _ error: any Error) {
        options.logger.log(OperatorFailure(capabilityId: capability()?.id, hook: hook, error: error))
    }

    /// The capability of the call: known at start for `invoke`, once the
    /// approval was consumed for `resume`.
    func capability() -> Capability? {
        if let c = call.capability { return c }
        let capabilities = registry.capabilities
        guard let i = inv.capabilityIndex(), Int(i) < capabilities.count else { return nil }
        call.capability = capabilities[Int(i)]
        return call.capability
    }
}

extension FfiInvocation {
    /// An answer without text by its code; `flag` is `RetryOn`'s verdict.
    func answer(_ code: AnswerCode, flag: Bool = false, nowMs: UInt64) -> UInt8 {
        answer(code: code.rawValue, flag: flag, nowMs: nowMs)
    }

    /// A host policy's decision by its code, with the fields it has.
    func answerPolicy(
        _ code: DecisionCode, reason: String? = nil, approvalType: String? = nil, expiresInMs: UInt64? = nil,
        nowMs: UInt64
    ) -> UInt8 {
        answerPolicy(
            code: code.rawValue, reason: reason, approvalType: approvalType, expiresInMs: expiresInMs, nowMs: nowMs)
    }

    /// An answer with its text (a message for the model, issues or an
    /// output as JSON: `ffi::answer` says which).
    func answer(_ code: AnswerCode, text: String?, nowMs: UInt64) -> UInt8 {
        answerText(code: code.rawValue, text: text, nowMs: nowMs)
    }
}

extension UInt64 {
    /// `self + other`, at most `UInt64.max` (a clock an app gives may read
    /// near it): as the core's `saturating_add`, never a trap.
    func addingSaturated(_ other: UInt64) -> UInt64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }
}
