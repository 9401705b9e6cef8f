import Foundation
import OrpcAgentFFI

/// Step kinds: the core's `StepKind` integers (core/src/pipeline/step.rs).
enum StepKind: UInt8 {
    case validateInput = 1, evaluatePolicy, exportInput, persistApproval, consumeApproval, runHandler,
        askRetryOn, sleep, validateOutput, redactOutput, exportOutput, audit, done
}

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

extension CapabilityRegistry {
    /// The host loop of DESIGN §4: read the step kind, perform it in Swift,
    /// answer with one synchronous call that returns the next kind. No
    /// governance here: order, eligibility, deadlines and backoff all come
    /// from the core.
    func drive<Output: Decodable & Sendable>(
        _ inv: FfiInvocation, _ call: Call, _: Output.Type
    ) async throws -> Outcome<Output> {
        let clock = options.clock
        var kind = StepKind(rawValue: inv.stepKind()) ?? .done
        while kind != .done {
            let next: UInt8
            switch kind {
            case .validateInput:
                next = await validateInput(inv, call)
            case .evaluatePolicy:
                next = await evaluatePolicy(inv, call)
            case .exportInput:
                next = try ffi { try inv.answerInputExported(inputJson: try inputText(inv, call)) }
            case .runHandler:
                next = await runHandler(inv, call)
            case .askRetryOn:
                let retry = inv.retryError().map { error in
                    capability(inv, call)?.hooks.retryOn?(CapabilityError(error)) ?? false
                } ?? false
                next = inv.answerRetryOn(retry: retry)
            case .sleep:
                let until = clock.nowMs() + inv.sleepMs()
                do {
                    try await clock.sleep(untilMs: until)
                    next = inv.answerSlept(nowMs: clock.nowMs())
                } catch {
                    next = inv.answerCancelled(nowMs: clock.nowMs())
                }
            case .validateOutput:
                do {
                    guard let validate = capability(inv, call)?.hooks.validateOutput, let out = call.output else {
                        throw CapabilityError(.internal, "no output validator")
                    }
                    call.output = try await validate(out)
                    next = inv.answerOutputValid()
                } catch {
                    next = inv.answerOutputInvalid()
                }
            case .redactOutput:
                do {
                    guard let redact = capability(inv, call)?.hooks.redactOutput, let out = call.output else {
                        throw CapabilityError(.internal, "no output redactor")
                    }
                    let info = RedactionInfo(json: try inv.redactionInfoJson(), context: call.frame.context)
                    call.output = try await redact(out, info)
                    next = inv.answerRedacted()
                } catch {
                    next = inv.answerRedactorFailed()
                }
            case .exportOutput:
                let text = (try? call.output.map { try JSONBridge.text(of: $0) }) ?? nil
                next = try ffi { try inv.answerOutputExported(outputJson: text ?? "null") }
            case .audit:
                if let sink = options.audit, let text = inv.auditRecordJson(), let json = try? JSONValue(parsing: text) {
                    sink(AuditRecord(json: json))
                }
                next = inv.answerAudited()
            case .persistApproval, .consumeApproval:
                // Only a store that waits (PostgreSQL) hands its steps back:
                // the one async crossing; memory and SQLite run inside the
                // core's synchronous calls.
                next = await inv.storeStep(nowMs: clock.nowMs())
            case .done:
                throw CapabilityError(.internal, "the invocation already finished")
            }
            kind = StepKind(rawValue: next) ?? .done
        }
        switch inv.outcomeKind() {
        case 0, 1:
            let value: Any? = try inv.outcomeOutputJson().map { try JSONValue(parsing: $0) } ?? call.output
            do {
                return .ok(try JSONBridge.convert(value ?? JSONValue.null, to: Output.self))
            } catch {
                throw CapabilityError(.outputInvalid, "The output does not have the type the caller asked for.")
            }
        case 2:
            return .approvalRequired(try ApprovalRequest(json: try ffi { try inv.outcomeApprovalJson() } ?? "{}"))
        default:
            guard let e = inv.outcomeError() else { throw CapabilityError(.internal, "the invocation did not finish") }
            throw CapabilityError(e)
        }
    }

    /// The capability of the call: known at start for `invoke`, once the
    /// approval was consumed for `resume`.
    func capability(_ inv: FfiInvocation, _ call: Call) -> Capability? {
        if let c = call.capability { return c }
        guard let i = inv.capabilityIndex(), Int(i) < capabilities.count else { return nil }
        call.capability = capabilities[Int(i)]
        return call.capability
    }

    /// The input in the handler's type: converted/validated at stage 4, or
    /// converted now (no stage 4 for `JSONValue` handlers without a
    /// validator; on resume, from the stored JSON the core holds).
    func handlerInput(_ inv: FfiInvocation, _ call: Call, _ cap: Capability) throws -> any Sendable {
        if let v = call.input { return v }
        let v: any Sendable
        if let text = inv.inputJson() {
            v = try cap.hooks.acceptJSON(text)
        } else {
            v = try cap.hooks.accept(call.raw ?? JSONValue.null)
        }
        call.input = v
        return v
    }

