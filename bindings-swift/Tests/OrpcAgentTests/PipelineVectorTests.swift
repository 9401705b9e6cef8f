import Foundation
import XCTest

@testable import OrpcAgent

/// Every case of tests/vectors/pipeline through the public API, on a
/// virtual clock so deadlines, backoff and expiry are exact.
final class PipelineVectorTests: XCTestCase {
    func testEveryPipelineVector() async throws {
        let cases = try Vectors.cases("pipeline")
        XCTAssertGreaterThan(cases.count, 0, "no pipeline vectors found")
        var invariants = Set<String>()
        var stages = Set<Int64>()
        var operations = 0
        for (file, c) in cases {
            for s in c["invariants"]?.arrayValue ?? [] { invariants.insert(s.stringValue ?? "") }
            for s in c["stages"]?.arrayValue ?? [] { if case .int(let n) = s { stages.insert(n) } }
            operations += try await PipelineCase(name: "\(file): \(c["name"]?.stringValue ?? "?")", v: c).run()
        }
        print("pipeline vectors: \(cases.count) cases, \(operations) operations")
        XCTAssertGreaterThan(operations, cases.count, "operations ran")
        XCTAssertEqual(invariants, Set((1...12).map { "SI-\($0)" }), "every invariant has a vector")
        XCTAssertEqual(stages, Set(1...14), "every stage has a vector")
    }
}

struct PipelineCase {
    let name: String
    let v: JSONValue

    func frame(_ op: JSONValue) -> Frame {
        let f = op["frame"] ?? ["surface": "mcp"]
        var frame = Frame(surface: Surface(rawValue: f["surface"]?.stringValue ?? "") ?? .mcp)
        if let a = f["actor"] { frame.actor = (try? JSONBridge.convert(a, to: Actor.self)) ?? Actor() }
        if let t = f["trace"] {
            frame.trace = TraceContext(
                traceparent: t["traceparent"]?.stringValue ?? "", tracestate: t["tracestate"]?.stringValue)
        }
        frame.requestId = f["requestId"]?.stringValue
        frame.agentId = f["agentId"]?.stringValue
        frame.sessionId = f["sessionId"]?.stringValue
        return frame
    }

    func hostPolicy(_ declared: JSONValue, clock: ManualClock) -> Policy {
        let spec = v["hostPolicies"]?[declared["name"]?.stringValue ?? ""] ?? .null
        var p = HostPolicy(name: declared["name"]?.stringValue) { request in
            switch spec["kind"]?.stringValue ?? "" {
            case "allow": return .allow
            case "deny-anonymous":
                let anonymous = request.frame.actor.id == nil && request.frame.sessionId == nil
                return anonymous ? .deny(reason: spec["reason"]?.stringValue) : .allow
            case "abstain": return .abstain
            case "deny": return .deny(reason: spec["reason"]?.stringValue)
            case "require-approval":
                return .requireApproval(
                    type: spec["approvalType"]?.stringValue, reason: spec["reason"]?.stringValue,
                    expiresInMs: spec["expiresInMs"]?.uint64Value)
            case "delay":
                // Registered before the policy first suspends (ManualClock).
                await clock.waiter(untilMs: clock.nowMs() + (spec["ms"]?.uint64Value ?? 0)).wait()
                return .allow
            default: throw CapabilityError(.internal, "host policy threw")
            }
        }
        p.declared = declared
        return .host(p)
    }

    func policies(_ list: JSONValue?, clock: ManualClock) -> [Policy]? {
        guard let list = list?.arrayValue, list.contains(where: { $0["host"] == .bool(true) }) else { return nil }
        return list.map { $0["host"] == .bool(true) ? hostPolicy($0, clock: clock) : .rule($0) }
    }

    func redactor(_ spec: JSONValue?) -> (@Sendable (JSONValue, RedactionInfo) async throws -> JSONValue)? {
        guard let spec else { return nil }
        return { value, _ in
            guard spec["kind"] == "mask-fields" else { throw CapabilityError(.internal, "redactor threw") }
            guard var o = value.objectValue else { return value }
            for f in spec["fields"]?.arrayValue ?? [] { if let k = f.stringValue, o[k] != nil { o[k] = "***" } }
            return .object(o)
        }
    }

