import Foundation
import XCTest

@testable import OrpcAgent

/// The requester-limited resume and the resume through a tool call
/// (docs/decisions.md "Resume limited to the requester", "A resume through
/// a tool call is limited by the core"): the core decides; a refused
/// resume is APPROVAL_NOT_FOUND and consumes nothing.
final class ResumeLimitTests: XCTestCase {
    struct Transfer: Codable, Sendable, Equatable {
        var to: String
        var amount: Int
    }

    /// `payments.transfer` (approval required, MCP tool `send_money`) and
    /// `accounts.read`, both on MCP and direct; `runs` counts the transfer
    /// handler's calls.
    func registry(runs: Locked<Int>) throws -> CapabilityRegistry {
        try CapabilityRegistry(capabilities: [
            Capability(
                "payments.transfer",
                meta: AgentMeta(
                    description: "Send money.", expose: [.mcp: true, .direct: true], sideEffect: .external,
                    risk: .high, approval: .init(required: true), adapters: ["mcp": ["toolName": "send_money"]])
            ) { (t: Transfer, _) in
                runs.with { $0 += 1 }
                return t.amount
            },
            Capability(
                "accounts.read",
                meta: AgentMeta(
                    description: "Read an account.", expose: [.mcp: true, .direct: true], sideEffect: .read, risk: .low)
            ) { (x: JSONValue, _) in x },
        ])
    }

    /// An approved request for the transfer, made by `actor` on `surface`.
    func approvedRequest(_ reg: CapabilityRegistry, surface: Surface, actor: Actor) async throws -> String {
        let pending: Outcome<Int> = try await reg.invoke(
            "payments.transfer", input: Transfer(to: "bob", amount: 5), frame: Frame(surface: surface, actor: actor))
        let request = try XCTUnwrap(pending.approval)
        try reg.approve(request.id, approver: "boss")
        return request.id
    }

    func assertNotFoundAndNotConsumed(
        _ reg: CapabilityRegistry, _ id: String, _ frame: Frame, _ limit: ResumeLimit, runs: Locked<Int>,
        file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        await assertThrows(.approvalNotFound, file: file, line: line) {
            let _: Outcome<Int> = try await reg.resume(id, frame: frame, limitedTo: limit)
        }
        XCTAssertEqual(runs.with { $0 }, 0, "the handler ran", file: file, line: line)
        XCTAssertEqual(try reg.approval(id)?.status, "approved", "the request was consumed", file: file, line: line)
    }

    /// A task already cancelled when it resumes consumes nothing: the core
    /// ends the call CANCELLED before its consume step, and a later resume
    /// runs the approved call once.
    func testAResumeInATaskAlreadyCancelledConsumesNothing() async throws {
        let runs = Locked(0)
        let reg = try registry(runs: runs)
        let id = try await approvedRequest(reg, surface: .mcp, actor: Actor(id: "ann"))
        let task = Task { () -> Outcome<Int> in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await reg.resume(id, frame: Frame(surface: .direct))
        }
        await assertThrows(.cancelled) { _ = try await task.value }
        XCTAssertEqual(runs.with { $0 }, 0, "the handler ran")
        XCTAssertEqual(try reg.approval(id)?.status, "approved", "the request was consumed")
        let done: Outcome<Int> = try await reg.resume(id, frame: Frame(surface: .direct))
        XCTAssertEqual(done.value, 5)
        XCTAssertEqual(runs.with { $0 }, 1)
    }

    /// A repeated MCP call in a task already cancelled finds its approved
    /// request but consumes nothing, stores nothing and runs nothing: the
    /// caller's next call runs the approval once.
    func testARepeatedCallInATaskAlreadyCancelledConsumesNothing() async throws {
        let runs = Locked(0)
        let reg = try registry(runs: runs)
        let ann = Frame(surface: .mcp, actor: Actor(id: "ann"))
        let id = try await approvedRequest(reg, surface: .mcp, actor: Actor(id: "ann"))
        for amount in [5, 6] {
            let task = Task { () -> Outcome<Int> in
                withUnsafeCurrentTask { $0?.cancel() }
                return try await reg.invoke("payments.transfer", input: Transfer(to: "bob", amount: amount), frame: ann)
            }
            await assertThrows(.cancelled) { _ = try await task.value }
        }
        XCTAssertEqual(runs.with { $0 }, 0, "the handler ran")
        XCTAssertEqual(try reg.approval(id)?.status, "approved", "the request was consumed")
        XCTAssertEqual(try reg.approvals().count, 1, "a request was stored for the cancelled caller")
        let done: Outcome<Int> = try await reg.invoke(
            "payments.transfer", input: Transfer(to: "bob", amount: 5), frame: ann)
        XCTAssertEqual(done.value, 5)
        XCTAssertEqual(runs.with { $0 }, 1)
    }

