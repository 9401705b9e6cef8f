import Foundation
import OrpcAgentFFI
import XCTest

@testable import OrpcAgent

/// What the core sends is read strictly (docs/decisions.md, Swift
/// binding): JSON text it wrote that is missing a field or has one of the
/// wrong type is a typed INTERNAL `CapabilityError` naming the field, never
/// a default. Frames, redaction info, approval requests and audit records
/// cross as typed uniffi records (CoreRecords.swift); only their open-ended
/// JSON parts are text.
final class CoreDecodingTests: XCTestCase {
    let ann = FfiActor(id: "ann", roles: ["clerk"], attributesJson: #"{"team":"eu"}"#)

    func testTypedRecordsMoveEveryField() throws {
        let request = FfiApprovalRequest(
            id: "apr_0123456789abcdef0123456789abcdef", capabilityId: "payments.transfer",
            inputJson: #"{"amount":5}"#, surface: .mcp, actor: ann, approvalType: nil, reason: "big",
            createdAtMs: 1_000, expiresAtMs: 61_000, status: "pending", decidedBy: nil, decidedAtMs: nil,
            decisionReason: nil, sessionId: "s-1", json: #"{"id":"apr_0123456789abcdef0123456789abcdef"}"#)
        let r = try ApprovalRequest(core: request)
        XCTAssertEqual(r.surface, .mcp)
        XCTAssertEqual(r.actor, Actor(id: "ann", roles: ["clerk"], attributes: ["team": "eu"]))
        XCTAssertEqual(r.input, ["amount": 5])
        XCTAssertEqual(r.createdAt, 1_000)
        XCTAssertEqual(r.expiresAt, 61_000)
        XCTAssertEqual(r.reason, "big")
        XCTAssertEqual(r.sessionId, "s-1")
        XCTAssertNil(r.type)
        XCTAssertNil(r.decidedAt)

        let info = try RedactionInfo(
            core: FfiRedactionInfo(surface: .aiSdk, capabilityId: "hr.employee", actor: ann), context: "app")
        XCTAssertEqual(info.surface, .aiSdk)
        XCTAssertEqual(info.actor.id, "ann")
        XCTAssertEqual(info.context as? String, "app")

        // A resumed call's frame: the recorded surface, actor, trace and
        // ids; the caller's context (it never crosses).
        let resumer = Frame(surface: .direct, actor: Actor(id: "ui"), requestId: "r-1", context: "app")
        let recorded = FfiFrame(
            surface: .mcp,
            details: FfiFrameDetails(
                actor: ann, attributesNonFiniteAt: nil, trace: FfiTrace(traceparent: "00-x", tracestate: nil),
                requestId: "r-1", agentId: nil, sessionId: nil))
        let frame = try resumer.withRecorded(recorded)
        XCTAssertEqual(frame.surface, .mcp)
        XCTAssertEqual(frame.actor.id, "ann")
        XCTAssertEqual(frame.trace, TraceContext(traceparent: "00-x"))
        XCTAssertEqual(frame.requestId, "r-1")
        XCTAssertNil(frame.sessionId)
        XCTAssertEqual(frame.context as? String, "app")
        // The details a frame sends round-trip (attributes in key order).
        let sent = try XCTUnwrap(frame.coreDetails)
        XCTAssertEqual(try Actor(core: sent.actor), frame.actor)
        XCTAssertEqual(sent.trace.map(TraceContext.init(core:)), frame.trace)
        XCTAssertNil(Frame(surface: .mcp).coreDetails, "a frame that is only a surface sends none")
    }

    func testJSONPartsThatDoNotParseAreInternal() {
        let bad = FfiActor(id: "ann", roles: [], attributesJson: "[1]")
        assertMalformed("attributes", "attributes that are not an object") { _ = try Actor(core: bad) }
        assertMalformed(nil, "attributes that are not JSON") {
            _ = try Actor(core: FfiActor(id: nil, roles: [], attributesJson: "{"))
        }
        assertMalformed(nil, "an input that is not JSON") {
            _ = try ApprovalRequest(
                core: FfiApprovalRequest(
                    id: "apr_x", capabilityId: "c", inputJson: "{", surface: .mcp, actor: ann, approvalType: nil,
                    reason: nil, createdAtMs: 0, expiresAtMs: 1, status: "pending", decidedBy: nil, decidedAtMs: nil,
                    decisionReason: nil, sessionId: nil, json: "{}"))
        }
    }

    func testMalformedProblemsAndErrorDetailsAreInternal() {
        let problems = #"[{"capability": null, "path": "defaults", "code": "UNKNOWN_FIELD", "message": "m"}]"#
        let lifted = liftError(FfiError.Registry(message: "1 problem", problemsJson: problems))
        XCTAssertEqual((lifted as? RegistryError)?.problems.map(\.code), ["UNKNOWN_FIELD"])
        for bad in [
            "", "{}", #"[{"path": "defaults", "message": "m"}]"#, #"[{"path": 1, "code": "X", "message": "m"}]"#,
        ] {
            let e = liftError(FfiError.Registry(message: "1 problem", problemsJson: bad))
            XCTAssertEqual((e as? CapabilityError)?.code, .internal, "problems \(bad): \(e)")
        }
        let kept = CapabilityError(
            code: "POLICY_DENIED", message: "no", retryable: false, detailsJson: #"{"policy": 0}"#)
        XCTAssertEqual(kept.details?["policy"], 0)
        let bad = CapabilityError(code: "POLICY_DENIED", message: "no", retryable: false, detailsJson: "{policy")
        XCTAssertEqual(bad.code, .internal, "details that are not JSON were dropped: \(bad)")
    }

    func testMetadataFromJSONReadsItsTypedFieldsAsDeclared() {
        let m = AgentMeta(json: [
            "description": "Delete.", "expose": ["mcp": true, "aiSdk": false], "sideEffect": "destructive",
            "risk": "high", "timeoutMs": 500, "approval": ["required": true, "expiresInMs": 60_000],
            "retry": ["maxAttempts": 1], "idempotent": true, "discovery": "contextual", "tags": ["a"],
        ])
        XCTAssertEqual(m.sideEffect, .destructive)
        XCTAssertEqual(m.risk, .high)
        XCTAssertEqual(m.expose, [.mcp: true, .aiSdk: false])
        XCTAssertEqual(m.timeoutMs, 500)
        XCTAssertEqual(m.approval, .init(required: true, expiresInMs: 60_000))
        XCTAssertEqual(m.retry, .init(maxAttempts: 1))
        XCTAssertEqual(m.idempotent, true)
        XCTAssertEqual(m.discovery, .contextual)
        XCTAssertEqual(m.tags, ["a"])
        // Metadata the core refuses: its placeholders are the gravest, never "none"/"low".
        let invalid = AgentMeta(json: ["description": "?"])
        XCTAssertEqual(invalid.sideEffect, .destructive)
        XCTAssertEqual(invalid.risk, .critical)
        XCTAssertEqual(invalid.expose, [:])
    }
}

/// A record's typed fields say what its JSON form says (the record and its
/// `json` both come from the core: `bindings-swift/src/records.rs` and the
/// conversions in `records/` must carry every field as the core's
/// serialization writes it).
func assertTypedFieldsAgreeWithJSON(
    _ r: AuditRecord, _ at: String, file: StaticString = #filePath, line: UInt = #line
) {
    let j = r.json
    let s = { (v: String?) in v.map(JSONValue.string) ?? .null }
    let typed: [(String, JSONValue)] = [
        ("event", .string(r.event)), ("capabilityId", s(r.capabilityId)), ("surface", .string(r.surface.rawValue)),
        ("actorId", s(r.actorId)), ("resumed", .bool(r.resumed)), ("approvalId", s(r.approvalId)),
        ("attempts", .int(Int64(r.attempts))), ("startedAt", .int(Int64(r.startedAt))),
        ("durationMs", .int(Int64(r.durationMs))), ("outcome", s(r.outcome)), ("stage", .int(Int64(r.stage))),
        ("traceparent", s(r.trace?.traceparent)), ("requestId", s(r.requestId)), ("agentId", s(r.agentId)),
        ("sessionId", s(r.sessionId)),
    ]
    for (key, value) in typed {
        XCTAssertEqual(j[key] ?? .null, value, "\(at): audit record `\(key)`", file: file, line: line)
    }
    for (key, value) in [("requested", r.requested), ("tracestate", r.trace?.tracestate), ("failure", r.failure)] {
        XCTAssertEqual(j[key], value.map(JSONValue.string), "\(at): audit record `\(key)`", file: file, line: line)
    }
    let policies = j["policies"]?.arrayValue ?? []
    XCTAssertEqual(policies.count, r.policies.count, "\(at): audit record policies", file: file, line: line)
    for (p, jp) in zip(r.policies, policies) {
        let fields: [(String, JSONValue?)] = [
            ("scope", .string(p.scope)), ("index", .int(Int64(p.index))), ("name", p.name.map(JSONValue.string)),
            ("mode", .string(p.mode)), ("host", .bool(p.host)), ("decision", .string(p.decision)),
            ("reason", p.reason.map(JSONValue.string)), ("approvalType", p.approvalType.map(JSONValue.string)),
            ("failed", .bool(p.failed)),
        ]
        for (key, value) in fields {
            XCTAssertEqual(jp[key], value, "\(at): audit policy `\(key)`", file: file, line: line)
        }
    }
}

/// `body` throws the typed INTERNAL error of a malformed core value, naming
/// `field` (`nil`: the value as a whole).
func assertMalformed(
    _ field: String?, _ name: String, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void
) {
    do {
        try body()
        XCTFail("\(name): decoded (a default took the place of the missing value)", file: file, line: line)
    } catch let e as CapabilityError {
        XCTAssertEqual(e.code, .internal, "\(name): \(e)", file: file, line: line)
        XCTAssertEqual(e.details?["field"]?.stringValue, field, "\(name): \(e)", file: file, line: line)
    } catch {
        XCTFail("\(name): not a CapabilityError: \(error)", file: file, line: line)
    }
}
