// The driver's input steps (`Driver` is in Driver.swift): the input in
// the handler's type, stage 4's conversion and validator, its export
// for the core, and the view a host policy gets; and the input issues
// a failed conversion reports. Kept apart from the loop so each file
// reads as one concern.

import Foundation
import OrpcAgentFFI

extension Driver {
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
}

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

    /// A decoding failure as an input issue: the coding path and a message
    /// made from the failure's kind and the expected type only.
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
