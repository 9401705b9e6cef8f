import OrpcAgentFFI
import XCTest

@testable import OrpcAgent

/// The Swift error enum has exactly the core's codes, in the core's order.
final class ErrorCodeDriftTests: XCTestCase {
    func testErrorCodesEqualTheCore() {
        XCTAssertEqual(ErrorCode.allCases.map(\.rawValue), coreErrorCodes())
    }

    /// A handler's `CapabilityError(code, message)` is retryable by the
    /// core's default for its code, as in Node and Python: TIMEOUT yes.
    func testRetryableDefaultsAreTheCoresPerCode() {
        for code in ErrorCode.allCases {
            XCTAssertEqual(CapabilityError(code, "x").retryable, code == .timeout, code.rawValue)
        }
        XCTAssertFalse(CapabilityError(.timeout, "x", retryable: false).retryable)
        XCTAssertTrue(CapabilityError(.executionFailed, "x", retryable: true).retryable)
        // The enum-case form, with no flag: the same default.
        XCTAssertTrue(CapabilityError.timeout(ErrorInfo("upstream slow")).retryable)
        XCTAssertFalse(CapabilityError.executionFailed(ErrorInfo("x")).retryable)
        XCTAssertTrue(CapabilityError.timeout(ErrorInfo("x")).json["retryable"] == .bool(true))
        // Equal to the same error as the core sends it (the flag resolved).
        XCTAssertEqual(
            CapabilityError.timeout(ErrorInfo("x")), CapabilityError(.timeout, ErrorInfo("x", retryable: true)))
        XCTAssertNotEqual(CapabilityError.timeout(ErrorInfo("x")), CapabilityError(.timeout, "x", retryable: false))
        XCTAssertEqual(Set([CapabilityError.timeout(ErrorInfo("x")), CapabilityError(.timeout, "x")]).count, 1)
    }

    func testSurfacesEqualTheCoreInIndexOrder() {
        XCTAssertEqual(Surface.allCases.map(\.rawValue), surfaceNames())
        XCTAssertEqual(Surface.allCases.map(\.index), Array(0..<UInt8(Surface.allCases.count)))
    }

    /// The driver's mirror of the core's step kinds: same names, same numbers.
    func testStepKindsEqualTheCoreInNumericOrder() {
        let names = StepKind.allCases.map { k -> String in
            let s = "\(k)"
            return s.prefix(1).uppercased() + s.dropFirst()
        }
        XCTAssertEqual(names, stepKindNames())
        XCTAssertEqual(StepKind.allCases.map(\.rawValue), Array(1...UInt8(StepKind.allCases.count)))
    }

    /// A step kind the mirror does not know ends the call in INTERNAL, by
    /// the core (the invocation is over, nothing ran), never as done.
    func testAnUnknownStepKindEndsTheInvocationInInternal() async throws {
        let ran = Locked(0)
        let records = Locked<[AuditRecord]>([])
        let reg = try CapabilityRegistry(
            capabilities: [
                Capability(
                    "x.run", meta: AgentMeta(description: "Run.", expose: [.mcp: true], sideEffect: .read, risk: .low)
                ) {
                    (v: JSONValue, _) in
                    ran.with { $0 += 1 }
                    return v
                }
            ], options: RegistryOptions(audit: { r in records.with { $0.append(r) } }))
        let inv = try reg.core.start(
            capabilityIndex: 0, surface: Surface.mcp.index, details: nil, input: .opaque,
            nowMs: reg.options.clock.nowMs(), cancelled: false)
        // As if the core asked for a step this binding had never heard of.
        let unknown = StepKind.runHandler.rawValue
        let driver = Driver(
            registry: reg, inv: inv, call: Call(raw: JSONValue.null, frame: Frame(surface: .mcp), resumed: false),
            kinds: { $0 == unknown ? nil : StepKind(rawValue: $0) })
        await assertThrows(.internal) { let _: Outcome<JSONValue> = try await driver.run(JSONValue.self) }
        XCTAssertEqual(inv.stepKind(), StepKind.done.rawValue, "the core ended the invocation")
        XCTAssertEqual(inv.outcomeError()?.code, "INTERNAL")
        // The core's words, not the binding's (the core's ABANDONED_MESSAGE).
        XCTAssertEqual(inv.outcomeError()?.message, "The call could not be completed.")
        XCTAssertEqual(ran.with { $0 }, 0)
        // Its finished record is delivered once (it was left at the Audit
        // step, and the call never finished).
        XCTAssertEqual(records.with { $0.filter { $0.event == "finished" }.map { $0.outcome ?? "?" } }, ["INTERNAL"])
    }

    func testEveryCodeRoundTripsThroughTheErrorEnum() {
        for code in ErrorCode.allCases {
            let e = CapabilityError(code, "m")
            XCTAssertEqual(e.code, code)
            XCTAssertTrue(code.kind.hasPrefix("std:"), "\(code) kind \(code.kind)")
        }
        XCTAssertEqual(ErrorCode.notFound.kind, "std:not-found")
        XCTAssertEqual(ErrorCode.invalidInput.kind, "std:invalid-args")
    }
}
