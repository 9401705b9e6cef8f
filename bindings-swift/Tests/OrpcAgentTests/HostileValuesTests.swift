import Foundation
import XCTest

@testable import OrpcAgent

/// The same bounds, typed errors and audit as Node and Python under hostile
/// values: deep nesting, non-finite numbers, inputs that cannot be
/// exported, a validator's own text, a busy cooperative pool, declared and
/// host policies together.
final class HostileValuesTests: XCTestCase {
    /// Deep values built here are kept for the life of the test process:
    /// Swift releases nested enum payloads recursively, so dropping a value
    /// nested ~100 000 deep overflows the stack in whatever code releases it
    /// (README, "Deep values").
    static let kept = Locked<[JSONValue]>([])

    static func deep(_ depth: Int) -> JSONValue {
        var a: JSONValue = .array([])
        for _ in 1..<depth { a = .array([a]) }
        kept.with { $0.append(a) }
        return a
    }

    struct Counts {
        var validated = 0
        var handled = 0
        var policies = 0
    }

    func auditing(_ records: Locked<[AuditRecord]>, payloads: Bool = false, clock: any AgentClock = SystemClock())
        -> RegistryOptions
    {
        RegistryOptions(audit: { r in records.with { $0.append(r) } }, auditPayloads: payloads, clock: clock)
    }

    static func finished(_ records: Locked<[AuditRecord]>) -> [String] {
        records.with { $0.filter { $0.event == "finished" }.map { $0.outcome ?? "?" } }
    }

    /// JSON text with an integer beyond 64 bits is refused, as the core
    /// refuses it (UNREPRESENTABLE_NUMBER), never read as a rounded double.
    func testIntegersBeyond64BitsAreRefusedNotRounded() throws {
        XCTAssertEqual(try JSONValue(parsing: "18446744073709551615"), .uint(UInt64.max))
        XCTAssertEqual(try JSONValue(parsing: "-9223372036854775808"), .int(Int64.min))
        for text in ["18446744073709551616", "-9223372036854775809", "[1, 100000000000000000000000]"] {
            XCTAssertThrowsError(try JSONValue(parsing: text), text) { e in
                XCTAssertEqual((e as? JSONParseError)?.reason, "integer beyond 64 bits")
            }
        }
        XCTAssertEqual(try JSONValue(parsing: "1e20"), .double(1e20))
    }

