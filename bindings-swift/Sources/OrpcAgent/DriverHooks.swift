// The driver's steps that await application code against a deadline
// (`Driver` is in Driver.swift; the race itself in Race.swift): a host
// policy, the handler, the output validator and redactor.

import Foundation
import OrpcAgentFFI

extension Driver {
    func evaluatePolicy() async -> UInt8 {
        let clock = options.clock
        guard let at = inv.policyAt() else { return inv.answer(.policyFailed, nowMs: clock.nowMs()) }
        let list = at.runtime ? registry.runtimePolicies : (capability()?.hooks.policies ?? [])
        // The frame as the core holds it (stage 3 dropped an empty id or an
        // invalid trace), with the caller's context: what every binding's
        // policies are shown. One that does not convert fails the policy.
        guard let cap = capability(), Int(at.index) < list.count, case .host(let policy) = list[Int(at.index)],
            let input = policyInput(), let frame = try? call.frame.withRecorded(inv.frame())
        else { return inv.answer(.policyFailed, nowMs: clock.nowMs()) }
        let request = PolicyRequest(capabilityId: cap.id, input: input, frame: frame)
        let inv = self.inv
        let logger = options.logger
        let hook = OperatorFailure.Hook.policy(runtime: at.runtime, index: Int(at.index), name: policy.name)
        return await race(
            deadlineMs: clock.nowMs().addingSaturated(at.timeoutMs), { try await policy.evaluate(request) }
        ) { raced in
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
                    code: error.code.rawValue, message: error.message, retryable: error.retryable,
                    detailsJson: error.details?.exactJSONText, nowMs: clock.nowMs())
            case .failed(let error):
                // A plain throw: EXECUTION_FAILED with a generic message in
                // the core; the real error goes to the operator only.
                logger.log(OperatorFailure(capabilityId: cap.id, hook: .handler, error: error))
                // A plain error: only its type reaches the core (the audit record's
                // `failure`); its description may quote data and goes to the logger.
                return inv.answerHandlerError(
                    code: nil, message: String(describing: type(of: error)), retryable: false, detailsJson: nil,
                    nowMs: clock.nowMs())
            case .timedOut:
                return inv.answer(.handlerTimedOut, nowMs: clock.nowMs())
            case .cancelled:
                return inv.answer(.cancelled, nowMs: clock.nowMs())
            }
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
            outputHookSettled(raced, ok: .outputValid, failed: .outputInvalid, hook: .outputValidator)
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
            outputHookSettled(raced, ok: .redacted, failed: .redactorFailed, hook: .outputRedactor)
        }
    }

    /// How an output validator's or redactor's race settles: its value
    /// replaces the output; on a failure (reported to the operator only:
    /// its text may quote the unredacted output), past the deadline, or
    /// when the caller cancelled, the output is dropped.
    func outputHookSettled<T: Sendable>(
        _ raced: Raced<T>, ok: AnswerCode, failed: AnswerCode, hook: OperatorFailure.Hook
    ) -> UInt8 {
        let clock = options.clock
        switch raced {
        case .value(let v):
            call.output = v
            return inv.answer(ok, nowMs: clock.nowMs())
        case .failed(let error):
            call.output = nil
            report(hook, error)
            return inv.answer(failed, nowMs: clock.nowMs())
        case .timedOut:
            call.output = nil
            return inv.answer(.deadlinePassed, nowMs: clock.nowMs())
        case .cancelled:
            call.output = nil
            return inv.answer(.cancelled, nowMs: clock.nowMs())
        }
    }
}