    func capabilities(clock: ManualClock, calls: Locked<[String: Int]>) -> [Capability] {
        var out: [Capability] = []
        for (id, c) in v["capabilities"]?.objectValue ?? JSONObject() {
            out.append(capability(id, c, clock: clock, calls: calls))
        }
        return out
    }

    func capability(_ id: String, _ c: JSONValue, clock: ManualClock, calls: Locked<[String: Int]>) -> Capability {
        do {
            var meta = c["meta"] ?? .null
            let hostPolicies = policies(meta["policies"], clock: clock)
            if hostPolicies != nil, case .object(var o) = meta {
                o["policies"] = nil
                meta = .object(o)
            }
            let h = c["handler"] ?? .null
            let handler: @Sendable (JSONValue, HandlerContext) async throws -> JSONValue = { input, _ in
                let n = calls.with { d -> Int in
                    d[id, default: 0] += 1
                    return d[id]!
                }
                switch h["kind"]?.stringValue ?? "" {
                case "echo": return input
                case "fail-with-code":
                    // The enum-case form an app throws (`.timeout(ErrorInfo(…))`);
                    // no flag in the vector: none given (the code's default).
                    throw CapabilityError(
                        ErrorCode(rawValue: h["code"]?.stringValue ?? "") ?? .internal,
                        ErrorInfo(
                            "the handler's own error", retryable: h["retryable"]?.boolValue, details: h["details"]))
                case "fail-retryable-n-times":
                    if n <= Int(h["n"]?.uint64Value ?? 0) {
                        throw CapabilityError(.executionFailed, "transient failure \(n)", retryable: true)
                    }
                    return input
                case "delay":
                    // Ignores its cancellation, like a badly behaved handler;
                    // registered before it first suspends (ManualClock).
                    await clock.waiter(untilMs: clock.nowMs() + (h["ms"]?.uint64Value ?? 0)).wait()
                    return input
                case "cancel-itself":
                    throw CancellationError()  // its own, the caller not cancelled
                default:
                    struct Thrown: Error { let message: String }
                    throw Thrown(message: h["message"]?.stringValue ?? "thrown")
                }
            }
            let inSchema = c["inputSchema"]
            let outSchema = c["outputSchema"]
            let codes = (c["retryOn"]?["codes"]?.arrayValue ?? []).compactMap(\.stringValue)
            typealias Check = @Sendable (JSONValue) async throws -> JSONValue
            let validateIn: Check? = inSchema.map { s in { v in try checkSchema(s, v) } }
            let validateOut: Check? = outSchema.map { s in { v in try checkSchema(s, v) } }
            var retryOn: (@Sendable (CapabilityError) -> Bool)?
            if c["retryOn"] != nil { retryOn = { (e: CapabilityError) -> Bool in codes.contains(e.code.rawValue) } }
            let redactOut = redactor(c["redactOutput"])
            let redactIn = redactor(c["redactApprovalInput"])
            return Capability(
                id, meta: AgentMeta(json: meta), input: JSONValue.self, output: JSONValue.self,
                validateInput: validateIn, validateOutput: validateOut,
                redactOutput: redactOut, redactApprovalInput: redactIn, retryOn: retryOn,
                policies: hostPolicies ?? [],
                handler: handler)
        }
    }

    func outcomeJSON(_ r: Result<Outcome<JSONValue>, Error>) -> JSONValue {
        switch r {
        case .success(.ok(let out)): return ["status": "ok", "output": out]
        case .success(.approvalRequired(let a)):
            var ap = JSONObject()
            ap["type"] = a.type.map { .string($0) } ?? .null
            ap["reason"] = a.reason.map { .string($0) } ?? .null
            ap["expiresInMs"] = .int(Int64(a.expiresAt - a.createdAt))
            ap["surface"] = .string(a.surface.rawValue)
            ap["actorId"] = a.actor.id.map { .string($0) } ?? .null
            ap["input"] = a.input
            ap["capabilityId"] = .string(a.capabilityId)
            return ["status": "approval_required", "approval": .object(ap)]
        case .failure(let e as CapabilityError):
            return ["status": "error", "code": .string(e.code.rawValue), "error": e.json]
        case .failure(let e): return ["status": "unexpected", "error": .string("\(e)")]
        }
    }