    func inputText(_ inv: FfiInvocation, _ call: Call) throws -> String {
        guard let cap = capability(inv, call) else { throw CapabilityError(.internal, "no capability") }
        do { return try JSONBridge.text(of: try handlerInput(inv, call, cap)) } catch {
            throw CapabilityError(.invalidInput, "The input cannot be represented as JSON.")
        }
    }

    func validateInput(_ inv: FfiInvocation, _ call: Call) async -> UInt8 {
        guard let cap = capability(inv, call) else { return inv.answerInputInvalid(message: "no capability") }
        do {
            var v = try cap.hooks.accept(call.raw ?? JSONValue.null)
            if let validate = cap.hooks.validateInput { v = try await validate(v) }
            call.input = v
            return try ffi { try inv.answerInputValid(inputJson: nil) }
        } catch let e as CapabilityError {
            return inv.answerInputInvalid(message: e.message)
        } catch let e as DecodingError {
            return inv.answerInputInvalid(message: "The input does not match the capability's input type: \(describe(e))")
        } catch {
            return inv.answerInputInvalid(message: "The input is invalid: \(error)")
        }
    }

    func evaluatePolicy(_ inv: FfiInvocation, _ call: Call) async -> UInt8 {
        guard let at = inv.policyAt() else { return inv.answerPolicyFailed() }
        let list = at.runtime ? runtimePolicies : (capability(inv, call)?.hooks.policies ?? [])
        guard Int(at.index) < list.count, case .host(let policy) = list[Int(at.index)],
            let text = try? inputText(inv, call), let input = try? JSONValue(parsing: text)
        else { return inv.answerPolicyFailed() }
        let request = PolicyRequest(
            capabilityId: capability(inv, call)?.id ?? "", input: input, frame: call.frame)
        let clock = options.clock
        switch await race(clock: clock, deadlineMs: clock.nowMs() + at.timeoutMs, { try await policy.evaluate(request) }) {
        case .value(let d):
            let decision: FfiDecision
            switch d {
            case .allow: decision = .allow
            case .deny(let reason): decision = .deny(reason: reason)
            case .requireApproval(let type, let reason, let expires):
                decision = .requireApproval(approvalType: type, reason: reason, expiresInMs: expires)
            case .abstain: decision = .abstain
            }
            return inv.answerPolicy(decision: decision)
        case .failed, .timedOut, .cancelled:
            return inv.answerPolicyFailed()
        }
    }

    func runHandler(_ inv: FfiInvocation, _ call: Call) async -> UInt8 {
        let clock = options.clock
        guard let cap = capability(inv, call) else {
            return inv.answerHandlerError(code: nil, message: "no capability", retryable: false, nowMs: clock.nowMs())
        }
        let input: any Sendable
        do { input = try handlerInput(inv, call, cap) } catch {
            return inv.answerHandlerError(
                code: ErrorCode.invalidInput.rawValue, message: "The input does not match the capability's input type.",
                retryable: false, nowMs: clock.nowMs())
        }
        var frame = call.frame
        if call.resumed, let text = try? inv.frameJson(), let recorded = try? JSONValue(parsing: text) {
            frame.surface = Surface(rawValue: recorded["surface"]?.stringValue ?? "") ?? frame.surface
            frame.actor = (try? JSONBridge.convert(recorded["actor"] ?? .null, to: Actor.self)) ?? Actor()
        }
        let deadline = inv.deadlineAtMs()
        let context = HandlerContext(
            attempt: inv.attempt(), deadlineAtMs: deadline, capabilityId: cap.id, frame: frame,
            reporter: { done, total in inv.reportProgress(done: done, total: total).map { ProgressEvent(done: $0.done, total: $0.total) } })
        let handler = cap.hooks.handler
        switch await race(clock: clock, deadlineMs: deadline, { try await handler(input, context) }) {
        case .value(let out):
            call.output = out
            return inv.answerHandlerOk(nowMs: clock.nowMs())
        case .failed(let error as CapabilityError):
            return inv.answerHandlerError(
                code: error.code.rawValue, message: error.message, retryable: error.retryable, nowMs: clock.nowMs())
        case .failed(let error):
            // A plain throw: EXECUTION_FAILED with a generic message in the core.
            return inv.answerHandlerError(code: nil, message: "\(error)", retryable: false, nowMs: clock.nowMs())
        case .timedOut:
            return inv.answerHandlerTimedOut(nowMs: clock.nowMs())
        case .cancelled:
            return inv.answerCancelled(nowMs: clock.nowMs())
        }
    }
}

private func describe(_ e: DecodingError) -> String {
    switch e {
    case .keyNotFound(let k, _): return "missing field `\(k.stringValue)`"
    case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c):
        let path = c.codingPath.map(\.stringValue).joined(separator: ".")
        return path.isEmpty ? c.debugDescription : "`\(path)`: \(c.debugDescription)"
    @unknown default: return "\(e)"
    }
}
