import Foundation
import XCTest

@testable import OrpcAgent

/// Operators see what failed (issue 15 item 13): when a handler, validator,
/// redactor or host policy throws, the registry's `logger` gets the real
/// error, with the capability and the hook; the caller (and so the model)
/// gets only the core's error, which never carries its text.
final class OperatorLogTests: XCTestCase {
    /// An error whose text is what must not leave for the caller.
    struct StoreError: Error, CustomStringConvertible {
        var description: String { "connection to db.internal failed for user=admin password=hunter2" }
    }
    static let secret = "hunter2"

    let meta = AgentMeta(description: "Read.", expose: [.mcp: true], sideEffect: .read, risk: .low)
    let frame = Frame(surface: .mcp, actor: Actor(id: "ann"))

    func registry(_ capabilities: [Capability], policies: [Policy] = [], log: Locked<[OperatorFailure]>) throws
        -> CapabilityRegistry
    {
        try CapabilityRegistry(
            capabilities: capabilities,
            options: RegistryOptions(policies: policies, logger: OperatorLogger { f in log.with { $0.append(f) } }))
    }

    /// The call fails with `code` and nothing of the secret; the logger got
    /// one failure of `hook` for `capability`, with the real error.
    func assertLogged(
        _ code: ErrorCode, _ hook: OperatorFailure.Hook, of capability: String, _ log: Locked<[OperatorFailure]>,
        file: StaticString = #filePath, line: UInt = #line, _ call: () async throws -> Void
    ) async {
        do {
            try await call()
            XCTFail("the call succeeded", file: file, line: line)
        } catch let e as CapabilityError {
            XCTAssertEqual(e.code, code, "\(e)", file: file, line: line)
            for text in [e.description, e.message, e.json.jsonText, String(reflecting: e)] {
                XCTAssertFalse(
                    text.contains(Self.secret), "the caller got the error's text: \(text)", file: file, line: line)
            }
        } catch {
            XCTFail("not a CapabilityError: \(error)", file: file, line: line)
        }
        let got = log.with { $0 }
        XCTAssertEqual(got.count, 1, "\(got)", file: file, line: line)
        guard let f = got.first else { return }
        XCTAssertEqual(f.hook, hook, file: file, line: line)
        XCTAssertEqual(f.capabilityId, capability, file: file, line: line)
        XCTAssertTrue(f.error is StoreError, "\(f.error)", file: file, line: line)
        XCTAssertEqual(f.errorType, "StoreError", file: file, line: line)
        XCTAssertTrue(f.description.contains(Self.secret), f.description, file: file, line: line)
        XCTAssertTrue(f.description.contains("\"\(capability)\""), f.description, file: file, line: line)
    }

    func testAThrowingHandlerIsLoggedAndTheCallerGetsOnlyTheCoresError() async throws {
        let log = Locked<[OperatorFailure]>([])
        let reg = try registry(
            [Capability("crm.read", meta: meta) { (_: JSONValue, _) -> JSONValue in throw StoreError() }], log: log)
        await assertLogged(.executionFailed, .handler, of: "crm.read", log) {
            let _: Outcome<JSONValue> = try await reg.invoke("crm.read", input: [:] as JSONValue, frame: frame)
        }
    }

    func testTheApplicationsOwnCapabilityErrorIsItsAnswerNotAFailureToLog() async throws {
        let log = Locked<[OperatorFailure]>([])
        let reg = try registry(
            [
                Capability("crm.read", meta: meta) { (_: JSONValue, _) -> JSONValue in
                    throw CapabilityError(.notFound, "No such customer.")
                }
            ], log: log)
        await assertThrows(.notFound) {
            let _: Outcome<JSONValue> = try await reg.invoke("crm.read", input: [:] as JSONValue, frame: frame)
        }
        XCTAssertTrue(log.with { $0 }.isEmpty)
    }

    func testThrowingValidatorsAreLogged() async throws {
        let log = Locked<[OperatorFailure]>([])
        let reg = try registry(
            [
                Capability("in.check", meta: meta, validateInput: { (_: JSONValue) in throw StoreError() }) {
                    (x: JSONValue, _) in x
                },
                Capability("out.check", meta: meta, validateOutput: { (_: JSONValue) in throw StoreError() }) {
                    (x: JSONValue, _) in x
                },
            ], log: log)
        await assertLogged(.invalidInput, .inputValidator, of: "in.check", log) {
            let _: Outcome<JSONValue> = try await reg.invoke("in.check", input: [:] as JSONValue, frame: frame)
        }
        log.with { $0.removeAll() }
        await assertLogged(.outputInvalid, .outputValidator, of: "out.check", log) {
            let _: Outcome<JSONValue> = try await reg.invoke("out.check", input: [:] as JSONValue, frame: frame)
        }
    }