    /// A model's arguments are read as JSON is read in Node and Python:
    /// an unpaired UTF-16 surrogate escape (which once trapped the process,
    /// or was replaced by U+FFFD, handing the handler another text than
    /// the one sent), a raw control character, a signed `\u` escape and
    /// numbers JSON does not write are refused with the offset; a proper
    /// surrogate pair is its character.
    func testTextThatIsNotJSONIsRefusedNeverTrappedOrRewritten() throws {
        XCTAssertEqual(try JSONValue(parsing: #""\ud83d\ude00""#), .string("\u{1F600}"))
        XCTAssertEqual(
            try JSONValue(parsing: #"[-0.5e-3, 0, 10, 1E+2]"#),
            .array([.double(-0.0005), .int(0), .int(10), .double(100)]))
        let surrogates = [
            #""\ud800\u0041""#, #""\ud800\ud800""#, #""\ud800""#, #""\udc00""#, #""\ud800\ue000""#, #""a\ud800x""#,
        ]
        for text in surrogates {
            XCTAssertThrowsError(try JSONValue(parsing: text), text) { e in
                XCTAssertEqual((e as? JSONParseError)?.reason, "unpaired surrogate", text)
            }
        }
        for text in [
            "+1", "01", "-01", ".5", "1.", "1e", "1e+", "-", "[1,+2]", #""\u+123""#, "\"a\u{0}b\"", "\"tab\there\"",
        ] {
            XCTAssertThrowsError(try JSONValue(parsing: text), text)
        }
    }

    /// A wrapper an app would use for a model's tool call.
    struct ToolCall: Codable, Sendable {
        let name: String
        let arguments: JSONValue
    }

    // MARK: 1. depth

    /// Nesting ≥ 10 000 (debug) crashed the process in the binding's own
    /// recursive serializer before the core could apply its limit (64).
    func testDeepInputsAreLimitExceededWithoutCrashing() async throws {
        for depth in [10_000, 100_000] {
            let records = Locked<[AuditRecord]>([])
            let counts = Locked(Counts())
            let meta = AgentMeta(description: "Echo.", expose: [.mcp: true], sideEffect: .read, risk: .low)
            let reg = try CapabilityRegistry(
                capabilities: [
                    Capability(
                        "json.echo", meta: meta,
                        validateInput: { (v: JSONValue) in
                            counts.with { $0.validated += 1 }
                            return v
                        }
                    ) { (v: JSONValue, _) in
                        counts.with { $0.handled += 1 }
                        return v
                    },
                    Capability("tool.call", meta: meta) { (c: ToolCall, _) in
                        counts.with { $0.handled += 1 }
                        return c.name
                    },
                ], options: auditing(records))
            let value = Self.deep(depth)
            for (name, input) in [
                ("json.echo", value as any Encodable & Sendable), ("tool.call", ToolCall(name: "x", arguments: value)),
            ] {
                do {
                    let _: Outcome<JSONValue> = try await reg.invoke(name, input: input, frame: Frame(surface: .mcp))
                    XCTFail("\(name) \(depth): expected LIMIT_EXCEEDED")
                } catch let e as CapabilityError {
                    XCTAssertEqual(e.code, .limitExceeded, "\(name) \(depth): \(e)")
                    XCTAssertEqual(e.details?["limit"], "depth", "\(name) \(depth)")
                    XCTAssertEqual(e.details?["max"]?.doubleValue, 64, "\(name) \(depth)")
                }
            }
            XCTAssertEqual(counts.with { $0.validated + $0.handled }, 0, "no hook sees a too-deep input")
            XCTAssertEqual(Self.finished(records), ["LIMIT_EXCEEDED", "LIMIT_EXCEEDED"])
            // The hash refuses it too (the core's TOO_DEEP), without a crash.
            do {
                _ = try InputHash.of(capability: "json.echo", input: value)
                XCTFail("hashed a value nested \(depth) deep")
            } catch let e as CapabilityError {
                XCTAssertEqual(e.code, .invalidInput)
                XCTAssertEqual(e.details?["reason"], "TOO_DEEP")
            }
            XCTAssertEqual(value.jsonText.utf8.count, 2 * depth, "jsonText writes any depth")
        }
    }

    struct Tree: Codable, Sendable { var kids: [Tree] }

    /// `n` trees nested: JSON depth 2n (an object, its `kids` array, …).
    static func tree(_ n: Int) -> Tree {
        var t = Tree(kids: [])
        for _ in 1..<n { t = Tree(kids: [t]) }
        return t
    }

    /// A typed value is walked by a probe that stops where the core's
    /// limit is: the same verdict as the core gives its JSON text, at the
    /// boundary (64 levels pass, 65 do not).
    func testTheDepthLimitOfTypedValuesIsTheCores() async throws {
        let meta = AgentMeta(description: "Echo.", expose: [.mcp: true], sideEffect: .read, risk: .low)
        let reg = try CapabilityRegistry(capabilities: [
            Capability("tree.count", meta: meta) { (t: Tree, _) in t.kids.count },
            Capability("tool.call", meta: meta) { (c: ToolCall, _) in c.name },
            Capability("json.echo", meta: meta) { (v: JSONValue, _) in v },
        ])
        func verdict(_ name: String, _ input: any Encodable & Sendable) async -> String {
            do {
                let _: Outcome<JSONValue> = try await reg.invoke(name, input: input, frame: Frame(surface: .mcp))
                return "ok"
            } catch let e as CapabilityError {
                return "\(e.code.rawValue) \(e.details?["limit"]?.stringValue ?? "")"
            } catch { return "\(error)" }
        }
        for (n, expected) in [(32, "ok"), (33, "LIMIT_EXCEEDED depth")] {
            let typed = Self.tree(n)
            let typedVerdict = await verdict("tree.count", typed)
            XCTAssertEqual(typedVerdict, expected, "a tree of depth \(2 * n)")
            let jsonVerdict = await verdict("json.echo", try JSONBridge.convert(typed, to: JSONValue.self))
            XCTAssertEqual(jsonVerdict, expected, "the same as JSON")
        }
        // A JSONValue inside a typed value: the wrapper is depth 1.
        for (d, expected) in [(63, "ok"), (64, "LIMIT_EXCEEDED depth")] {
            let got = await verdict("tool.call", ToolCall(name: "x", arguments: Self.deep(d)))
            XCTAssertEqual(got, expected, "arguments \(d) deep")
        }
    }

    /// A handler error's details with a non-finite number have no JSON
    /// form: they are left out (as Node and Python leave out details with
    /// no JSON form), and the error keeps its code and message. Finite
    /// details arrive as thrown.
    func testHandlerErrorDetailsWithNoJSONFormAreLeftOut() async throws {
        let meta = AgentMeta(description: "Busy.", expose: [.mcp: true], sideEffect: .read, risk: .low)
        let reg = try CapabilityRegistry(capabilities: [
            Capability("busy.nan", meta: meta) { (_: JSONValue, _) -> JSONValue in
                throw CapabilityError(.limitExceeded, "Busy.", details: ["retryAfter": .double(.nan)])
            },
            Capability("busy.finite", meta: meta) { (_: JSONValue, _) -> JSONValue in
                throw CapabilityError(.limitExceeded, "Busy.", details: ["retryAfter": .double(1.5)])
            },
        ])
        let cases: [(String, JSONValue?)] = [("busy.nan", nil), ("busy.finite", ["retryAfter": .double(1.5)])]
        for (name, details) in cases {
            do {
                let _: Outcome<JSONValue> = try await reg.invoke(
                    name, input: JSONValue.null, frame: Frame(surface: .mcp))
                XCTFail("\(name) succeeded")
            } catch let e as CapabilityError {
                XCTAssertEqual(e.code, .limitExceeded, name)
                XCTAssertEqual(e.message, "Busy.", name)
                XCTAssertEqual(e.details, details, name)
            }
        }
    }

    /// A handler's deep output: exported for the audit payload without a
    /// crash (as null: it has no JSON form the core reads) and returned.
    func testADeepOutputIsReturnedAndAuditedWithoutCrashing() async throws {
        let records = Locked<[AuditRecord]>([])
        let value = Self.deep(100_000)
        let reg = try CapabilityRegistry(
            capabilities: [
                Capability(
                    "json.deep",
                    meta: AgentMeta(description: "Deep.", expose: [.mcp: true], sideEffect: .read, risk: .low)
                ) {
                    (_: JSONValue, _) in value
                }
            ], options: auditing(records, payloads: true))
        let out: Outcome<JSONValue> = try await reg.invoke(
            "json.deep", input: JSONValue.null, frame: Frame(surface: .mcp))
        XCTAssertNotNil(out.value)
        if let v = out.value { Self.kept.with { $0.append(v) } }
        XCTAssertEqual(Self.finished(records), ["ok"])
        XCTAssertEqual(records.with { $0.last?.json["output"] }, .null)
    }

    // MARK: 2. non-finite numbers

    struct Amount: Codable, Sendable { let amount: Double }

    /// NaN and ±∞ became `null` on the way to the handler, the policies and
    /// the approval hash; they are INVALID_INPUT (NON_FINITE_NUMBER).
    func testNonFiniteNumbersAreInvalidInput() async throws {
        for x in [Double.nan, .infinity, -.infinity] {
            let records = Locked<[AuditRecord]>([])
            let counts = Locked(Counts())
            func meta(approval: Bool = false) -> AgentMeta {
                AgentMeta(
                    description: "Pay.", expose: [.mcp: true], sideEffect: .write, risk: .high,
                    approval: approval ? .init(required: true) : nil)
            }
            let seeing = HostPolicy(name: "sees") { _ in
                counts.with { $0.policies += 1 }
                return .allow
            }
            let reg = try CapabilityRegistry(
                capabilities: [
                    Capability("pay.typed", meta: meta()) { (a: Amount, _) in
                        counts.with { $0.handled += 1 }
                        return a.amount
                    },
                    Capability("pay.json", meta: meta()) { (v: JSONValue, _) in
                        counts.with { $0.handled += 1 }
                        return v
                    },
                    Capability("pay.approved", meta: meta(approval: true)) { (v: JSONValue, _) in
                        counts.with { $0.handled += 1 }
                        return v
                    },
                    Capability("pay.policed", meta: meta(), policies: [.host(seeing)]) { (v: JSONValue, _) in
                        counts.with { $0.handled += 1 }
                        return v
                    },
                ], options: auditing(records))
            let json: JSONValue = ["amount": .double(x)]
            let calls: [(String, any Encodable & Sendable)] = [
                ("pay.typed", json), ("pay.json", json), ("pay.approved", json), ("pay.policed", json),
                ("pay.typed", Amount(amount: x)), ("pay.approved", Amount(amount: x)),
            ]
            for (name, input) in calls {
                do {
                    let out: Outcome<JSONValue> = try await reg.invoke(name, input: input, frame: Frame(surface: .mcp))
                    XCTFail("\(name) \(x): expected INVALID_INPUT, got \(out)")
                } catch let e as CapabilityError {
                    XCTAssertEqual(e.code, .invalidInput, "\(name) \(x): \(e)")
                    XCTAssertEqual(e.details?["reason"], "NON_FINITE_NUMBER", "\(name) \(x): \(e)")
                    XCTAssertTrue(e.message.contains("/amount"), "\(name) \(x): where, as the core words it: \(e)")
                }
            }
            XCTAssertEqual(counts.with { $0.handled + $0.policies }, 0, "\(x): no handler or policy saw it")
            XCTAssertEqual(try reg.approvals().count, 0, "\(x): no approval stored")
            XCTAssertEqual(Self.finished(records), Array(repeating: "INVALID_INPUT", count: calls.count), "\(x)")
            for hash in [
                { try InputHash.of(capability: "pay.approved", input: json) },
                { try InputHash.of(capability: "pay.approved", encoding: Amount(amount: x)) },
            ] {
                do {
                    let h = try hash()
                    XCTFail("\(x): hashed as \(h)")
                } catch let e as CapabilityError {
                    XCTAssertEqual(e.code, .invalidInput)
                    XCTAssertEqual(e.details?["reason"], "NON_FINITE_NUMBER", "\(x): \(e)")
                }
            }
        }
    }

    // MARK: 3, 8. an input the host cannot export

    /// A value whose `encode(to:)` throws: the application's own in-process
    /// value, with no JSON form.
    struct Opaque: Codable, Sendable {
        let id: Int
        struct Refused: Error {}
        func encode(to encoder: Encoder) throws { throw Refused() }
    }

    /// A NaN or infinite number in the actor's attributes was `null` to the
    /// core (so to Cedar and the audit record); it is INVALID_INPUT before
    /// the call starts, as in Node and Python, and nothing runs.
    func testANonFiniteActorAttributeIsRefusedBeforeTheCall() async throws {
        let counts = Locked(Counts())
        let meta = AgentMeta(description: "Read.", expose: [.mcp: true], sideEffect: .read, risk: .low)
        let reg = try CapabilityRegistry(capabilities: [
            Capability("notes.read", meta: meta) { (v: JSONValue, _) in
                counts.with { $0.handled += 1 }
                return v
            }
        ])
        for x in [Double.nan, .infinity] {
            let frame = Frame(surface: .mcp, actor: Actor(id: "ann", attributes: ["score": .double(x)]))
            do {
                let _: Outcome<JSONValue> = try await reg.invoke("notes.read", input: JSONValue.null, frame: frame)
                XCTFail("\(x): ran")
            } catch let e as CapabilityError {
                XCTAssertEqual(e.code, .invalidInput)
                XCTAssertEqual(
                    e.message, "input at /attributes/score is NaN or infinite; only finite numbers can be hashed")
            }
        }
        let finite = Frame(surface: .mcp, actor: Actor(id: "ann", attributes: ["score": .double(1.5)]))
        let _: Outcome<JSONValue> = try await reg.invoke("notes.read", input: JSONValue.null, frame: finite)
        XCTAssertEqual(counts.with { $0.handled }, 1)
        // A trusted resume takes no actor from its frame (the core's rule,
        // vector frames.json): the same attribute is not even read there.
        let hostile = Frame(surface: .mcp, actor: Actor(id: "ann", attributes: ["score": .double(.nan)]))
        do {
            let _: Outcome<JSONValue> = try await reg.resume(
                "apr_00000000000000000000000000000000", frame: hostile)
            XCTFail("resumed a request no store holds")
        } catch let e as CapabilityError {
            XCTAssertEqual(e.code, .approvalNotFound)
        }
    }

    /// The core asks for the input as JSON (the approval hash, an input
    /// predicate) and there is none: INVALID_INPUT, audited as finished —
    /// it threw out of the driver with no record.
    func testAnInputWithNoJSONFormIsAuditedInvalidInput() async throws {
        let records = Locked<[AuditRecord]>([])
        let counts = Locked(Counts())
        let gated = AgentMeta(
            description: "Gated.", expose: [.mcp: true], sideEffect: .write, risk: .high,
            approval: .init(required: true))
        let predicated = AgentMeta(
            description: "Predicated.", expose: [.mcp: true], sideEffect: .read, risk: .low,
            policies: [["decision": "deny", "when": ["input": ["/id == 7"]]]])
        let reg = try CapabilityRegistry(
            capabilities: [
                Capability("opaque.gated", meta: gated) { (o: Opaque, _) in
                    counts.with { $0.handled += 1 }
                    return o.id
                },
                Capability("json.gated", meta: gated) { (v: JSONValue, _) in
                    counts.with { $0.handled += 1 }
                    return v
                },
                Capability("opaque.predicated", meta: predicated) { (o: Opaque, _) in
                    counts.with { $0.handled += 1 }
                    return o.id
                },
                // No validator, policy or gate: the input is first converted
                // as the handler starts, and refused there by the core.
                Capability(
                    "json.plain",
                    meta: AgentMeta(description: "Plain.", expose: [.mcp: true], sideEffect: .read, risk: .low)
                ) { (v: JSONValue, _) in
                    counts.with { $0.handled += 1 }
                    return v
                },
            ], options: auditing(records))
        for name in ["opaque.gated", "json.gated", "opaque.predicated", "json.plain"] {
            do {
                let _: Outcome<JSONValue> = try await reg.invoke(
                    name, input: Opaque(id: 7), frame: Frame(surface: .mcp))
                XCTFail("\(name): expected INVALID_INPUT")
            } catch let e as CapabilityError {
                XCTAssertEqual(e.code, .invalidInput, "\(name): \(e)")
                if name.hasPrefix("opaque.") {
                    // The core's reason, as Node and Python word it, said as
                    // what needed the input: the gate, or a predicate.
                    let what = name == "opaque.gated" ? "bound to an approval" : "judged by a policy"
                    XCTAssertEqual(e.message, "The input cannot be \(what): a value in it has no JSON form.")
                }
                if name == "json.plain" {
                    XCTAssertEqual(e.message, "The input could not be validated, so the call did not run.")
                }
            }
        }
        XCTAssertEqual(counts.with { $0.handled }, 0)
        XCTAssertEqual(Self.finished(records), ["INVALID_INPUT", "INVALID_INPUT", "INVALID_INPUT", "INVALID_INPUT"])
    }

    // MARK: 5. a validator's plain error

    /// A plain error thrown by `validateInput` reached the caller with its
    /// text (SI-10): the message is the generic one; the text is nowhere.
    func testAValidatorsPlainErrorTextNeverLeaves() async throws {
        struct Leaky: Error, CustomStringConvertible { var description: String { "card 4111-1111-1111-1111 refused" } }
        let records = Locked<[AuditRecord]>([])
        let reg = try CapabilityRegistry(
            capabilities: [
                Capability(
                    "card.check",
                    meta: AgentMeta(description: "Check.", expose: [.mcp: true], sideEffect: .read, risk: .low),
                    validateInput: { (_: JSONValue) in throw Leaky() }
                ) { (v: JSONValue, _) in v }
            ], options: auditing(records))
        do {
            let _: Outcome<JSONValue> = try await reg.invoke(
                "card.check", input: ["card": "x"] as JSONValue, frame: Frame(surface: .mcp))
            XCTFail("expected INVALID_INPUT")
        } catch let e as CapabilityError {
            XCTAssertEqual(e.code, .invalidInput)
            XCTAssertFalse("\(e) \(e.json.jsonText)".contains("4111"), "\(e)")
            XCTAssertEqual(e.message, "The input could not be validated, so the call did not run.")
        }
        XCTAssertEqual(Self.finished(records), ["INVALID_INPUT"])
        XCTAssertFalse(records.with { $0.map(\.json.jsonText).joined() }.contains("4111"))
    }

    /// An input that does not decode as the handler's type: where and what,
    /// never the value — a `dataCorrupted` description quotes it ("Cannot
    /// initialize Kind from invalid String value …"). The core writes the
    /// message from the issue, as for Node's and Python's validators.
    func testADecodingFailureNeverQuotesTheValue() async throws {
        enum Kind: String, Codable, Sendable { case card, bank }
        struct Pay: Codable, Sendable {
            let kind: Kind
            let cents: Int
        }
        let records = Locked<[AuditRecord]>([])
        let reg = try CapabilityRegistry(
            capabilities: [
                Capability(
                    "pay.send",
                    meta: AgentMeta(description: "Pay.", expose: [.mcp: true], sideEffect: .external, risk: .low)
                ) { (p: Pay, _) in p.cents }
            ], options: auditing(records))
        for (input, path) in [
            (["kind": "SECRET-4111", "cents": 5] as JSONValue, "/kind"),
            (["kind": "card", "cents": "SECRET-4111"] as JSONValue, "/cents"),
            (["kind": "card"] as JSONValue, "/cents"),
        ] {
            do {
                let _: Outcome<Int> = try await reg.invoke("pay.send", input: input, frame: Frame(surface: .mcp))
                XCTFail("expected INVALID_INPUT")
            } catch let e as CapabilityError {
                XCTAssertEqual(e.code, .invalidInput)
                XCTAssertFalse("\(e) \(e.json.jsonText)".contains("SECRET"), "\(e)")
                XCTAssertTrue(e.message.contains(path), "\(e.message)")
            }
        }
        XCTAssertEqual(Self.finished(records), ["INVALID_INPUT", "INVALID_INPUT", "INVALID_INPUT"])
    }

    // MARK: 6. declared and host policies

    /// Host policies given to `Capability(policies:)` replaced the declared
    /// `AgentMeta.policies`, so a declared deny vanished. Both apply.
    func testDeclaredAndHostPoliciesBothApply() async throws {
        let ran = Locked<[String]>([])
        func host(_ name: String, _ d: PolicyDecision) -> HostPolicy {
            HostPolicy(name: name) { _ in
                ran.with { $0.append(name) }
                return d
            }
        }
        func meta(_ policies: [JSONValue]) -> AgentMeta {
            AgentMeta(description: "Read.", expose: [.mcp: true], sideEffect: .read, risk: .low, policies: policies)
        }
        let deny: JSONValue = ["name": "declared-deny", "decision": "deny", "reason": "declared"]
        let reg = try CapabilityRegistry(
            capabilities: [
                Capability("a.declaredDeny", meta: meta([deny]), policies: [.host(host("allow", .allow))]) {
                    (v: JSONValue, _) in v
                },
                Capability(
                    "a.hostDeny", meta: meta([["decision": "allow"]]),
                    policies: [.host(host("deny", .deny(reason: "host")))]
                ) {
                    (v: JSONValue, _) in v
                },
                // A declared host marker (as read from a file) is implemented
                // by the host policy of its name, in its declared place.
                Capability(
                    "a.marker", meta: meta([["host": true, "name": "fraud"], ["decision": "allow"]]),
                    policies: [.host(host("fraud", .deny(reason: "fraud")))]
                ) { (v: JSONValue, _) in v },
            ])
        for (name, reason) in [("a.declaredDeny", "declared"), ("a.hostDeny", "host"), ("a.marker", "fraud")] {
            do {
                let _: Outcome<JSONValue> = try await reg.invoke(
                    name, input: JSONValue.null, frame: Frame(surface: .mcp))
                XCTFail("\(name): expected POLICY_DENIED")
            } catch let e as CapabilityError {
                XCTAssertEqual(e.code, .policyDenied, "\(name): \(e)")
                XCTAssertTrue(e.message.contains(reason), "\(name): \(e)")
            }
        }
        // Declared first: the declared deny stops before the host allow runs.
        XCTAssertEqual(ran.with { $0 }, ["deny", "fraud"])
        // The same for runtime policies: the options' declared list and the
        // typed one both apply.
        var options = RegistryOptions(policies: [.host(host("runtime-allow", .allow))])
        options.json = ["policies": [deny]]
        let runtime = try CapabilityRegistry(
            capabilities: [Capability("b.read", meta: meta([])) { (v: JSONValue, _) in v }], options: options)
        await assertThrows(.policyDenied) {
            let _: Outcome<JSONValue> = try await runtime.invoke(
                "b.read", input: JSONValue.null, frame: Frame(surface: .mcp))
        }
        // A declared host marker with no host policy of its name is a build problem.
        XCTAssertThrowsError(
            try CapabilityRegistry(capabilities: [
                Capability(
                    "c.read", meta: meta([["host": true, "name": "gone"]]), policies: [.host(host("other", .allow))]
                ) {
                    (v: JSONValue, _) in v
                }
            ])
        ) { e in
            XCTAssertEqual((e as? RegistryError)?.problems.map(\.code), ["MISSING_HOOK"], "\(e)")
        }
    }

    // MARK: 4. the deadline and a busy cooperative pool

    /// A clock whose timers fire only when the test says, on the test's own
    /// thread (never Swift's cooperative pool).
    final class GateClock: AgentClock, @unchecked Sendable {
        final class Timer: AgentTimer, @unchecked Sendable {
            let at: UInt64
            let fire: @Sendable () -> Void
            var cancelled = false
            init(at: UInt64, fire: @escaping @Sendable () -> Void) {
                self.at = at
                self.fire = fire
            }
            func cancel() { cancelled = true }
        }
        private let state = Locked<(now: UInt64, timers: [Timer])>((1_000_000, []))
        func nowMs() -> UInt64 { state.with { $0.now } }
        func sleep(untilMs: UInt64) async throws { throw CancellationError() }
        func schedule(atMs at: UInt64, _ fire: @escaping @Sendable () -> Void) -> AgentTimer {
            let t = Timer(at: at, fire: fire)
            state.with { $0.timers.append(t) }
            return t
        }
        func advance(by ms: UInt64) {
            let due: [Timer] = state.with { s in
                s.now += ms
                let due = s.timers.filter { $0.at <= s.now }
                s.timers.removeAll { $0.at <= s.now }
                return due
            }
            for t in due where !t.cancelled { t.fire() }
        }
    }

    /// Handlers that have started, and whether they may stop blocking.
    final class Gate: @unchecked Sendable {
        let cond = NSCondition()
        private var started = 0
        private var released = false
        func start() {
            cond.lock()
            started += 1
            cond.broadcast()
            cond.unlock()
        }
        func release() {
            cond.lock()
            released = true
            cond.unlock()
        }
        var isReleased: Bool {
            cond.lock()
            defer { cond.unlock() }
            return released
        }
        /// Blocks the calling thread with `Thread.sleep` until released (or
        /// a bound passes); whether it was released.
        func block() -> Bool {
            let bound = Date().addingTimeInterval(15)
            while !isReleased, Date() < bound { Thread.sleep(forTimeInterval: 0.002) }
            return isReleased
        }
        var startedCount: Int {
            cond.lock()
            defer { cond.unlock() }
            return started
        }
        /// Waits (bounded) until `n` handlers started; whether they did.
        func waitStarted(_ n: Int, until bound: Date) -> Bool {
            cond.lock()
            defer { cond.unlock() }
            while started < n, cond.wait(until: bound) {}
            return started >= n
        }
    }

    /// As many blocking handlers as the cooperative pool has threads: the
    /// deadline's TIMEOUT came only when a thread freed up. Now every call
    /// ends (TIMEOUT decided and audited) while the handlers still block.
    /// Order of events, no durations: the clock moves past the deadline once
    /// every handler blocks, and the handlers are released only by the last
    /// TIMEOUT record (or give up after a bound, failing the test).
    func testTheDeadlineDoesNotWaitForTheCooperativePool() async throws {
        let width = ProcessInfo.processInfo.activeProcessorCount  // the cooperative pool's width
        let clock = GateClock()
        let log = try await blockEveryPoolThread(width, clock: clock) { gate, events in
            // Off the pool: once every handler blocks, move past the deadline.
            Thread {
                let all = gate.waitStarted(width, until: Date().addingTimeInterval(15))
                events.with { $0.append(all ? "all handlers block" : "handlers did not all start") }
                clock.advance(by: 1_000)
            }.start()
        }
        let expected = ["all handlers block"] + Array(repeating: "finished TIMEOUT", count: width)
        XCTAssertEqual(
            Array(log.prefix(width + 1)), expected, "every call ended before any handler stopped blocking: \(log)")
        XCTAssertEqual(log.filter { $0 == "handler released" }.count, width, "\(log)")
    }

    /// The same on the system clock: its deadline thread hands a fired
    /// deadline to a dispatch queue, never the cooperative pool. (A handler
    /// the pool starts only past its deadline is never started, so this one
    /// can pass on a loaded machine without the pool being full; the gated
    /// test above cannot.)
    func testTheSystemClockDeadlineDoesNotWaitForTheCooperativePool() async throws {
        let width = ProcessInfo.processInfo.activeProcessorCount
        let log = try await blockEveryPoolThread(width, clock: SystemClock()) { _, _ in }
        XCTAssertEqual(Array(log.prefix(width)), Array(repeating: "finished TIMEOUT", count: width), "\(log)")
        XCTAssertFalse(log.contains("handler gave up"), "\(log)")
    }

    /// Runs `width` calls whose handlers block their thread with
    /// `Thread.sleep` until the `width`-th finished audit record releases
    /// them; returns the events in order.
    func blockEveryPoolThread(
        _ width: Int, clock: any AgentClock, control: (Gate, Locked<[String]>) -> Void
    ) async throws -> [String] {
        let events = Locked<[String]>([])
        let gate = Gate()
        let reg = try CapabilityRegistry(
            capabilities: [
                Capability(
                    "work.block",
                    meta: AgentMeta(
                        description: "Blocks.", expose: [.mcp: true], sideEffect: .read, risk: .low, timeoutMs: 100)
                ) { (v: JSONValue, _) in
                    gate.start()
                    let released = gate.block()
                    events.with { $0.append(released ? "handler released" : "handler gave up") }
                    return v
                }
            ],
            options: RegistryOptions(
                audit: { r in
                    guard r.event == "finished" else { return }
                    let n = events.with { e -> Int in
                        e.append("finished \(r.outcome ?? "?")")
                        return e.filter { $0.hasPrefix("finished") }.count
                    }
                    if n == width { gate.release() }
                }, clock: clock))
        control(gate, events)
        let codes = try await withThrowingTaskGroup(of: String.self) { group in
            for i in 0..<width {
                group.addTask {
                    do {
                        let _: Outcome<JSONValue> = try await reg.invoke(
                            "work.block", input: JSONValue.int(Int64(i)), frame: Frame(surface: .mcp))
                        return "ok"
                    } catch let e as CapabilityError { return e.code.rawValue }
                }
            }
            var out: [String] = []
            for try await c in group { out.append(c) }
            return out
        }
        XCTAssertEqual(codes, Array(repeating: "TIMEOUT", count: width))
        // The abandoned handlers that started note how they stopped; wait for them (bounded).
        for _ in 0..<20_000 where events.with({ $0.filter { $0.hasPrefix("handler") }.count }) < gate.startedCount {
            try await Task.sleep(nanoseconds: 1_000_000)
        }
        return events.with { $0 }
    }
}
