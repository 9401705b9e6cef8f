import Foundation
import XCTest

@testable import OrpcAgent

/// Public API that no other suite reaches: the application context a frame
/// carries, and the JSON Schemas a capability declares.
final class PublicAPITests: XCTestCase {
    /// A value of the application's own type, as `Frame.context` carries it.
    struct Tenant: Sendable, Equatable { let name: String }

    /// The frame's context is handed back, untouched and of its own type, to
    /// the handler (through the frozen frame) and to the output redactor.
    func testFrameContextReachesTheHandlerAndTheRedactor() async throws {
        let seenByRedactor = Locked<Tenant?>(nil)
        let reg = try CapabilityRegistry(capabilities: [
            Capability(
                "tenants.greet",
                meta: AgentMeta(
                    description: "Greets the caller's tenant.", expose: [.mcp: true], sideEffect: .read, risk: .low),
                redactOutput: { (out: String, info: RedactionInfo) in
                    seenByRedactor.with { $0 = info.context as? Tenant }
                    return out
                }
            ) { (_: JSONValue, cx: HandlerContext) in
                "hello \((cx.frame.context as? Tenant)?.name ?? "nobody")"
            }
        ])
        let out: Outcome<String> = try await reg.invoke(
            "tenants.greet", input: JSONValue.null, frame: Frame(surface: .mcp, context: Tenant(name: "acme")))
        XCTAssertEqual(out.value, "hello acme")
        XCTAssertEqual(seenByRedactor.with { $0 }, Tenant(name: "acme"))
        let none: Outcome<String> = try await reg.invoke(
            "tenants.greet", input: JSONValue.null, frame: Frame(surface: .mcp))
        XCTAssertEqual(none.value, "hello nobody")
        XCTAssertNil(seenByRedactor.with { $0 })
    }

    /// The schemas given to `Capability(inputSchema:outputSchema:)` are the
    /// ones the descriptors publish to adapters (MCP tools/list, AI SDK).
    func testDeclaredSchemasArePublishedInTheDescriptors() throws {
        let input: JSONValue = [
            "type": "object", "properties": ["orderId": ["type": "string"]], "required": ["orderId"],
        ]
        let output: JSONValue = ["type": "object", "properties": ["status": ["type": "string"]]]
        let reg = try CapabilityRegistry(capabilities: [
            Capability(
                "orders.status",
                meta: AgentMeta(
                    description: "Status of an order.", expose: [.mcp: true], sideEffect: .read, risk: .low),
                inputSchema: input, outputSchema: output
            ) { (_: JSONValue, _) in JSONValue.null },
            Capability(
                "orders.ping",
                meta: AgentMeta(description: "Ping.", expose: [.mcp: true], sideEffect: .none, risk: .low)
            ) { (_: JSONValue, _) in JSONValue.null },
        ])
        let byId = Dictionary(
            uniqueKeysWithValues: try reg.descriptors(surface: .mcp).map { ($0["id"]?.stringValue ?? "", $0) })
        XCTAssertEqual(byId.count, 2)
        let status = try XCTUnwrap(byId["orders.status"])
        XCTAssertTrue(jsonEqual(try XCTUnwrap(status["inputSchema"]), input), "\(status)")
        XCTAssertTrue(jsonEqual(try XCTUnwrap(status["outputSchema"]), output), "\(status)")
        let ping = try XCTUnwrap(byId["orders.ping"])
        XCTAssertFalse(jsonEqual(ping["inputSchema"] ?? .null, input), "a schema not given is not another's")
        XCTAssertNil(ping["outputSchema"].flatMap { $0 == .null ? nil : $0 }, "no output schema declared")
    }

    struct Receipt: Codable, Sendable { let id: String }
    struct Unrelated: Codable, Sendable { let count: Int }

    /// An output that does not decode as the caller's type: the call ran
    /// once and is audited ok, and the caller gets `OutputTypeMismatch`
    /// with the output as JSON — not a capability error it might retry.
    func testAnOutputOfAnotherTypeThanTheCallerAskedForIsAMismatchNotAFailedCall() async throws {
        let runs = Locked(0)
        let audit = Locked<[AuditRecord]>([])
        let reg = try CapabilityRegistry(
            capabilities: [
                Capability(
                    "orders.place",
                    meta: AgentMeta(
                        description: "Places an order.", expose: [.direct: true], sideEffect: .write, risk: .low)
                ) { (_: JSONValue, _) in
                    runs.with { $0 += 1 }
                    return Receipt(id: "r-1")
                }
            ],
            options: RegistryOptions(audit: { r in audit.with { $0.append(r) } }))
        do {
            let _: Outcome<Unrelated> = try await reg.invoke(
                "orders.place", input: JSONValue.null, frame: Frame(surface: .direct))
            XCTFail("a Receipt is not Unrelated")
        } catch let e as OutputTypeMismatch {
            XCTAssertEqual(e.capabilityId, "orders.place")
            XCTAssertTrue(e.requestedType.contains("Unrelated"), e.requestedType)
            XCTAssertEqual(e.output, ["id": "r-1"])
        }
        XCTAssertEqual(runs.with { $0 }, 1)
        XCTAssertEqual(audit.with { $0.last?.outcome }, "ok")
        let ok: Outcome<Receipt> = try await reg.invoke(
            "orders.place", input: JSONValue.null, frame: Frame(surface: .direct))
        XCTAssertEqual(ok.value?.id, "r-1")
    }
}
