import Foundation
import XCTest

@testable import OrpcAgent

final class ConcurrencyTests: XCTestCase {
    struct Query: Codable, Sendable { let n: Int }

    /// Many invocations at once from a task group: every one gets its own
    /// answer, audit records pair up, nothing crosses between calls.
    func testConcurrentInvocationsInATaskGroup() async throws {
        let audit = Locked<[AuditRecord]>([])
        let reg = try CapabilityRegistry(
            capabilities: [
                Capability(
                    "math.double",
                    meta: AgentMeta(
                        description: "Double a number.", expose: [.mcp: true], sideEffect: .none, risk: .low)
                ) { (q: Query, _) in
                    try await Task.sleep(nanoseconds: UInt64(q.n % 5) * 1_000_000)
                    return q.n * 2
                }
            ],
            options: RegistryOptions(audit: { r in audit.with { $0.append(r) } }))
        let results = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for n in 0..<200 {
                group.addTask {
                    let out: Outcome<Int> = try await reg.invoke(
                        "math.double", input: Query(n: n), frame: Frame(surface: .mcp))
                    return (n, out.value ?? -1)
                }
            }
            var all: [(Int, Int)] = []
            for try await r in group { all.append(r) }
            return all
        }
        XCTAssertEqual(results.count, 200)
        for (n, doubled) in results { XCTAssertEqual(doubled, n * 2) }
        XCTAssertEqual(audit.with { $0.filter { $0.event == "finished" && $0.outcome == "ok" }.count }, 200)
    }

    /// Cancelling the Swift task cancels the invocation: CANCELLED, and the
    /// handler's own task sees the cancellation.
    func testCancellingTheTaskCancelsTheInvocation() async throws {
        let started = Locked(false)
        let handlerCancelled = Locked(false)
        let reg = try CapabilityRegistry(capabilities: [
            Capability(
                "reports.long",
                meta: AgentMeta(
                    description: "Long.", expose: [.mcp: true], sideEffect: .read, risk: .low, timeoutMs: 600_000)
            ) { (x: JSONValue, _) in
                started.with { $0 = true }
                do { try await Task.sleep(nanoseconds: 300_000_000_000) } catch { handlerCancelled.with { $0 = true } }
                return x
            }
        ])
        let task = Task { () -> Outcome<JSONValue> in
            try await reg.invoke("reports.long", input: JSONValue.null, frame: Frame(surface: .mcp))
        }
        // Events, not durations: cancel once the handler runs, and wait
        // (bounded) for it to see the cancellation.
        for _ in 0..<10_000 where !started.with({ $0 }) { try await Task.sleep(nanoseconds: 1_000_000) }
        XCTAssertTrue(started.with { $0 }, "the handler never started")
        task.cancel()
        do {
            _ = try await task.value
            XCTFail("expected CANCELLED")
        } catch let e as CapabilityError {
            XCTAssertEqual(e.code, .cancelled)
        }
        for _ in 0..<10_000 where !handlerCancelled.with({ $0 }) { try await Task.sleep(nanoseconds: 1_000_000) }
        XCTAssertTrue(handlerCancelled.with { $0 }, "the handler's task was not cancelled")
    }

    /// Cancelling the task while a validator, a host policy or a redactor is
    /// awaited ends the call at once with the core's CANCELLED (not a failed
    /// validator, a denying policy or a failed redactor, as this binding
    /// answered before), audited once as finished; the handler of the
    /// validated and the policed call never runs.
    func testCancellingTheTaskAtAnAwaitedHookIsCancelledAndAudited() async throws {
        let records = Locked<[AuditRecord]>([])
        let entered = Locked<[String]>([])
        let ran = Locked<[String]>([])
        /// Returns only when its task is cancelled (an hour otherwise): only
        /// the caller's cancellation can end the call in time.
        @Sendable func hang(_ hook: String) async {
            entered.with { $0.append(hook) }
            try? await Task.sleep(nanoseconds: 3_600_000_000_000)
        }
        let meta = AgentMeta(
            description: "Waits.", expose: [.mcp: true], sideEffect: .read, risk: .low, timeoutMs: 600_000)
        let reg = try CapabilityRegistry(
            capabilities: [
                Capability(
                    "hooks.validate", meta: meta,
                    validateInput: { (v: JSONValue) in
                        await hang("hooks.validate")
                        return v
                    }
                ) { (v: JSONValue, _) in
                    ran.with { $0.append("hooks.validate") }
                    return v
                },
                Capability(
                    "hooks.policy", meta: meta,
                    policies: [
                        .host(
                            HostPolicy(name: "hangs") { _ in
                                await hang("hooks.policy")
                                return .allow
                            })
                    ]
                ) { (v: JSONValue, _) in
                    ran.with { $0.append("hooks.policy") }
                    return v
                },
                Capability(
                    "hooks.redact", meta: meta,
                    redactOutput: { (v: JSONValue, _) in
                        await hang("hooks.redact")
                        return v
                    }
                ) { (v: JSONValue, _) in
                    ran.with { $0.append("hooks.redact") }
                    return v
                },
            ],
            options: RegistryOptions(audit: { r in records.with { $0.append(r) } }))
        for id in ["hooks.validate", "hooks.policy", "hooks.redact"] {
            let task = Task { () -> Outcome<JSONValue> in
                try await reg.invoke(id, input: JSONValue.null, frame: Frame(surface: .mcp))
            }
            // Events, not durations: cancel once the hook is entered.
            for _ in 0..<10_000 where !entered.with({ $0.contains(id) }) {
                try await Task.sleep(nanoseconds: 1_000_000)
            }
            XCTAssertTrue(entered.with { $0.contains(id) }, "\(id): the hook never started")
            task.cancel()
            do {
                _ = try await task.value
                XCTFail("\(id): expected CANCELLED")
            } catch let e as CapabilityError {
                XCTAssertEqual(e.code, .cancelled, "\(id): \(e.message)")
            }
            let finished = records.with {
                $0.filter { $0.json["capabilityId"]?.stringValue == id && $0.event == "finished" }
            }
            XCTAssertEqual(finished.map { $0.outcome }, ["CANCELLED"], id)
        }
        XCTAssertEqual(ran.with { $0 }, ["hooks.redact"])
    }

    /// The approval UI view applies redactApprovalInput with the recorded actor.
    func testApprovalInputViewIsRedacted() async throws {
        let reg = try CapabilityRegistry(capabilities: [
            Capability(
                "hr.update",
                meta: AgentMeta(
                    description: "Update.", expose: [.mcp: true], sideEffect: .write, risk: .high,
                    approval: .init(required: true)),
                redactApprovalInput: { input, info in
                    guard var o = input.objectValue else { return input }
                    o["ssn"] = .string("*** for \(info.actor.id ?? "-")")
                    return .object(o)
                }
            ) { (x: JSONValue, _) in x }
        ])
        let out: Outcome<JSONValue> = try await reg.invoke(
            "hr.update", input: ["ssn": "123-45-6789"] as JSONValue,
            frame: Frame(surface: .mcp, actor: Actor(id: "ann")))
        let id = try XCTUnwrap(out.approval?.id)
        let view = try await reg.approvalInput(id)
        XCTAssertEqual(view["ssn"], "*** for ann")
        await assertThrows(.approvalNotFound) {
            _ = try await reg.approvalInput("apr_00000000000000000000000000000000")
        }
        // The store's words, as for a decide on that id (not the binding's own).
        do {
            _ = try await reg.approvalInput("apr_00000000000000000000000000000000")
        } catch let e as CapabilityError {
            XCTAssertEqual(e.message, "no approval request with id `apr_00000000000000000000000000000000`")
        }
    }
}
