import Foundation
import XCTest

@testable import OrpcAgent

/// The public types of the records the core sends name the fields of the one
/// wire schema (`schema/wire.schema.json`, written from the core's lists by
/// `cargo run -p orpc-agent-core --example mirrors`): no field the core never
/// sends, none it sends left out. Their values are the core's own (typed
/// uniffi records, `CoreRecords.swift`); the pipeline vectors check an audit
/// record's typed fields against its JSON.
final class WireSchemaTests: XCTestCase {
    static let schema: JSONValue = {
        let url = Vectors.root.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("schema/wire.schema.json")
        return (try? JSONValue(parsing: try Data(contentsOf: url))) ?? .null
    }()

    func properties(_ name: String) -> Set<String> {
        Set(Self.schema["$defs"]?[name]?["properties"]?.objectValue?.keys ?? [])
    }

    func fields(of value: Any, besides: Set<String> = []) -> Set<String> {
        Set(Mirror(reflecting: value).children.compactMap(\.label)).subtracting(besides)
    }

    let actor = Actor(id: "ann", roles: ["clerk"], attributes: ["team": "eu"])

    func testThePublicRecordsNameTheSchemasFields() throws {
        XCTAssertFalse(properties("ApprovalRequest").isEmpty, "the schema was read")
        let request = ApprovalRequest(
            id: "apr_0", capabilityId: "c", input: [:], surface: .mcp, actor: actor, type: nil, reason: nil,
            createdAt: 1, expiresAt: 2, status: "pending", decidedBy: nil, decidedAt: nil, decisionReason: nil,
            sessionId: nil, json: [:])
        // `json` is the request's JSON form itself.
        XCTAssertEqual(fields(of: request, besides: ["json"]), properties("ApprovalRequest"))
        XCTAssertEqual(fields(of: ApprovalPage(requests: [], nextCursor: nil)), properties("ApprovalPage"))
        XCTAssertEqual(fields(of: actor), properties("Actor"))
        XCTAssertEqual(fields(of: TraceContext(traceparent: "00-x")), properties("TraceContext"))
        // The app's context and progress sink never cross.
        XCTAssertEqual(fields(of: Frame(surface: .mcp), besides: ["context", "onProgress"]), properties("Frame"))
        XCTAssertEqual(
            fields(
                of: RedactionInfo(surface: .mcp, capabilityId: "c", actor: actor, context: nil), besides: ["context"]),
            properties("RedactionInfo"))
        let policy = AuditRecord.Policy(
            scope: "runtime", index: 0, name: nil, mode: "enforce", host: false, decision: "allow", reason: nil,
            approvalType: nil, failed: false)
        XCTAssertEqual(fields(of: policy), properties("PolicyRecord"))
        let record = AuditRecord(
            json: [:], event: "finished", capabilityId: nil, requested: nil, surface: .mcp, actorId: nil,
            resumed: false, policies: [], approvalId: nil, attempts: 0, startedAt: 0, durationMs: 0, outcome: nil,
            stage: 1, trace: nil, requestId: nil, agentId: nil, sessionId: nil, failure: nil)
        // `trace` holds `traceparent` and `tracestate`; the redacted output
        // (any JSON value) is read from `json`.
        XCTAssertEqual(
            fields(of: record, besides: ["json", "trace"]).union(["traceparent", "tracestate", "output"]),
            properties("AuditRecord"))
    }

    func testTheSurfacesAreTheSchemas() {
        let surfaces = Self.schema["$defs"]?["Surface"]?["enum"]?.arrayValue?.compactMap(\.stringValue)
        XCTAssertEqual(surfaces, Surface.allCases.map(\.rawValue))
    }
}
