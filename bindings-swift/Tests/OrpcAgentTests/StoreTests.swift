import Foundation
import XCTest

@testable import OrpcAgent

/// The embedded SQLite approval store through the Swift API: a request
/// made before a restart is approved and resumed after it.
final class StoreTests: XCTestCase {
    struct Payment: Codable, Sendable, Equatable {
        let to: String
        let cents: Int
    }

    func capabilities(_ calls: Locked<Int>) -> [Capability] {
        [
            Capability(
                "payments.send",
                meta: AgentMeta(
                    description: "Send a payment.", expose: [.mcp: true], sideEffect: .external, risk: .high,
                    approval: .init(required: true))
            ) { (p: Payment, _) in
                calls.with { $0 += 1 }
                return p.cents
            }
        ]
    }

    func testApprovalsSurviveARestartWithSQLite() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("orpc-agent-\(UUID().uuidString).db")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let calls = Locked(0)
        var first: CapabilityRegistry? = try CapabilityRegistry(
            capabilities: capabilities(calls), options: RegistryOptions(approvalStore: .sqlite(path: path)))
        let pending: Outcome<Int> = try await first!.invoke(
            "payments.send", input: Payment(to: "bob", cents: 500), frame: Frame(surface: .mcp, actor: Actor(id: "ann"))
        )
        let id = try XCTUnwrap(pending.approval?.id)
        first = nil  // "restart"

        let second = try CapabilityRegistry(
            capabilities: capabilities(calls), options: RegistryOptions(approvalStore: .sqlite(path: path)))
        let listed = try second.approvals(ApprovalFilter(actorId: "ann"))
        XCTAssertEqual(listed.map(\.id), [id])
        XCTAssertEqual(listed.first?.input, ["to": "bob", "cents": 500])
        try second.approve(id, approver: "boss")
        let done: Outcome<Int> = try await second.resume(id, frame: Frame(surface: .mcp))
        XCTAssertEqual(done.value, 500)
        XCTAssertEqual(try second.approval(id)?.status, "consumed")
        XCTAssertEqual(calls.with { $0 }, 1)
    }

    struct PaymentV2: Codable, Sendable {
        let to: String
        let cents: String
    }

    /// A request made for an older input type, resumed by a registry whose
    /// handler takes a newer one (the same SQLite store): the core's
    /// `StoredInputUnusable` — EXECUTION_FAILED with its text, the handler
    /// never started (no attempt), audited; the same rule as Python's.
    func testAStoredInputThatNoLongerDecodesFailsTheCallTyped() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("orpc-agent-\(UUID().uuidString).db")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let calls = Locked(0)
        let first = try CapabilityRegistry(
            capabilities: capabilities(calls), options: RegistryOptions(approvalStore: .sqlite(path: path)))
        let pending: Outcome<Int> = try await first.invoke(
            "payments.send", input: Payment(to: "bob", cents: 500), frame: Frame(surface: .mcp, actor: Actor(id: "ann"))
        )
        let id = try XCTUnwrap(pending.approval?.id)
        try first.approve(id, approver: "boss")

        let audit = Locked<[AuditRecord]>([])
        let newer = try CapabilityRegistry(
            capabilities: [
                Capability(
                    "payments.send",
                    meta: AgentMeta(
                        description: "Send a payment.", expose: [.mcp: true], sideEffect: .external, risk: .high,
                        approval: .init(required: true))
                ) { (_: PaymentV2, _) in
                    calls.with { $0 += 1 }
                    return 0
                }
            ],
            options: RegistryOptions(approvalStore: .sqlite(path: path), audit: { r in audit.with { $0.append(r) } }))
        do {
            let _: Outcome<Int> = try await newer.resume(id, frame: Frame(surface: .mcp))
            XCTFail("a stored input that does not decode must not run")
        } catch let e as CapabilityError {
            XCTAssertEqual(e.code, .executionFailed)
            XCTAssertEqual(
                e.message, "The approved input could not be given to the capability's handler; it did not run.")
        }
        XCTAssertEqual(calls.with { $0 }, 0)
        let finished = try XCTUnwrap(audit.with { $0 }.last)
        XCTAssertEqual(finished.outcome, "EXECUTION_FAILED")
        XCTAssertEqual(finished.failure, "StoredInputUnusable")
        XCTAssertEqual(finished.json["attempts"], 0)
        XCTAssertEqual(try newer.approval(id)?.status, "consumed")
    }

    /// The list filter by surface, as the core reads it: with the actor id,
    /// exactly that requester's own requests.
    func testTheListFiltersBySurface() async throws {
        let calls = Locked(0)
        let registry = try CapabilityRegistry(
            capabilities: [
                Capability(
                    "payments.send",
                    meta: AgentMeta(
                        description: "Send a payment.", expose: [.mcp: true, .direct: true], sideEffect: .external,
                        risk: .high, approval: .init(required: true))
                ) { (p: Payment, _) in
                    calls.with { $0 += 1 }
                    return p.cents
                }
            ])
        let onMcp: Outcome<Int> = try await registry.invoke(
            "payments.send", input: Payment(to: "bob", cents: 1), frame: Frame(surface: .mcp, actor: Actor(id: "ann")))
        let _: Outcome<Int> = try await registry.invoke(
            "payments.send", input: Payment(to: "bob", cents: 2),
            frame: Frame(surface: .direct, actor: Actor(id: "ann")))
        let id = try XCTUnwrap(onMcp.approval?.id)
        XCTAssertEqual(try registry.approvals(ApprovalFilter(actorId: "ann", surface: .mcp)).map(\.id), [id])
        XCTAssertEqual(try registry.approvals(ApprovalFilter(actorId: "ann")).count, 2)
        XCTAssertEqual(calls.with { $0 }, 0)
    }

    func testAStoreThatCannotOpenIsATypedError() {
        XCTAssertThrowsError(
            try CapabilityRegistry(
                capabilities: [],
                options: RegistryOptions(approvalStore: .sqlite(path: "/nonexistent-dir/x/approvals.db")))
        ) { error in
            XCTAssertEqual((error as? CapabilityError)?.code, .internal, "\(error)")
        }
    }

    func testAnAlreadyCancelledCallerGetsCancelled() async throws {
        let calls = Locked(0)
        let reg = try CapabilityRegistry(capabilities: [
            Capability(
                "notes.read", meta: AgentMeta(description: "Read.", expose: [.mcp: true], sideEffect: .read, risk: .low)
            ) { (x: JSONValue, _) in
                calls.with { $0 += 1 }
                return x
            }
        ])
        let task = Task { () -> Outcome<JSONValue> in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await reg.invoke("notes.read", input: JSONValue.null, frame: Frame(surface: .mcp))
        }
        await assertThrows(.cancelled) { _ = try await task.value }
        // The call was settled before its handler's turn: no handler starts
        // (the race starts the work only when nothing has settled it).
        XCTAssertEqual(calls.with { $0 }, 0, "a handler ran for a call already cancelled")
    }
}
