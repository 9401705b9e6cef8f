import Foundation
import XCTest

@testable import OrpcAgent

/// The std: metadata vectors (tests/vectors/act/decode.json, metadata.json)
/// through `StdMeta`: hostile CBOR gets its typed reason, each map's
/// problems per position are the core's, and every valid map round-trips
/// through the JSON view. The same cases run in Rust, Node and Python.
final class ActVectorTests: XCTestCase {
    func cases(_ file: String) throws -> [JSONValue] {
        try Vectors.cases("act").filter { $0.0 == file }.map(\.1)
    }

    func testHostileCBORGetsItsReason() throws {
        let cases = try cases("decode.json")
        XCTAssertGreaterThanOrEqual(cases.count, 10)
        for c in cases {
            let name = c["name"]?.stringValue ?? "?"
            let cbor = Data(hexString: c["cbor"]?.stringValue ?? "")
            for attempt in [{ _ = try StdMeta.decode(cbor) }, { _ = try StdMeta.check(cbor, position: "tool-call") }] {
                XCTAssertThrowsError(try attempt(), name) { error in
                    let e = error as? CapabilityError
                    XCTAssertEqual(e?.code, .invalidInput, name)
                    XCTAssertEqual(e?.details?["reason"]?.stringValue, c["error"]?.stringValue, name)
                }
            }
        }
    }

    func testProblemsPerPositionAndTheRoundTrip() throws {
        let cases = try cases("metadata.json")
        XCTAssertGreaterThanOrEqual(cases.count, 25)
        for c in cases {
            let name = c["name"]?.stringValue ?? "?"
            let cbor = Data(hexString: c["cbor"]?.stringValue ?? "")
            let got = try StdMeta.check(
                cbor, position: c["position"]?.stringValue ?? "", strict: c["strict"]?.boolValue ?? false)
            let want = Set(
                (c["problems"]?.arrayValue ?? []).map {
                    "\($0["key"]?.stringValue ?? "")|\($0["code"]?.stringValue ?? "")|\($0["severity"]?.stringValue ?? "")"
                })
            XCTAssertEqual(Set(got.map { "\($0.key)|\($0.code)|\($0.severity)" }), want, name)
            let view = try StdMeta.decode(cbor)
            XCTAssertTrue(jsonEqual(try StdMeta.decode(try StdMeta.encode(view)), view), name)
        }
    }

    func testGrantDecisions() throws {
        let cases = try cases("grants.json")
        XCTAssertGreaterThanOrEqual(cases.count, 20)
        for c in cases {
            let name = c["name"]?.stringValue ?? "?"
            let decide = {
                try CapabilityGrants.decide(
                    declared: c["declared"] ?? .null, grants: c["grants"] ?? .null, request: c["request"] ?? .null)
            }
            if let code = c["error"]?.stringValue {
                XCTAssertThrowsError(try decide(), name) { error in
                    let e = error as? CapabilityError
                    XCTAssertEqual(e?.code, .invalidInput, name)
                    XCTAssertEqual(e?.details?["reason"]?.stringValue, code, name)
                }
                continue
            }
            switch try decide() {
            case .allowed:
                XCTAssertEqual(c["allowed"]?.boolValue, true, name)
            case .denied(let reason, let message):
                XCTAssertEqual(c["allowed"]?.boolValue, false, name)
                XCTAssertEqual(reason, c["reason"]?.stringValue, name)
                XCTAssertFalse(message.isEmpty, name)
            }
        }
    }

    func testToolDefinitionMetadataFromAgentMeta() throws {
        let cases = try cases("tool_meta.json")
        XCTAssertGreaterThanOrEqual(cases.count, 6)
        for c in cases {
            let name = c["name"]?.stringValue ?? "?"
            let derive = {
                try StdMeta.toolDefinition(capabilityId: c["id"]?.stringValue ?? "", meta: c["meta"] ?? .null)
            }
            if let problems = c["problems"]?.arrayValue {
                XCTAssertThrowsError(try derive(), name) { error in
                    let e = error as? CapabilityError
                    XCTAssertEqual(e?.details?["reason"]?.stringValue, "INVALID_AGENT_META", name)
                    let pairs = { (list: [JSONValue]) in
                        Set(list.map { "\($0["path"]?.stringValue ?? "")|\($0["code"]?.stringValue ?? "")" })
                    }
                    XCTAssertEqual(pairs(e?.details?["problems"]?.arrayValue ?? []), pairs(problems), name)
                }
                continue
            }
            let view = try derive()
            XCTAssertTrue(jsonEqual(view, c["view"] ?? .null), "\(name): \(view)")
            XCTAssertEqual(
                try StdMeta.check(try StdMeta.encode(view), position: "tool-definition", strict: true), [], name)
        }
    }

    func testDescriptorsAsCBOR() throws {
        let cases = try cases("descriptors.json")
        XCTAssertGreaterThanOrEqual(cases.count, 3)
        for c in cases {
            let name = c["name"]?.stringValue ?? "?"
            let capabilities = (c["capabilities"]?.objectValue ?? JSONObject()).map { id, meta in
                Capability(id, meta: AgentMeta(json: meta), input: JSONValue.self, output: JSONValue.self) {
                    (input: JSONValue, _: HandlerContext) in input
                }
            }
            let registry = try CapabilityRegistry(capabilities: capabilities)
            let surface = try XCTUnwrap(Surface(rawValue: c["surface"]?.stringValue ?? ""), name)
            let hex = try registry.descriptorsCBOR(surface: surface).map { String(format: "%02x", $0) }.joined()
            XCTAssertEqual(hex, c["cbor"]?.stringValue, name)
        }
    }

    func testAnUnknownPositionNamesTheKnownOnes() throws {
        XCTAssertThrowsError(try StdMeta.check(try StdMeta.encode(.object(JSONObject())), position: "nowhere")) {
            let e = $0 as? CapabilityError
            XCTAssertEqual(e?.details?["reason"]?.stringValue, "UNKNOWN_POSITION")
            XCTAssertTrue(e?.message.contains("tool-definition") == true, "\(String(describing: e))")
        }
    }

    func testAManifestEmbeddedIntoAComponentReadsBack() throws {
        let manifest = try String(
            contentsOf: Vectors.root.deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("examples/act/act.toml"), encoding: .utf8)
        let checked = try ActComponent.checkManifest(manifest)
        XCTAssertEqual(checked["name"]?.stringValue, "orders-component")
        let empty = Data(hexString: "0061736d01000000")
        XCTAssertTrue(
            jsonEqual(try ActComponent.inspect(try ActComponent.embed(manifest: manifest, into: empty)), checked))
        XCTAssertThrowsError(try ActComponent.inspect(empty)) {
            XCTAssertEqual(($0 as? CapabilityError)?.details?["reason"]?.stringValue, "NO_SECTION")
        }
    }

    func testForwardWrapsAChainAndUnwrapsOneLayer() throws {
        let hops: [JSONValue] = [["std:request-id": "a"], ["std:request-id": "b"]]
        var meta: JSONValue? = try StdMeta.wrapForward(hops)
        for hop in hops {
            let layer = try StdMeta.unwrapForward(try XCTUnwrap(meta))
            XCTAssertTrue(jsonEqual(layer.here, hop))
            meta = layer.next
        }
        XCTAssertNil(meta)
    }
}
