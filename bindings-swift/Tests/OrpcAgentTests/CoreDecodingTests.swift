import Foundation
import OrpcAgentFFI
import XCTest

@testable import OrpcAgent

/// What the core sends is decoded strictly (docs/decisions.md, Swift
/// binding): a field it always sends that is missing or of the wrong type
/// is a typed INTERNAL `CapabilityError` naming the field, never a default
/// (a request read as made on `direct`, born expired, by an anonymous
/// actor; a redactor told `direct`). Optional fields stay optional.
final class CoreDecodingTests: XCTestCase {
    /// An approval request as the core writes one.
    let request: JSONObject =
        ([
            "id": "apr_0123456789abcdef0123456789abcdef", "capabilityId": "payments.transfer", "input": ["amount": 5],
            "surface": "mcp", "actor": ["id": "ann", "roles": ["clerk"], "attributes": ["team": "eu"]],
            "createdAt": 1_000, "expiresAt": 61_000, "status": "pending",
        ] as JSONValue).objectValue!

    func text(_ o: JSONObject) -> String { JSONValue.object(o).jsonText }

    func with(_ key: String, _ value: JSONValue?) -> String {
        var o = request
        o[key] = value
        return text(o)
    }

    func withActor(_ key: String, _ value: JSONValue?) -> String {
        var actor = request["actor"]!.objectValue!
        actor[key] = value
        return with("actor", .object(actor))
    }

    func testAWellFormedRequestDecodesAndItsOptionalFieldsStayOptional() throws {
        let r = try ApprovalRequest(json: text(request))
        XCTAssertEqual(r.surface, .mcp)
        XCTAssertEqual(r.actor, Actor(id: "ann", roles: ["clerk"], attributes: ["team": "eu"]))
        XCTAssertEqual(r.createdAt, 1_000)
        XCTAssertEqual(r.expiresAt, 61_000)
        XCTAssertNil(r.type)
        XCTAssertNil(r.decidedAt)
        // Absent or null: none.
        XCTAssertNil(try ApprovalRequest(json: with("decidedBy", .null)).decidedBy)
        XCTAssertEqual(try ApprovalRequest(json: with("decidedAt", 2_000)).decidedAt, 2_000)
        // An actor without an id (anonymous) is one the core can record.
        XCTAssertNil(try ApprovalRequest(json: withActor("id", nil)).actor.id)
    }

    func testAMalformedRequestIsInternalNeverADefault() {
        let cases: [(String, String?, String)] = [
            ("not JSON", nil, "{\"id\": "),
            ("not an object", nil, "[]"),
            ("no surface", "surface", with("surface", nil)),
            ("an unknown surface", "surface", with("surface", "moon")),
            ("a surface of the wrong type", "surface", with("surface", 0)),
            ("no actor", "actor", with("actor", nil)),
            ("an actor that is not an object", "actor", with("actor", "ann")),
            ("an actor id of the wrong type", "id", withActor("id", 7)),
            ("an actor without roles", "roles", withActor("roles", nil)),
            ("roles that are not strings", "roles", withActor("roles", [1])),
            ("an actor without attributes", "attributes", withActor("attributes", nil)),
            ("no id", "id", with("id", nil)),
            ("no capability id", "capabilityId", with("capabilityId", nil)),
            ("a capability id of the wrong type", "capabilityId", with("capabilityId", 3)),
            ("no input", "input", with("input", nil)),
            ("no creation time", "createdAt", with("createdAt", nil)),
            ("no expiry", "expiresAt", with("expiresAt", nil)),
            ("an expiry of the wrong type", "expiresAt", with("expiresAt", "soon")),
            ("a negative expiry", "expiresAt", with("expiresAt", -1)),
            ("no status", "status", with("status", nil)),
            ("an optional field of the wrong type", "type", with("type", 5)),
            ("a decision time of the wrong type", "decidedAt", with("decidedAt", "later")),
        ]
        for (name, field, json) in cases {
            assertMalformed(field, name) { _ = try ApprovalRequest(json: json) }
        }
    }

