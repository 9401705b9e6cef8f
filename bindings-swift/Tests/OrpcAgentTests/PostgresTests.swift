import Foundation
import XCTest

@testable import OrpcAgent

/// The PostgreSQL approval store through the Swift API, against the real
/// server `make test-postgres-swift` starts on the host's loopback (the
/// chroot shares the network namespace). Without ORPC_AGENT_TEST_PG_URL
/// these tests are skipped with the reason — unless
/// ORPC_AGENT_REQUIRE_PG=1 (that make target), where they fail instead.
final class PostgresTests: XCTestCase {
    /// The orders app of bindings-node/test/postgres/app.mjs and
    /// bindings-python/tests_postgres/app.py: same ids, same input shape.
    struct Refund: Codable, Sendable {
        let id: String
        let amount: Double
    }
    struct Refunded: Codable, Sendable, Equatable {
        let refunded: String
        let amount: Double
    }

    func url() throws -> String {
        let env = ProcessInfo.processInfo.environment
        guard let u = env["ORPC_AGENT_TEST_PG_URL"], !u.isEmpty else {
            if env["ORPC_AGENT_REQUIRE_PG"] == "1" { XCTFail("ORPC_AGENT_TEST_PG_URL is not set") }
            throw XCTSkip("needs PostgreSQL: make test-postgres-swift")
        }
        return u + "?sslmode=disable"
    }

    func registry(_ calls: Locked<Int>) async throws -> CapabilityRegistry {
        try await CapabilityRegistry.connect(
            capabilities: [
                Capability(
                    "orders.refund",
                    meta: AgentMeta(
                        description: "Refund an order. Needs a human's approval.", expose: [.direct: true, .mcp: true],
                        sideEffect: .write, risk: .high, approval: .init(required: true, type: "human-confirmation"))
                ) { (r: Refund, _) in
                    calls.with { $0 += 1 }
                    return Refunded(refunded: r.id, amount: r.amount)
                }
            ],
            options: RegistryOptions(approverMustDiffer: true, approvalStore: .postgres(url: try url())))
    }

    /// The PostgreSQL audit sink, on a SQLite-backed registry with no Swift
    /// subscriber (records go from Rust), then with one (both get them).
    func testAuditRecordsAreWrittenToPostgres() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("orpc-audit-\(UUID().uuidString).db")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let echo = Capability(
            "echo.say",
            meta: AgentMeta(description: "Echo.", expose: [.mcp: true], sideEffect: .none, risk: .low)
        ) { (v: JSONValue, _) in v }
        let quiet = try await CapabilityRegistry.connect(
            capabilities: [echo],
            options: RegistryOptions(approvalStore: .sqlite(path: path), auditSink: .postgres(url: try url())))
        for i in 0..<5 {
            let _: Outcome<JSONValue> = try await quiet.invoke(
                "echo.say", input: JSONValue.int(Int64(i)), frame: Frame(surface: .mcp))
        }
        await quiet.flushAudit()
        XCTAssertEqual(
            quiet.auditStats(), AuditSinkStats(written: 10, dropped: 0, failed: 0), "started + finished per call")

        let seen = Locked(0)
        let both = try await CapabilityRegistry.connect(
            capabilities: [echo],
            options: RegistryOptions(audit: { _ in seen.with { $0 += 1 } }, auditSink: .postgres(url: try url())))
        let _: Outcome<JSONValue> = try await both.invoke(
            "echo.say", input: JSONValue.string("hi"), frame: Frame(surface: .mcp))
        await both.flushAudit()
        XCTAssertEqual(both.auditStats()?.written, 2)
        XCTAssertEqual(seen.with { $0 }, 2)