    func testTheRequesterResumesItsOwnRequestAndNoOneElseConsumesIt() async throws {
        let runs = Locked(0)
        let reg = try registry(runs: runs)
        let ann = Actor(id: "ann")
        let id = try await approvedRequest(reg, surface: .mcp, actor: ann)

        // Another actor, the same actor on another surface, an actor with no id.
        try await assertNotFoundAndNotConsumed(
            reg, id, Frame(surface: .mcp, actor: Actor(id: "bob")), .requester, runs: runs)
        try await assertNotFoundAndNotConsumed(reg, id, Frame(surface: .direct, actor: ann), .requester, runs: runs)
        try await assertNotFoundAndNotConsumed(reg, id, Frame(surface: .mcp), .requester, runs: runs)

        // The requester: runs once, then the request is spent.
        let done: Outcome<Int> = try await reg.resume(
            id, frame: Frame(surface: .mcp, actor: ann), limitedTo: .requester)
        XCTAssertEqual(done.value, 5)
        XCTAssertEqual(runs.with { $0 }, 1)
        await assertThrows(.approvalConsumed) {
            let _: Outcome<Int> = try await reg.resume(
                id, frame: Frame(surface: .mcp, actor: ann), limitedTo: .requester)
        }
        XCTAssertEqual(runs.with { $0 }, 1)
    }

    func testAResumeThroughAToolRunsOnlyTheRequestersRequestForThatTool() async throws {
        let runs = Locked(0)
        let reg = try registry(runs: runs)
        let ann = Actor(id: "ann")
        let id = try await approvedRequest(reg, surface: .mcp, actor: ann)
        let asAnn = Frame(surface: .mcp, actor: ann)

        // Another tool, a tool no capability has, another surface, another actor, no actor id.
        try await assertNotFoundAndNotConsumed(reg, id, asAnn, .throughTool("accounts.read"), runs: runs)
        try await assertNotFoundAndNotConsumed(reg, id, asAnn, .throughTool("no_such_tool"), runs: runs)
        try await assertNotFoundAndNotConsumed(
            reg, id, Frame(surface: .direct, actor: ann), .throughTool("send_money"), runs: runs)
        try await assertNotFoundAndNotConsumed(
            reg, id, Frame(surface: .mcp, actor: Actor(id: "bob")), .throughTool("send_money"), runs: runs)
        try await assertNotFoundAndNotConsumed(reg, id, Frame(surface: .mcp), .throughTool("send_money"), runs: runs)

        // The requester, through the request's tool (by its MCP tool name): once.
        let done: Outcome<Int> = try await reg.resume(id, frame: asAnn, limitedTo: .throughTool("send_money"))
        XCTAssertEqual(done.value, 5)
        XCTAssertEqual(runs.with { $0 }, 1)
    }

    func testAnActorWithoutAnIdResumesThroughAToolOnlyARequestOfAnIdenticalActor() async throws {
        let runs = Locked(0)
        let reg = try registry(runs: runs)
        let guest = Actor(roles: ["guest"])
        let id = try await approvedRequest(reg, surface: .mcp, actor: guest)

        try await assertNotFoundAndNotConsumed(
            reg, id, Frame(surface: .mcp, actor: Actor(roles: ["admin"])), .throughTool("payments.transfer"), runs: runs
        )
        // `.requester` needs an actor id: an id-less requester resumes nothing.
        try await assertNotFoundAndNotConsumed(reg, id, Frame(surface: .mcp, actor: guest), .requester, runs: runs)

        let done: Outcome<Int> = try await reg.resume(
            id, frame: Frame(surface: .mcp, actor: guest), limitedTo: .throughTool("payments.transfer"))
        XCTAssertEqual(done.value, 5)
        XCTAssertEqual(runs.with { $0 }, 1)
    }

    func testTheResumedHandlerSeesTheFrameTheCoreBuilt() async throws {
        let seen = Locked<[String]>([])
        let reg = try CapabilityRegistry(capabilities: [
            Capability(
                "payments.transfer",
                meta: AgentMeta(
                    description: "Send money.", expose: [.mcp: true], sideEffect: .external, risk: .high,
                    approval: .init(required: true))
            ) { (t: Transfer, cx: HandlerContext) in
                let f = cx.frame
                seen.with {
                    $0.append(
                        [
                            f.surface.rawValue, f.actor.id ?? "-", f.actor.roles.joined(), f.trace?.traceparent ?? "-",
                            f.requestId ?? "-", f.sessionId ?? "-", f.context as? String ?? "-",
                        ].joined(separator: " "))
                }
                return t.amount
            }
        ])
        let id = try await approvedRequest(reg, surface: .mcp, actor: Actor(id: "ann", roles: ["clerk"]))
        let trace = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        let caller = Frame(
            surface: .mcp, actor: Actor(id: "ann"), trace: TraceContext(traceparent: trace), requestId: "req-2",
            sessionId: "s-2", context: "ctx")
        let done: Outcome<Int> = try await reg.resume(id, frame: caller, limitedTo: .requester)
        XCTAssertEqual(done.value, 5)
        // The recorded surface and actor (roles included), the caller's trace, ids and context.
        XCTAssertEqual(seen.with { $0 }, ["mcp ann clerk \(trace) req-2 s-2 ctx"])
    }

    func testWithoutALimitTheCallerIsTrustedAsBefore() async throws {
        let runs = Locked(0)
        let reg = try registry(runs: runs)
        let id = try await approvedRequest(reg, surface: .mcp, actor: Actor(id: "ann"))
        let done: Outcome<Int> = try await reg.resume(id, frame: Frame(surface: .direct, actor: Actor(id: "ui")))
        XCTAssertEqual(done.value, 5)
        XCTAssertEqual(runs.with { $0 }, 1)
    }
}