    func testThrowingRedactorsAreLogged() async throws {
        let log = Locked<[OperatorFailure]>([])
        let gated = AgentMeta(
            description: "Write.", expose: [.mcp: true], sideEffect: .write, risk: .high,
            approval: .init(required: true))
        let reg = try registry(
            [
                Capability("hr.read", meta: meta, redactOutput: { (_: JSONValue, _) in throw StoreError() }) {
                    (x: JSONValue, _) in x
                },
                Capability("hr.write", meta: gated, redactApprovalInput: { _, _ in throw StoreError() }) {
                    (x: JSONValue, _) in x
                },
            ], log: log)
        await assertLogged(.executionFailed, .outputRedactor, of: "hr.read", log) {
            let _: Outcome<JSONValue> = try await reg.invoke("hr.read", input: [:] as JSONValue, frame: frame)
        }
        log.with { $0.removeAll() }
        let pending: Outcome<JSONValue> = try await reg.invoke(
            "hr.write", input: ["pin": "1234"] as JSONValue, frame: frame)
        let request = try XCTUnwrap(pending.approval)
        await assertLogged(.executionFailed, .approvalInputRedactor, of: "hr.write", log) {
            _ = try await reg.approvalInput(request.id)
        }
    }

    /// An approval-input redactor that never settles holds no approval UI:
    /// past the capability's timeout (the core's bound) the view fails as a
    /// throwing one does, and the operator is told.
    func testAnApprovalInputRedactorThatNeverSettlesFailsTheViewAtItsBound() async throws {
        let log = Locked<[OperatorFailure]>([])
        let gated = AgentMeta(
            description: "Write.", expose: [.mcp: true], sideEffect: .write, risk: .high, timeoutMs: 200,
            approval: .init(required: true))
        let reg = try registry(
            [
                Capability(
                    "hr.write", meta: gated,
                    redactApprovalInput: { _, _ in
                        // Suspended for good, deaf to cancellation, using no thread.
                        await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
                        return .null
                    }
                ) { (x: JSONValue, _) in x }
            ], log: log)
        let pending: Outcome<JSONValue> = try await reg.invoke(
            "hr.write", input: ["pin": "1234"] as JSONValue, frame: frame)
        let request = try XCTUnwrap(pending.approval)
        do {
            _ = try await reg.approvalInput(request.id)
            XCTFail("the view of a redactor that never settled")
        } catch let e as CapabilityError {
            XCTAssertEqual(e.code, .executionFailed)
        }
        let got = log.with { $0 }
        XCTAssertEqual(got.map(\.hook), [.approvalInputRedactor])
        XCTAssertEqual(got.first?.capabilityId, "hr.write")
    }

    func testThrowingHostPoliciesAreLoggedWithTheirPlace() async throws {
        let log = Locked<[OperatorFailure]>([])
        let broken = HostPolicy(name: "fraud") { _ in throw StoreError() }
        let reg = try registry(
            [Capability("pay.read", meta: meta, policies: [.host(broken)]) { (x: JSONValue, _) in x }],
            policies: [.host(HostPolicy(name: "audit-only") { _ in .abstain })], log: log)
        await assertLogged(.policyDenied, .policy(runtime: false, index: 0, name: "fraud"), of: "pay.read", log) {
            let _: Outcome<JSONValue> = try await reg.invoke("pay.read", input: [:] as JSONValue, frame: frame)
        }
        let runtimeLog = Locked<[OperatorFailure]>([])
        let runtime = try registry(
            [Capability("pay.read", meta: meta) { (x: JSONValue, _) in x }], policies: [.host(broken)], log: runtimeLog)
        await assertLogged(.policyDenied, .policy(runtime: true, index: 0, name: "fraud"), of: "pay.read", runtimeLog) {
            let _: Outcome<JSONValue> = try await runtime.invoke("pay.read", input: [:] as JSONValue, frame: frame)
        }
    }

    func testTheLoggerCanBeTurnedOffAndTheLineNamesWhatFailed() async throws {
        let reg = try CapabilityRegistry(
            capabilities: [Capability("crm.read", meta: meta) { (_: JSONValue, _) -> JSONValue in throw StoreError() }],
            options: RegistryOptions(logger: .off))
        await assertThrows(.executionFailed) {
            let _: Outcome<JSONValue> = try await reg.invoke("crm.read", input: [:] as JSONValue, frame: frame)
        }
        let line = OperatorFailure(capabilityId: "crm.read", hook: .handler, error: StoreError()).description
        XCTAssertEqual(
            line,
            "orpc-agent: the handler of capability \"crm.read\" failed; the caller was only told that it failed: "
                + "StoreError: connection to db.internal failed for user=admin password=hunter2")
    }
}
