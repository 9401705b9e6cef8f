import Foundation
import XCTest

@testable import OrpcAgent

/// SI-1 … SI-12 (DESIGN §9) through the public Swift API, with typed
/// `Codable` inputs and outputs. (The pipeline vectors cover each
/// invariant too; these show the Swift idiom holds them.)
final class SecurityInvariantTests: XCTestCase {
    struct Transfer: Codable, Sendable, Equatable {
        var to: String
        var amount: Int
        var memo: String?
    }
    struct Receipt: Codable, Sendable, Equatable {
        var id: String
        var amount: Int
        var account: String
    }

    let read = AgentMeta(description: "Look up an account.", expose: [.mcp: true], sideEffect: .read, risk: .low)

    func transfer(
        meta: AgentMeta? = nil, policies: [Policy] = [], calls: Locked<[Transfer]> = Locked([]),
        redact: (@Sendable (Receipt, RedactionInfo) async throws -> Receipt)? = nil
    ) -> Capability {
        Capability(
            "payments.transfer",
            meta: meta
                ?? AgentMeta(
                    description: "Send money.", expose: [.mcp: true, .direct: true], sideEffect: .external, risk: .high,
                    approval: .init(required: true, expiresInMs: 60_000)),
            redactOutput: redact, policies: policies
        ) { (t: Transfer, _) in
            calls.with { $0.append(t) }
            return Receipt(id: "tx_1", amount: t.amount, account: "DE44-SECRET")
        }
    }

    func testSI1_exposureIsDenyByDefaultPerSurface() async throws {
        let reg = try CapabilityRegistry(capabilities: [
            Capability("accounts.get", meta: read) { (id: String, _) in id }
        ])
        let ok: Outcome<String> = try await reg.invoke("accounts.get", input: "a1", frame: Frame(surface: .mcp))
        XCTAssertEqual(ok.value, "a1")
        await assertThrows(.notFound) {
            let _: Outcome<String> = try await reg.invoke("accounts.get", input: "a1", frame: Frame(surface: .aiSdk))
        }
    }

    func testSI2_SI3_surfaceAndActorComeFromTheFrameAndHooksSeeThem() async throws {
        let seen = Locked<[String]>([])
        let reg = try CapabilityRegistry(capabilities: [
            Capability("accounts.get", meta: read) { (input: JSONValue, cx: HandlerContext) in
                seen.with { $0.append("\(cx.frame.surface.rawValue):\(cx.frame.actor.id ?? "-")") }
                return input
            }
        ])
        // A "surface" inside the input changes nothing.
        _ = try await reg.invoke(
            "accounts.get", input: ["surface": "direct"] as JSONValue,
            frame: Frame(surface: .mcp, actor: Actor(id: "ann")), as: JSONValue.self)
        XCTAssertEqual(seen.with { $0 }, ["mcp:ann"])
    }

    func testSI3_resumeRunsAsTheRecordedSurfaceAndActor() async throws {
        let actors = Locked<[String]>([])
        let reg = try CapabilityRegistry(capabilities: [
            Capability(
                "payments.transfer",
                meta: AgentMeta(
                    description: "Send money.", expose: [.mcp: true], sideEffect: .external, risk: .high,
                    approval: .init(required: true))
            ) { (t: Transfer, cx: HandlerContext) in
                actors.with { $0.append("\(cx.frame.surface.rawValue):\(cx.frame.actor.id ?? "-")") }
                return Receipt(id: "tx", amount: t.amount, account: "x")
            }
        ])
        let pending: Outcome<Receipt> = try await reg.invoke(
            "payments.transfer", input: Transfer(to: "bob", amount: 5),
            frame: Frame(surface: .mcp, actor: Actor(id: "ann")))
        let request = try XCTUnwrap(pending.approval)
        try reg.approve(request.id, approver: "boss")
        let done: Outcome<Receipt> = try await reg.resume(
            request.id, frame: Frame(surface: .direct, actor: Actor(id: "mallory")))
        XCTAssertEqual(done.value?.amount, 5)
        XCTAssertEqual(actors.with { $0 }, ["mcp:ann"])
    }