    /// Runs the case; returns how many operations it checked.
    func run() async throws -> Int {
        let clock = ManualClock()
        defer { clock.drain() }
        let calls = Locked<[String: Int]>([:])
        let records = Locked<[AuditRecord]>([])
        // The clock when each call's finished record was delivered: when it
        // ended (read after the await, the clock could have moved on since).
        let endedAt = Locked<UInt64?>(nil)
        var runtimePolicies: [Policy] = []
        if let list = v["options"]?["policies"] {
            runtimePolicies = policies(list, clock: clock) ?? []
        }
        var options = RegistryOptions(
            defaults: v["options"]?["defaults"], policies: runtimePolicies,
            approverMustDiffer: v["options"]?["approverMustDiffer"]?.boolValue,
            audit: { r in
                if r.event == "finished" { endedAt.with { $0 = clock.nowMs() } }
                records.with { $0.append(r) }
            },
            auditPayloads: v["auditPayloads"]?.boolValue ?? false, clock: clock)
        if runtimePolicies.isEmpty, let list = v["options"]?["policies"]?.arrayValue {
            options.policies = list.map { .rule($0) }
        }
        let registry: CapabilityRegistry
        do {
            registry = try CapabilityRegistry(capabilities: capabilities(clock: clock, calls: calls), options: options)
        } catch {
            if v["expectBuildError"] == .bool(true), error is RegistryError { return 1 }
            XCTFail("\(name): registry: \(error)")
            return 0
        }
        if v["expectBuildError"] == .bool(true) {
            XCTFail("\(name): the registry built but should not")
            return 0
        }
        var checked = 0
        var saved: [String: String] = [:]
        var errors: [JSONValue] = []
        try await clock.run {
            for (i, op) in (v["operations"]?.arrayValue ?? []).enumerated() {
                let at = "\(name) op[\(i)]"
                let t0 = clock.nowMs()
                let result: Result<Outcome<JSONValue>, Error>
                switch op["op"]?.stringValue ?? "" {
                case "advance":
                    clock.advance(by: op["ms"]?.uint64Value ?? 0)
                    errors.append(.null)
                    continue
                case "decide":
                    let id = saved[op["approval"]?.stringValue ?? ""] ?? ""
                    let approver = op["approver"]?.stringValue
                    var got: JSONValue = ["status": "ok"]
                    do {
                        if op["decision"] == "approve" {
                            try registry.approve(id, approver: approver, reason: op["reason"]?.stringValue)
                        } else {
                            try registry.reject(id, approver: approver, reason: op["reason"]?.stringValue)
                        }
                    } catch let e as CapabilityError { got = ["status": "error", "code": .string(e.code.rawValue)] }
                    XCTAssertTrue(
                        subset(op["expect"] ?? .null, got),
                        "\(at): expected \(op["expect"]!.jsonText) got \(got.jsonText)")
                    errors.append(.null)
                    continue
                case "approvalInput":
                    let id = saved[op["approval"]?.stringValue ?? ""] ?? ""
                    var got: JSONValue
                    do {
                        got = ["status": "ok", "output": try await registry.approvalInput(id)]
                    } catch let e as CapabilityError { got = ["status": "error", "code": .string(e.code.rawValue)] }
                    XCTAssertEqual(got, op["expect"], "\(at): got \(got.jsonText)")
                    errors.append(.null)
                    continue
                default:
                    let f = frame(op)
                    let task: Task<Outcome<JSONValue>, Error>
                    if op["op"] == "invoke" {
                        let cap = op["capability"]?.stringValue ?? ""
                        let input = op["input"] ?? .null
                        task = Task { try await registry.invoke(cap, input: input, frame: f, as: JSONValue.self) }
                    } else {
                        let id = op["approvalId"]?.stringValue ?? saved[op["approval"]?.stringValue ?? ""] ?? ""
                        // A limited resume: as the frame's caller, or through a tool.
                        let limit: ResumeLimit? =
                            switch op["limit"] {
                            case nil: nil
                            case .string("requester"): .requester
                            case let l?: .throughTool(l["throughTool"]?.stringValue ?? "")
                            }
                        task = Task { try await registry.resume(id, frame: f, limitedTo: limit, as: JSONValue.self) }
                    }
                    // A timer, registered now (ManualClock), not a task's sleep.
                    let cancel = op["cancelAfterMs"]?.uint64Value.map { ms in
                        clock.schedule(atMs: t0 + ms) { task.cancel() }
                    }
                    result = await task.result
                    cancel?.cancel()
                    // What a handler that ignored its deadline still waits
                    // on ends now: nothing of this op is left for the ticker
                    // to jump the clock to during the next.
                    clock.drain()
                }
                checked += 1
                let got = outcomeJSON(result)
                let expect = op["expect"] ?? .null
                XCTAssertTrue(subset(expect, got), "\(at): expected \(expect.jsonText) got \(got.jsonText)")
                if let out = expect["output"] {
                    XCTAssertTrue(got["output"].map { jsonEqual(out, $0) } ?? false, "\(at): output")
                }
                if let label = op["save"]?.stringValue {
                    guard case .success(.approvalRequired(let r)) = result else {
                        XCTFail("\(at): nothing to save")
                        continue
                    }
                    saved[label] = r.id
                }
                if case .int(let j)? = op["sameErrorAs"] {
                    XCTAssertEqual(got["error"], errors[Int(j)], "\(at): not the same error as op[\(j)]")
                }
                errors.append(got["error"] ?? .null)
                let recs = records.with { r -> [AuditRecord] in
                    defer { r = [] }
                    return r
                }
                for r in recs { assertTypedFieldsAgreeWithJSON(r, at) }
                let finished = recs.filter { $0.event == "finished" }
                if let ms = op["elapsedMs"]?.uint64Value {
                    let end = endedAt.with { e -> UInt64 in
                        defer { e = nil }
                        return e ?? clock.nowMs()
                    }
                    XCTAssertEqual(end - t0, ms, "\(at): elapsed")
                }
                XCTAssertEqual(finished.count, 1, "\(at): one finished audit record per invocation")
                if let events = op["auditEvents"]?.arrayValue {
                    XCTAssertEqual(recs.map { JSONValue.string($0.event) }, events, "\(at): audit events")
                }
                if var exp = op["audit"]?.objectValue, let record = finished.first?.json {
                    if let h = exp["inputHash"]?.boolValue {
                        exp["inputHash"] = nil
                        XCTAssertEqual(record["inputHash"]?.stringValue != nil, h, "\(at): inputHash presence")
                    }
                    // Whether the record names a plain failure's type (which
                    // type is the language's).
                    if let has = exp["hasFailure"]?.boolValue {
                        exp["hasFailure"] = nil
                        let failure = record["failure"]?.stringValue
                        XCTAssertEqual(failure.map { !$0.isEmpty } ?? false, has, "\(at): failure \(failure ?? "nil")")
                    }
                    XCTAssertTrue(
                        subset(.object(exp), record),
                        "\(at): audit expected \(JSONValue.object(exp).jsonText) got \(record.jsonText)")
                }
                for (id, n) in op["handlerCalls"]?.objectValue ?? JSONObject() {
                    XCTAssertEqual(UInt64(calls.with { $0[id] ?? 0 }), n.uint64Value, "\(at): calls of \(id)")
                }
                if let secret = op["mustNotContain"]?.stringValue {
                    let all = ([got["error"] ?? .null] + recs.map(\.json)).map(\.jsonText).joined()
                    XCTAssertFalse(all.contains(secret), "\(at): `\(secret)` leaked: \(all)")
                }
            }
        }
        return checked
    }
}
