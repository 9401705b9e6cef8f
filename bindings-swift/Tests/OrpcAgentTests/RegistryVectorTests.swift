import Foundation
import XCTest

@testable import OrpcAgent

/// Every case of tests/vectors/registry through `CapabilityRegistry(capabilities:options:)`:
/// one aggregate error with exactly the expected problems, or inspect()
/// warnings, resolved values, tool names and per-surface descriptors.
final class RegistryVectorTests: XCTestCase {
    typealias Key = String

    static func key(_ capability: String?, _ path: String, _ code: String) -> Key {
        "\(capability ?? "<null>")|\(path)|\(code)"
    }

    static func keys(_ list: JSONValue?) -> [Key] {
        (list?.arrayValue ?? []).map {
            key($0["capability"]?.stringValue, $0["path"]?.stringValue ?? "", $0["code"]?.stringValue ?? "")
        }
    }

    /// Capabilities as an app would declare them from JSON metadata: the
    /// hooks a declaration names are given as closures.
    static func capabilities(_ c: JSONValue) -> [Capability] {
        var out: [Capability] = []
        for (id, meta) in c["capabilities"]?.objectValue ?? JSONObject() {
            var policies: [Policy] = []
            var m = meta
            if let list = meta["policies"]?.arrayValue, list.contains(where: { $0["host"] == .bool(true) }) {
                policies = list.map { p in
                    guard p["host"] == .bool(true) else { return .rule(p) }
                    var h = HostPolicy(name: p["name"]?.stringValue) { _ in .allow }
                    h.declared = p
                    return .host(h)
                }
                if case .object(var o) = m {
                    o["policies"] = nil
                    m = .object(o)
                }
            }
            let redact: (@Sendable (JSONValue, RedactionInfo) async throws -> JSONValue)? = { v, _ in v }
            let redactOut = meta["redact"]?["output"] == .bool(true) ? redact : nil
            let redactIn = meta["redact"]?["approvalInput"] == .bool(true) ? redact : nil
            var retryOn: (@Sendable (CapabilityError) -> Bool)?
            if meta["retry"]?["retryOn"] == .bool(true) { retryOn = { (_: CapabilityError) -> Bool in true } }
            let handler: @Sendable (JSONValue, HandlerContext) async throws -> JSONValue = { input, _ in input }
            out.append(
                Capability(
                    id, meta: AgentMeta(json: m), input: JSONValue.self, output: JSONValue.self,
                    redactOutput: redactOut, redactApprovalInput: redactIn, retryOn: retryOn,
                    policies: policies, handler: handler))
        }
        return out
    }

    /// Options as an app reads them from a file: the declared runtime
    /// policies stay in `json`; host markers are implemented by the host
    /// policies of their names.
    static func options(_ c: JSONValue) -> RegistryOptions {
        let o = c["options"]
        let hosts: [Policy] = (o?["policies"]?.arrayValue ?? []).filter { $0["host"] == .bool(true) }.map { p in
            .host(HostPolicy(name: p["name"]?.stringValue) { _ in .allow })
        }
        var options = RegistryOptions(policies: hosts)
        options.json = o
        return options
    }

    func testEveryRegistryVector() throws {
        let cases = try Vectors.cases("registry")
        XCTAssertGreaterThan(cases.count, 0, "no registry vectors found")
        for (file, c) in cases {
            let name = "\(file): \(c["name"]?.stringValue ?? "?")"
            let expect = c["expect"] ?? .null
            let registry: CapabilityRegistry
            do {
                registry = try CapabilityRegistry(capabilities: Self.capabilities(c), options: Self.options(c))
            } catch let e as RegistryError {
                XCTAssertEqual(expect["valid"], false, "\(name): unexpected problems \(e)")
                let actual = e.problems.map { Self.key($0.capability, $0.path, $0.code) }
                XCTAssertEqual(Set(actual), Set(Self.keys(expect["problems"])), name)
                XCTAssertEqual(actual.count, Set(actual).count, "\(name): duplicate problems")
                continue
            }
            XCTAssertNotEqual(expect["valid"], false, "\(name): built, but problems were expected")
            let report = try registry.inspect()
            var warnings: [Key] = []
            for cap in report["capabilities"]?.arrayValue ?? [] {
                for w in cap["warnings"]?.arrayValue ?? [] {
                    warnings.append(
                        Self.key(cap["id"]?.stringValue, w["path"]?.stringValue ?? "", w["code"]?.stringValue ?? ""))
                }
            }
            XCTAssertEqual(Set(warnings), Set(Self.keys(expect["warnings"])), "\(name): warnings")
            let byId = Dictionary(
                (report["capabilities"]?.arrayValue ?? []).map { ($0["id"]?.stringValue ?? "", $0) },
                uniquingKeysWith: { a, _ in a })
            for (id, exp) in expect["resolved"]?.objectValue ?? JSONObject() {
                XCTAssertTrue(
                    subset(exp, byId[id]?["resolved"]),
                    "\(name): resolved \(id): \(byId[id]?["resolved"]?.jsonText ?? "-")")
            }
            for (id, exp) in expect["toolNames"]?.objectValue ?? JSONObject() {
                let names = byId[id]?["toolNames"]
                XCTAssertTrue(subset(exp, names), "\(name): tool names of \(id)")
                // Every name resolves to the same capability (stage 1).
                for n in [names?["aiSdk"]?.stringValue, names?["mcp"]?.stringValue].compactMap({ $0 }) {
                    XCTAssertEqual(registry.capabilityId(for: n), id, "\(name): \(n)")
                }
            }
            for (surface, ids) in expect["exposedOn"]?.objectValue ?? JSONObject() {
                let got = try registry.descriptors(surface: Surface(rawValue: surface)!).map { $0["id"] ?? .null }
                XCTAssertEqual(got, ids.arrayValue ?? [], "\(name): exposed on \(surface)")
            }
        }
    }
}
