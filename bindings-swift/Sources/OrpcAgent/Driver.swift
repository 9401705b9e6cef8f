import Foundation
import OrpcAgentFFI

// `StepKind`, the core's step integers, is generated from the core
// (Generated/Protocol.swift). A drift test also compares names and numbers
// with the linked core (`stepKindNames()`); a kind this mirror does not
// know ends the call in INTERNAL (`abandon`), never as done.

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
                let until = clock.nowMs() + inv.sleepMs()
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
        let outcome = OutcomeCode(rawValue: inv.outcomeKind())
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

    /// The input in the handler's type: converted/validated at stage 4, or
    /// converted now (no stage 4 for `JSONValue` handlers without a
    /// validator; on resume, from the stored JSON the core holds — on a
    /// fresh call the core never holds it: this driver answers
    /// `InputValid` without JSON).
    func handlerInput(_ cap: Capability) throws -> any Sendable {
        if let v = call.input { return v }
        let v: any Sendable
        if call.resumed, let text = inv.inputJson() {
            v = try cap.hooks.acceptJSON(text)
        } else {
            v = try cap.hooks.accept(call.raw ?? JSONValue.null)
        }
        call.input = v
        return v
    }

    /// `ValidateInput`: the conversion to the handler's type, then the
    /// validator, raced against the call's deadline (`bounded`).
    func validateInput() async -> UInt8 {
        let clock = options.clock
        guard let cap = capability() else {
            return inv.abandon(nowMs: clock.nowMs())
        }
        let v: any Sendable
        do {
            v = try cap.hooks.accept(call.raw ?? JSONValue.null)
        } catch {
            return inputRefused(error, validating: false)
        }
        guard let validate = cap.hooks.validateInput else { return inputValid(v) }
        return await bounded({ try await validate(v) }) { [self] raced in
            switch raced {
            case .value(let v): return inputValid(v)
            case .failed(let error): return inputRefused(error, validating: true)
            case .timedOut: return inv.answer(.deadlinePassed, nowMs: clock.nowMs())
            // The caller cancelled: the core ends the call (CANCELLED).
            case .cancelled: return inv.answer(.cancelled, nowMs: clock.nowMs())
            }
        }
    }

    func inputValid(_ v: any Sendable) -> UInt8 {
        let now = options.clock.nowMs()
        call.input = v
        return inv.answer(.inputValid, nowMs: now)
    }

    /// The conversion or the validator threw.
    func inputRefused(_ error: any Error, validating: Bool) -> UInt8 {
        let now = options.clock.nowMs()
        switch error {
        case let e as CapabilityError:
            return inv.answer(.inputInvalid, text: e.message, nowMs: now)
        case let e as DecodingError:
            // Where and what, never the value (a `dataCorrupted` description
            // can quote it): the core writes the model's message (SI-10).
            return inv.answer(.inputIssues, text: InputIssue.json([InputIssue(of: e)]), nowMs: now)
        default:
            // A plain error: the core's generic message (its text may quote
            // the input); the operator gets the error.
            if validating { report(.inputValidator, error) }
            return inv.answer(.inputValidatorFailed, nowMs: now)
        }
    }

    /// `ValidateOutput`, raced against the call's deadline (`bounded`). Past
    /// it, or on any failure, the unvalidated output is dropped.
    func validateOutput() async -> UInt8 {
        let clock = options.clock
        guard let validate = capability()?.hooks.validateOutput, let out = call.output else {
            report(.outputValidator, CapabilityError(.internal, "no output validator"))
            call.output = nil
            return inv.answer(.outputInvalid, nowMs: clock.nowMs())
        }
        return await bounded({ try await validate(out) }) { [self] raced in
            switch raced {
            case .value(let v):
                call.output = v
                return inv.answer(.outputValid, nowMs: clock.nowMs())
            case .failed(let error):
                call.output = nil
                // Its text may quote the unredacted output: the operator's alone.
                report(.outputValidator, error)
                return inv.answer(.outputInvalid, nowMs: clock.nowMs())
            case .timedOut:
                call.output = nil
                return inv.answer(.deadlinePassed, nowMs: clock.nowMs())
            case .cancelled:
                call.output = nil
                return inv.answer(.cancelled, nowMs: clock.nowMs())
            }
        }
    }

    /// `RedactOutput`, raced against the call's deadline (`bounded`). Past
    /// it, or on any failure, the unredacted output is dropped.
    func redactOutput() async -> UInt8 {
        let clock = options.clock
        let info: RedactionInfo
        do {
            info = try RedactionInfo(core: inv.redactionInfo(), context: call.frame.context)
        } catch {
            // Never a redactor told a default surface or actor: the output is dropped.
            report(.coreData("redaction info"), error)
            call.output = nil
            return inv.answer(.redactorFailed, nowMs: clock.nowMs())
        }
        guard let redact = capability()?.hooks.redactOutput, let out = call.output else {
            report(.outputRedactor, CapabilityError(.internal, "no output redactor"))
            call.output = nil
            return inv.answer(.redactorFailed, nowMs: clock.nowMs())
        }
        return await bounded({ try await redact(out, info) }) { [self] raced in
            switch raced {
            case .value(let v):
                call.output = v
                return inv.answer(.redacted, nowMs: clock.nowMs())
            case .failed(let error):
                call.output = nil
                report(.outputRedactor, error)
                return inv.answer(.redactorFailed, nowMs: clock.nowMs())
            case .timedOut:
                call.output = nil
                return inv.answer(.deadlinePassed, nowMs: clock.nowMs())
            case .cancelled:
                call.output = nil
                return inv.answer(.cancelled, nowMs: clock.nowMs())
            }
        }
    }

    /// Runs a validator or redactor against the call's deadline (the
    /// core's `call_deadline_ms`, the instant the handler's deadline is
    /// too): one still running then is answered `DeadlinePassed` and the
    /// core ends the call in TIMEOUT, so a hook that never returns cannot
    /// hold the call (it is cancelled and not awaited, like a handler).
    func bounded<T: Sendable>(
        _ work: @escaping @Sendable () async throws -> T, answer: @escaping @Sendable (Raced<T>) -> UInt8
    ) async -> UInt8 {
        await race(deadlineMs: inv.callDeadlineMs(), work, answer: answer)
    }

    /// `ExportInput`: the validated input as the core reads it, measured;
    /// one with no JSON form ends the call in the core (INVALID_INPUT,
    /// audited).
    func exportInput() -> UInt8 {
        let clock = options.clock
        guard let cap = capability() else { return inv.answer(.inputNotExportable, text: nil, nowMs: clock.nowMs()) }
        do {
            let input = HostJSON.export(try handlerInput(cap))
            return inv.answerInputExported(input: input, nowMs: clock.nowMs())
        } catch {
            return inv.answer(.inputNotExportable, text: (error as? CapabilityError)?.message, nowMs: clock.nowMs())
        }
    }

    /// What a host policy sees: the validated input as a `JSONValue` — as
    /// is when it is one (a NaN stays a NaN), else through its JSON form;
    /// `nil` when it has none (the policy then fails, which denies).
    func policyInput() -> JSONValue? {
        guard let cap = capability(), let v = try? handlerInput(cap) else { return nil }
        if let j = v as? JSONValue { return j }
        guard case .json(let text, nil) = HostJSON.export(v) else { return nil }
        return try? JSONValue(parsing: text)
    }

    func evaluatePolicy() async -> UInt8 {
        let clock = options.clock
        guard let at = inv.policyAt() else { return inv.answer(.policyFailed, nowMs: clock.nowMs()) }
        let list = at.runtime ? registry.runtimePolicies : (capability()?.hooks.policies ?? [])
        guard let cap = capability(), Int(at.index) < list.count, case .host(let policy) = list[Int(at.index)],
            let input = policyInput()
        else { return inv.answer(.policyFailed, nowMs: clock.nowMs()) }
        let request = PolicyRequest(capabilityId: cap.id, input: input, frame: call.frame)
        let inv = self.inv
        let logger = options.logger
        let hook = OperatorFailure.Hook.policy(runtime: at.runtime, index: Int(at.index), name: policy.name)
        return await race(deadlineMs: clock.nowMs() + at.timeoutMs, { try await policy.evaluate(request) }) { raced in
            switch raced {
            case .value(let d):
                let now = clock.nowMs()
                switch d {
                case .allow:
                    return inv.answerPolicy(DecisionCode.allow, nowMs: now)
                case .deny(let reason):
                    return inv.answerPolicy(DecisionCode.deny, reason: reason, nowMs: now)
                case .requireApproval(let type, let reason, let expires):
                    return inv.answerPolicy(
                        DecisionCode.requireApproval, reason: reason, approvalType: type, expiresInMs: expires,
                        nowMs: now)
                case .abstain:
                    return inv.answerPolicy(DecisionCode.abstain, nowMs: now)
                }
            case .failed(let error):
                logger.log(OperatorFailure(capabilityId: cap.id, hook: hook, error: error))
                return inv.answer(.policyFailed, nowMs: clock.nowMs())
            case .timedOut:
                return inv.answer(.policyFailed, nowMs: clock.nowMs())
            case .cancelled:
                // The caller cancelled: the core ends the call (CANCELLED).
                return inv.answer(.cancelled, nowMs: clock.nowMs())
            }
        }
    }

    func runHandler() async -> UInt8 {
        let clock = options.clock
        guard let cap = capability() else {
            return inv.abandon(nowMs: clock.nowMs())
        }
        let input: any Sendable
        do { input = try handlerInput(cap) } catch {
            // A capability that declares no validator has no stage 4 to
            // convert at, so the input is converted here. One that does not
            // convert is the core's to judge: a fresh call's input refused in
            // its words, or a resumed call's approved input that no longer
            // fits the handler's type (a request made before it changed).
            return inputRefused(error, validating: false)
        }
        var frame = call.frame
        if call.resumed {
            // The recorded surface and actor (SI-3), or no handler at all:
            // never the resumer's surface or an anonymous actor instead.
            do {
                frame = try frame.withRecorded(inv.frame())
            } catch {
                report(.coreData("recorded frame"), error)
                return inv.abandon(nowMs: clock.nowMs())
            }
        }
        let deadline = inv.deadlineAtMs()
        let inv = self.inv
        let context = HandlerContext(
            attempt: inv.attempt(), deadlineAtMs: deadline, capabilityId: cap.id, frame: frame,
            reporter: { done, total in
                inv.reportProgress(done: done, total: total).map { ProgressEvent(done: $0.done, total: $0.total) }
            })
        let handler = cap.hooks.handler
        let call = self.call
        let logger = options.logger
        return await race(deadlineMs: deadline, { try await handler(input, context) }) { raced in
            switch raced {
            case .value(let out):
                call.output = out
                return inv.answer(.handlerOk, nowMs: clock.nowMs())
            case .failed(let error as CapabilityError):
                return inv.answerHandlerError(
                    code: error.code.rawValue, message: error.message, retryable: error.retryable, nowMs: clock.nowMs())
            case .failed(let error):
                // A plain throw: EXECUTION_FAILED with a generic message in
                // the core; the real error goes to the operator only.
                logger.log(OperatorFailure(capabilityId: cap.id, hook: .handler, error: error))
                // A plain error: only its type reaches the core (the audit record's
                // `failure`); its description may quote data and goes to the logger.
                return inv.answerHandlerError(
                    code: nil, message: String(describing: type(of: error)), retryable: false, nowMs: clock.nowMs())
            case .timedOut:
                return inv.answer(.handlerTimedOut, nowMs: clock.nowMs())
            case .cancelled:
                return inv.answer(.cancelled, nowMs: clock.nowMs())
            }
        }
    }

    /// Runs `work` in its own task against a timer at `deadlineMs` and the
    /// caller's cancellation; returns the next step kind. The first of them
    /// wins and settles: `answer` tells the core, then the steps that need
    /// no await are performed (`advanceSync`), on the winner's thread; the
    /// others are cancelled and NOT awaited, so a handler that ignores
    /// cancellation cannot hold the call past its deadline (SI-9), and a
    /// busy executor cannot delay the deadline's outcome. (Where the work
    /// starts on this thread, `startTask`, one that blocks before it first
    /// suspends holds this thread, so the caller returns when it stops;
    /// its outcome is still the deadline's, decided and audited then.)
    func race<T: Sendable>(
        deadlineMs: UInt64?, _ work: @escaping @Sendable () async throws -> T,
        answer: @escaping @Sendable (Raced<T>) -> UInt8
    ) async -> UInt8 {
        let first = FirstOf<UInt8>()
        let clock = options.clock
        let settle: @Sendable (Raced<T>) -> Void = { [self] raced in first.finish { advanceSync(answer(raced)) } }
        return await withTaskCancellationHandler {
            // The timer first: the work may run on this thread until it
            // first suspends (`startTask`), and one that blocks there must
            // still be settled at its deadline.
            if let deadlineMs { first.arm(clock.schedule(atMs: deadlineMs) { settle(.timedOut) }) }
            // Settled already (the caller was cancelled): no work starts.
            if !first.isFinished {
                first.started(
                    startTask {
                        do { settle(.value(try await work())) } catch { settle(.failed(error)) }
                    })
            }
            // Settled on this thread (the work did not suspend): no await.
            if let v = first.takeEarly() { return v }
            // Unsafe is sound here: FirstOf resumes exactly once.
            return await withUnsafeContinuation { first.attach($0) }
        } onCancel: {
            settle(.cancelled)
        }
    }
}