    func testSI4_invalidMetadataNeverServesAndEveryProblemIsListed() {
        XCTAssertThrowsError(
            try CapabilityRegistry(capabilities: [
                Capability("a", meta: AgentMeta(json: ["description": "", "expose": ["mcp": "yes"]])) {
                    (x: JSONValue, _) in x
                },
                Capability(
                    "b",
                    meta: AgentMeta(
                        description: "Write.", expose: [.mcp: true], sideEffect: .write, risk: .low,
                        retry: .init(maxAttempts: 2))
                ) { (x: JSONValue, _) in x },
            ])
        ) { error in
            guard let e = error as? RegistryError else { return XCTFail("not a RegistryError: \(error)") }
            let got = Set(e.problems.map { "\($0.capability ?? "-") \($0.path) \($0.code)" })
            XCTAssertEqual(
                got,
                [
                    "a description MISSING_FIELD", "a expose.mcp WRONG_TYPE", "a sideEffect MISSING_FIELD",
                    "a risk MISSING_FIELD", "b retry RETRY_NOT_IDEMPOTENT",
                ])
        }
    }

    func testSI4_aDeclaredHookWithoutAClosureIsABuildProblem() {
        XCTAssertThrowsError(
            try CapabilityRegistry(capabilities: [
                Capability(
                    "a",
                    meta: AgentMeta(json: [
                        "description": "Read.", "expose": ["mcp": true], "sideEffect": "read", "risk": "low",
                        "redact": ["output": true],
                    ])
                ) { (x: JSONValue, _) in x }
            ])
        ) { error in
            XCTAssertEqual((error as? RegistryError)?.problems.map(\.code), ["MISSING_HOOK"])
        }
    }

    func testSI5_policiesAndHandlersSeeOnlyValidatedInput() async throws {
        let seen = Locked<[JSONValue]>([])
        let policy = HostPolicy(name: "look") { r in
            seen.with { $0.append(r.input) }
            return .allow
        }
        let reg = try CapabilityRegistry(capabilities: [
            Capability(
                "payments.transfer",
                meta: AgentMeta(description: "Send money.", expose: [.mcp: true], sideEffect: .read, risk: .low),
                validateInput: { (t: Transfer) in
                    var t = t
                    t.memo = t.memo ?? "default memo"
                    return t
                },
                policies: [.host(policy)]
            ) { (t: Transfer, _) in t }
        ])
        let out: Outcome<Transfer> = try await reg.invoke(
            "payments.transfer", input: ["to": "bob", "amount": 3] as JSONValue, frame: Frame(surface: .mcp))
        XCTAssertEqual(out.value?.memo, "default memo")
        XCTAssertEqual(seen.with { $0 }.first?["memo"], "default memo")
        // A wrongly typed input fails at stage 4 with INVALID_INPUT, before any policy.
        await assertThrows(.invalidInput) {
            let _: Outcome<Transfer> = try await reg.invoke(
                "payments.transfer", input: ["to": "bob", "amount": "three"] as JSONValue, frame: Frame(surface: .mcp))
        }
        XCTAssertEqual(seen.with { $0.count }, 1)
    }

    func testSI6_runtimePoliciesFirstFirstDenyWinsAFailingPolicyDenies() async throws {
        let order = Locked<[String]>([])
        func named(_ n: String, _ d: PolicyDecision) -> Policy {
            .host(
                HostPolicy(name: n) { _ in
                    order.with { $0.append(n) }
                    return d
                })
        }
        let throwing = Policy.host(
            HostPolicy(name: "broken") { _ in
                struct Boom: Error {}
                throw Boom()
            })
        let reg = try CapabilityRegistry(
            capabilities: [
                Capability("accounts.get", meta: read, policies: [named("cap", .deny(reason: "no"))]) {
                    (x: JSONValue, _) in x
                },
                Capability("accounts.list", meta: read, policies: [throwing]) { (x: JSONValue, _) in x },
            ],
            options: RegistryOptions(policies: [named("runtime", .allow)]))
        await assertThrows(.policyDenied) {
            let _: Outcome<JSONValue> = try await reg.invoke(
                "accounts.get", input: JSONValue.null, frame: Frame(surface: .mcp))
        }
        XCTAssertEqual(order.with { $0 }, ["runtime", "cap"])
        await assertThrows(.policyDenied) {
            let _: Outcome<JSONValue> = try await reg.invoke(
                "accounts.list", input: JSONValue.null, frame: Frame(surface: .mcp))
        }
    }