        XCTAssertThrowsError(
            try CapabilityRegistry(
                capabilities: [echo], options: RegistryOptions(auditSink: .postgres(url: "postgres://x"))))
    }

    func testCreatePageApproveResumeOnceAndRaceTwenty() async throws {
        let calls = Locked(0)
        let reg = try await registry(calls)
        let actor = "swift-\(UUID().uuidString)"
        var ids: [String] = []
        for i in 0..<3 {
            let o: Outcome<Refunded> = try await reg.invoke(
                "orders.refund", input: Refund(id: "o-\(i)", amount: 5),
                frame: Frame(surface: .mcp, actor: Actor(id: actor)))
            ids.append(try XCTUnwrap(o.approval?.id))
        }
        let first = try await reg.approvalsPageAsync(ApprovalFilter(actorId: actor, status: "pending", limit: 2))
        XCTAssertEqual(first.requests.map(\.id), Array(ids[0..<2]))
        let second = try await reg.approvalsPageAsync(
            ApprovalFilter(actorId: actor, limit: 2, cursor: first.nextCursor))
        XCTAssertEqual(second.requests.map(\.id), [ids[2]])
        XCTAssertNil(second.nextCursor)

        do {
            try await reg.approveAsync(ids[0], approver: actor)
            XCTFail("self-approval must be refused")
        } catch let e as CapabilityError { XCTAssertEqual(e.code, .policyDenied) }
        try await reg.approveAsync(ids[0], approver: "boss")
        let approved = try await reg.approvalAsync(ids[0])
        XCTAssertEqual(approved?.status, "approved")
        // What an approval UI shows of the input, on a store that waits
        // (the capability declares no redactor: the input as stored).
        let shown = try await reg.approvalInput(ids[0])
        XCTAssertEqual(shown["id"]?.stringValue, "o-0")
        await assertThrows(.approvalNotFound) {
            _ = try await reg.approvalInput("apr_" + String(repeating: "0", count: 32))
        }

        // Twenty concurrent resumes: one runs, nineteen APPROVAL_CONSUMED.
        let codes = await withTaskGroup(of: String.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    do {
                        let _: Outcome<Refunded> = try await reg.resume(ids[0], frame: Frame(surface: .mcp))
                        return "OK"
                    } catch let e as CapabilityError { return e.code.rawValue } catch { return "\(error)" }
                }
            }
            var all: [String] = []
            for await c in group { all.append(c) }
            return all
        }
        XCTAssertEqual(codes.filter { $0 == "OK" }.count, 1, "\(codes)")
        XCTAssertEqual(codes.filter { $0 == "APPROVAL_CONSUMED" }.count, 19, "\(codes)")
        XCTAssertEqual(calls.with { $0 }, 1)

        // A rejected request records who rejected it and why, and never runs.
        let rejected = try await reg.rejectAsync(ids[1], approver: "boss", reason: "not this one")
        XCTAssertEqual(rejected.status, "rejected")
        XCTAssertEqual(rejected.decidedBy, "boss")
        XCTAssertEqual(rejected.decisionReason, "not this one")
        let reread = try await reg.approvalAsync(ids[1])
        XCTAssertEqual(reread?.status, "rejected")
        do {
            let _: Outcome<Refunded> = try await reg.resume(ids[1], frame: Frame(surface: .mcp))
            XCTFail("a rejected request resumed")
        } catch let e as CapabilityError { XCTAssertEqual(e.code, .approvalRejected) }
        XCTAssertEqual(calls.with { $0 }, 1, "the rejected request did not run")

        // The synchronous API refuses instead of blocking a thread.
        XCTAssertThrowsError(try reg.approvals()) { XCTAssertEqual(($0 as? CapabilityError)?.code, .internal) }
        XCTAssertThrowsError(
            try CapabilityRegistry(
                capabilities: [], options: RegistryOptions(approvalStore: .postgres(url: try url()))))
    }

    /// The consume's round trip counts against the deadline: with a clock
    /// that stands still at the resume's start and a 1 ms timeout, the
    /// handler is never started after a consume that took any time at all
    /// (the answer carries Swift's time plus the round trip, as Node and
    /// Python read their clocks after it): TIMEOUT, nothing run.
    func testAConsumeThatOutlastsTheDeadlineNeverStartsTheHandler() async throws {
        let calls = Locked(0)
        let clock = ManualClock()
        let reg = try await CapabilityRegistry.connect(
            capabilities: [
                Capability(
                    "orders.refund",
                    meta: AgentMeta(
                        description: "Refund.", expose: [.mcp: true], sideEffect: .write, risk: .high, timeoutMs: 1,
                        approval: .init(required: true))
                ) { (r: Refund, _) in
                    calls.with { $0 += 1 }
                    return Refunded(refunded: r.id, amount: r.amount)
                }
            ],
            options: RegistryOptions(approvalStore: .postgres(url: try url()), clock: clock))
        let o: Outcome<Refunded> = try await reg.invoke(
            "orders.refund", input: Refund(id: "o-slow", amount: 1),
            frame: Frame(surface: .mcp, actor: Actor(id: "swift-\(UUID().uuidString)")))
        let id = try XCTUnwrap(o.approval?.id)
        try await reg.approveAsync(id, approver: "boss")
        await assertThrows(.timeout) {
            let _: Outcome<Refunded> = try await reg.resume(id, frame: Frame(surface: .direct))
        }
        XCTAssertEqual(calls.with { $0 }, 0, "the handler started past its deadline")
    }

    func testAnUnreachableDatabaseIsTyped() async throws {
        _ = try url()
        do {
            _ = try await CapabilityRegistry.connect(
                capabilities: [],
                options: RegistryOptions(
                    approvalStore: .postgres(
                        url: "postgresql://postgres@127.0.0.1:1/x?sslmode=disable", options: ["connectTimeoutMs": 200]))
            )
            XCTFail("must not connect")
        } catch let e as CapabilityError {
            XCTAssertEqual(e.code, .internal)
            XCTAssertEqual(e.details, ["store": "cannot-open"])
        }
    }

    /// The third process of the cross-binding chain: a request created by
    /// the Node binding and approved by the Python binding is resumed here.
    func testResumesARequestMadeAndApprovedByTheOtherBindings() async throws {
        _ = try url()
        guard let id = ProcessInfo.processInfo.environment["ORPC_AGENT_TEST_PG_APPROVED_ID"] else {
            throw XCTSkip("no cross-binding request given (make test-postgres-swift sets one)")
        }
        let calls = Locked(0)
        let reg = try await registry(calls)
        let done: Outcome<Refunded> = try await reg.resume(id, frame: Frame(surface: .mcp))
        XCTAssertEqual(done.value, Refunded(refunded: "o-swift", amount: 12.5))
        let consumed = try await reg.approvalAsync(id)
        XCTAssertEqual(consumed?.status, "consumed")
        XCTAssertEqual(calls.with { $0 }, 1)
    }
}