/// Starts `body` in a task of its own, which the caller can abandon at a
/// deadline (SI-9). Where the toolchain and the OS have `Task.immediate`
/// (Swift 6.2; macOS/iOS 26), the task starts on the calling thread and
/// runs there until it first suspends: a handler that answers without
/// suspending costs no hand-off to another thread (the wake-up of an idle
/// worker was most of a call). A handler that blocks its thread before it
/// first suspends delays its caller as it would in Node; its late answer is
/// still the core's TIMEOUT (every answer carries the time), decided and
/// audited at the deadline by the timer. Elsewhere, `Task { }`.
func startTask(_ body: sending @escaping () async -> Void) -> Task<Void, Never> {
    #if compiler(>=6.2)
        if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
            return Task.immediate(operation: body)
        }
    #endif
    return Task(operation: body)
}

/// A decoding failure as an input issue: the coding path and a message
/// made from the failure's kind and the expected type only.
/// One problem the conversion of an input found: where (keys and indices
/// from the root) and what, never the value. The core writes the model's
/// message from a list of them (`ffi::answer_code::INPUT_ISSUES`).
private struct InputIssue: Encodable {
    let path: [String]
    let message: String

    init(path: [String], message: String) {
        self.path = path
        self.message = message
    }

    init(of e: DecodingError) {
        let path = { (c: DecodingError.Context) in c.codingPath.map(\.stringValue) }
        switch e {
        case .keyNotFound(let k, let c): self.init(path: path(c) + [k.stringValue], message: "Required")
        case .typeMismatch(let type, let c): self.init(path: path(c), message: "Expected \(type)")
        case .valueNotFound(let type, let c): self.init(path: path(c), message: "Expected \(type), found null")
        case .dataCorrupted(let c): self.init(path: path(c), message: "Not a valid value here")
        @unknown default: self.init(path: [], message: "Does not match the input type")
        }
    }

    /// The issues as the core reads them; `nil` (no answer the core can
    /// read: INTERNAL) only if strings failed to encode.
    static func json(_ issues: [InputIssue]) -> String? {
        (try? JSONEncoder().encode(issues)).map { String(decoding: $0, as: UTF8.self) }
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