    func testSI7_anApprovalBindsTheInputIsSingleUseAndExpires() async throws {
        let clock = ManualClock()
        let calls = Locked<[Transfer]>([])
        let reg = try CapabilityRegistry(capabilities: [transfer(calls: calls)], options: RegistryOptions(clock: clock))
        let pending: Outcome<Receipt> = try await reg.invoke(
            "payments.transfer", input: Transfer(to: "bob", amount: 10),
            frame: Frame(surface: .mcp, actor: Actor(id: "ann")))
        let request = try XCTUnwrap(pending.approval)
        // The hash binds the stored input; it is the store's, never shown (issue 15).
        XCTAssertNil(request.json["inputHash"])
        XCTAssertEqual(
            try InputHash.of(capability: "payments.transfer", input: request.input),
            try InputHash.of(capability: "payments.transfer", encoding: Transfer(to: "bob", amount: 10)))
        XCTAssertEqual(try reg.approvals(ApprovalFilter(status: "pending")).map(\.id), [request.id])
        await assertThrows(.approvalPending) {
            let _: Outcome<Receipt> = try await reg.resume(request.id, frame: Frame(surface: .mcp))
        }
        try reg.approve(request.id, approver: "boss")
        let done: Outcome<Receipt> = try await reg.resume(request.id, frame: Frame(surface: .mcp))
        XCTAssertEqual(done.value?.amount, 10)
        XCTAssertEqual(calls.with { $0 }, [Transfer(to: "bob", amount: 10)])
        await assertThrows(.approvalConsumed) {
            let _: Outcome<Receipt> = try await reg.resume(request.id, frame: Frame(surface: .mcp))
        }
        // Expiry.
        let second: Outcome<Receipt> = try await reg.invoke(
            "payments.transfer", input: Transfer(to: "eve", amount: 1), frame: Frame(surface: .mcp))
        let late = try XCTUnwrap(second.approval)
        try reg.approve(late.id, approver: "boss")
        XCTAssertEqual(try reg.approval(late.id)?.status, "approved")
        clock.advance(by: 60_000)
        // Views show the status as of the read, by the registry's clock.
        XCTAssertEqual(try reg.approval(late.id)?.status, "expired")
        XCTAssertEqual(try reg.approvals(ApprovalFilter(status: "expired")).map(\.id), [late.id])
        XCTAssertEqual(try reg.approvals(ApprovalFilter(status: "approved")).map(\.id), [])
        await assertThrows(.approvalExpired) {
            let _: Outcome<Receipt> = try await reg.resume(late.id, frame: Frame(surface: .mcp))
        }
        XCTAssertEqual(calls.with { $0.count }, 1)
    }

    func testSI8_unexposedIsIndistinguishableFromMissing() async throws {
        let reg = try CapabilityRegistry(capabilities: [
            Capability("accounts.get", meta: read) { (x: JSONValue, _) in x }
        ])
        var errors: [CapabilityError] = []
        for name in ["accounts.get", "accounts.nope"] {
            do {
                let _: Outcome<JSONValue> = try await reg.invoke(
                    name, input: JSONValue.null, frame: Frame(surface: .workflow))
            } catch let e as CapabilityError { errors.append(e) }
        }
        XCTAssertEqual(errors.count, 2)
        XCTAssertEqual(errors[0], errors[1])
    }

    func testSI9_theDeadlineHoldsEvenWhenTheHandlerIgnoresCancellation() async throws {
        let release = Locked(false)
        let finished = Locked(false)
        let sawCancel = Locked(false)
        let reg = try CapabilityRegistry(capabilities: [
            Capability(
                "reports.slow",
                meta: AgentMeta(
                    // Long enough that a loaded machine starts the handler before it.
                    description: "Slow.", expose: [.mcp: true], sideEffect: .read, risk: .low, timeoutMs: 400)
            ) { (x: JSONValue, _) in
                // Ignores cancellation until the test releases it, which it
                // does only after the call returned; then notes whether it
                // was cancelled.
                while !release.with({ $0 }) { try? await Task.sleep(nanoseconds: 1_000_000) }
                sawCancel.with { $0 = Task.isCancelled }
                finished.with { $0 = true }
                return x
            }
        ])
        await assertThrows(.timeout) {
            let _: Outcome<JSONValue> = try await reg.invoke(
                "reports.slow", input: JSONValue.null, frame: Frame(surface: .mcp))
        }
        XCTAssertFalse(finished.with { $0 }, "the caller waited for the handler")
        release.with { $0 = true }
        for _ in 0..<10_000 where !finished.with({ $0 }) { try await Task.sleep(nanoseconds: 1_000_000) }
        XCTAssertTrue(finished.with { $0 }, "the released handler never finished")
        XCTAssertTrue(sawCancel.with { $0 }, "the handler's task was not cancelled at the deadline")
    }