    func testMalformedRedactionInfoIsInternalNeverDirect() throws {
        let info: JSONObject =
            ([
                "surface": "aiSdk", "capabilityId": "hr.employee",
                "actor": ["id": "ann", "roles": [], "attributes": [:]],
            ] as JSONValue).objectValue!
        let good = try RedactionInfo(json: text(info), context: nil)
        XCTAssertEqual(good.surface, .aiSdk)
        XCTAssertEqual(good.capabilityId, "hr.employee")
        XCTAssertEqual(good.actor.id, "ann")
        for (key, value, field) in [
            ("surface", nil, "surface"), ("surface", "nowhere", "surface"), ("capabilityId", nil, "capabilityId"),
            ("actor", nil, "actor"), ("actor", ["id": "ann"], "roles"),
        ] as [(String, JSONValue?, String)] {
            var o = info
            o[key] = value
            assertMalformed(field, "\(key) = \(value?.jsonText ?? "absent")") {
                _ = try RedactionInfo(json: text(o), context: nil)
            }
        }
        assertMalformed(nil, "not JSON") { _ = try RedactionInfo(json: "", context: nil) }
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

/// Decoders added with the strict reading (no earlier form to compare).
final class CoreDecodingNewTests: XCTestCase {
    func testAMalformedRecordedFrameIsInternalNeverTheResumersSurfaceOrAnAnonymousActor() throws {
        let resumer = Frame(surface: .direct, actor: Actor(id: "ui"), requestId: "r-1", context: "app")
        let good = try resumer.withRecorded(
            coreJSON:
                #"{"surface":"mcp","actor":{"id":"ann","roles":[],"attributes":{}},"requestId":"r-1","trace":{"traceparent":"00-x"}}"#
        )
        XCTAssertEqual(good.surface, .mcp)
        XCTAssertEqual(good.actor.id, "ann")
        XCTAssertEqual(good.requestId, "r-1")
        XCTAssertEqual(good.trace, TraceContext(traceparent: "00-x"))
        XCTAssertNil(good.sessionId)
        XCTAssertEqual(good.context as? String, "app", "the app's context never crosses: the caller's")
        for (json, field) in [
            (#"{"surface":"mcp","actor":{"id":"ann","roles":[],"attributes":{}},"trace":{}}"#, "traceparent"),
            (#"{"surface":"mcp","actor":{"id":"ann","roles":[],"attributes":{}},"sessionId":7}"#, "sessionId"),
            (#"{"actor":{"id":"ann","roles":[],"attributes":{}}}"#, "surface"),
            (#"{"surface":"moon","actor":{"id":"ann","roles":[],"attributes":{}}}"#, "surface"),
            (#"{"surface":"mcp"}"#, "actor"),
            (#"{"surface":"mcp","actor":{"id":"ann","roles":"admin","attributes":{}}}"#, "roles"),
        ] {
            assertMalformed(field, json) { _ = try resumer.withRecorded(coreJSON: json) }
        }
    }

    func testAMalformedAuditRecordIsInternal() throws {
        let ok = try AuditRecord(core: ["event": "finished", "outcome": "ok"])
        XCTAssertEqual(ok.event, "finished")
        XCTAssertEqual(ok.outcome, "ok")
        XCTAssertNil(try AuditRecord(core: ["event": "started"]).outcome)
        assertMalformed("event", "no event") { _ = try AuditRecord(core: ["outcome": "ok"]) }
        assertMalformed("event", "event of the wrong type") { _ = try AuditRecord(core: ["event": 1]) }
        assertMalformed("outcome", "outcome of the wrong type") {
            _ = try AuditRecord(core: ["event": "finished", "outcome": 5])
        }
        assertMalformed(nil, "not an object") { _ = try AuditRecord(core: "finished") }
    }

    func testAMalformedPageOrListIsInternalNeverEmpty() throws {
        let page = try ApprovalPage(core: #"{"requests": [], "nextCursor": null}"#)
        XCTAssertTrue(page.requests.isEmpty)
        XCTAssertNil(page.nextCursor)
        assertMalformed("requests", "no requests") { _ = try ApprovalPage(core: #"{"nextCursor": null}"#) }
        assertMalformed("nextCursor", "a cursor of the wrong type") {
            _ = try ApprovalPage(core: #"{"requests": [], "nextCursor": 5}"#)
        }
        assertMalformed("capabilityId", "a request in it malformed") {
            _ = try ApprovalPage(core: #"{"requests": [{"id": "apr_x"}]}"#)
        }
        assertMalformed(nil, "a list that is not one") { _ = try CoreJSON.array("approval list", "{}") }
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