    func testSI10_nothingUnredactedLeaves() async throws {
        let audit = Locked<[AuditRecord]>([])
        let reg = try CapabilityRegistry(
            capabilities: [
                transfer(
                    meta: AgentMeta(description: "Send money.", expose: [.mcp: true], sideEffect: .read, risk: .low),
                    redact: { r, info in
                        XCTAssertEqual(info.capabilityId, "payments.transfer")
                        return Receipt(id: r.id, amount: r.amount, account: "***")
                    })
            ],
            options: RegistryOptions(audit: { r in audit.with { $0.append(r) } }, auditPayloads: true))
        let out: Outcome<Receipt> = try await reg.invoke(
            "payments.transfer", input: Transfer(to: "b", amount: 1), frame: Frame(surface: .mcp))
        XCTAssertEqual(out.value?.account, "***")
        let text = audit.with { $0.map(\.json.jsonText).joined() }
        XCTAssertFalse(text.contains("DE44-SECRET"))
        XCTAssertTrue(text.contains("***"), "audit payload is the redacted output")
        // A throwing redactor fails closed.
        let failing = try CapabilityRegistry(capabilities: [
            transfer(
                meta: AgentMeta(description: "Send money.", expose: [.mcp: true], sideEffect: .read, risk: .low),
                redact: { _, _ in
                    struct Nope: Error {}
                    throw Nope()
                })
        ])
        await assertThrows(.executionFailed) {
            let _: Outcome<Receipt> = try await failing.invoke(
                "payments.transfer", input: Transfer(to: "b", amount: 1), frame: Frame(surface: .mcp))
        }
    }

    func testSI11_retriesOnlyForRetryableErrorsOnReadsOrIdempotent() async throws {
        let n = Locked(0)
        let flaky: @Sendable (JSONValue, HandlerContext) async throws -> JSONValue = { x, cx in
            let k = n.with {
                $0 += 1
                return $0
            }
            if k < 3 { throw CapabilityError(.executionFailed, "transient", retryable: true) }
            XCTAssertEqual(cx.attempt, 3)
            return x
        }
        let reg = try CapabilityRegistry(capabilities: [
            Capability(
                "accounts.get",
                meta: AgentMeta(
                    description: "Read.", expose: [.mcp: true], sideEffect: .read, risk: .low,
                    retry: .init(maxAttempts: 2)),
                handler: flaky),
            Capability(
                "accounts.close",
                meta: AgentMeta(description: "Close.", expose: [.mcp: true], sideEffect: .destructive, risk: .low),
                handler: flaky),
        ])
        let ok: Outcome<JSONValue> = try await reg.invoke(
            "accounts.get", input: JSONValue.int(1), frame: Frame(surface: .mcp))
        XCTAssertEqual(ok.value, 1)
        n.with { $0 = 0 }
        await assertThrows(.executionFailed) {
            let _: Outcome<JSONValue> = try await reg.invoke(
                "accounts.close", input: JSONValue.int(1), frame: Frame(surface: .mcp))
        }
        XCTAssertEqual(n.with { $0 }, 1, "a destructive call without retry config is never retried")
    }

    func testSI12_contextualDiscoveryGrantsNoAuthority() async throws {
        let reg = try CapabilityRegistry(capabilities: [
            Capability(
                "accounts.get",
                meta: AgentMeta(
                    description: "Read.", expose: [.direct: true], sideEffect: .read, risk: .low, discovery: .contextual
                )
            ) { (x: JSONValue, _) in x }
        ])
        await assertThrows(.notFound) {
            let _: Outcome<JSONValue> = try await reg.invoke(
                "accounts.get", input: JSONValue.null, frame: Frame(surface: .mcp))
        }
        let d = try reg.descriptors(surface: .direct)
        XCTAssertEqual(d.first?["discovery"], "contextual")
    }
}

func assertThrows(
    _ code: ErrorCode, file: StaticString = #filePath, line: UInt = #line, _ body: () async throws -> Void
) async {
    do {
        try await body()
        XCTFail("expected \(code.rawValue), got success", file: file, line: line)
    } catch let e as CapabilityError {
        XCTAssertEqual(e.code, code, "\(e)", file: file, line: line)
    } catch {
        XCTFail("expected \(code.rawValue), got \(error)", file: file, line: line)
    }
}
