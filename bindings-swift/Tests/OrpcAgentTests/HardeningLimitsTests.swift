import Foundation
import XCTest

@testable import OrpcAgent

/// Limits through the Swift API (issue 10, item 5): every case of
/// tests/vectors/limits/limits.json — input size, nesting depth, keys per
/// object, string and key length in UTF-8 bytes — and pending approvals per
/// actor on the memory and SQLite stores give the typed error the vector
/// names (LIMIT_EXCEEDED, details {limit, max}) and run no handler.
final class HardeningLimitsTests: XCTestCase {
    static let doc: JSONValue = {
        let url = Vectors.root.appendingPathComponent("limits/limits.json")
        return try! JSONValue(parsing: try! Data(contentsOf: url))
    }()

    /// The generators of tests/vectors/README.md, section limits.
    static func generate(_ g: JSONValue) -> JSONValue {
        if let depth = g["depth"]?.doubleValue {
            var a: JSONValue = .array([])
            for _ in 0..<max(0, Int(depth) - 2) { a = .array([a]) }
            return ["v": a]
        }
        var o = JSONObject()
        if let keys = g["keys"]?.doubleValue {
            for i in 0..<Int(keys) { o["k\(i)"] = .int(0) }
        } else if let n = g["string"]?.doubleValue {
            o["text"] = .string(String(repeating: g["char"]?.stringValue ?? "a", count: Int(n)))
        } else if let n = g["key"]?.doubleValue {
            o[String(repeating: "a", count: Int(n))] = .int(0)
        } else if let n = g["size"]?.doubleValue {
            var chunks: [JSONValue] = []
            var remaining = Int(n) - 13
            while remaining > 0 {
                if !chunks.isEmpty { remaining -= 1 }
                let take = min(remaining - 2, 60000)
                chunks.append(.string(String(repeating: "a", count: take)))
                remaining -= take + 2
            }
            o["chunks"] = .array(chunks)
        }
        return .object(o)
    }

    struct Counts {
        var handler = 0
        var validated = 0
    }

    func registry(_ counts: Locked<Counts>, store: ApprovalStoreConfig = .memory) throws -> CapabilityRegistry {
        let caps = (Self.doc["capabilities"]?.objectValue ?? JSONObject()).map { (id, c) -> Capability in
            Capability(
                id, meta: AgentMeta(json: c["meta"]!), input: JSONValue.self, output: JSONValue.self,
                validateInput: { v in
                    counts.with { $0.validated += 1 }
                    return v
                }
            ) { (_: JSONValue, _) in
                counts.with { $0.handler += 1 }
                return ["ok": true]
            }
        }
        return try CapabilityRegistry(capabilities: caps, options: RegistryOptions(approvalStore: store))
    }

    func testTheGeneratorsMakeWhatTheReadmeSays() {
        XCTAssertEqual(Self.generate(["depth": 3]).jsonText, #"{"v":[[]]}"#)
        for n in [100, 1_048_576, 1_048_577] {
            XCTAssertEqual(Self.generate(["size": .int(Int64(n))]).jsonText.utf8.count, n)
        }
    }

    static func overLimit(_ c: JSONValue) -> Bool { c["expect"]?["code"]?.stringValue == "LIMIT_EXCEEDED" }

    /// The vectors that stay within the limits (or hit exposure first).
    func testLimitVectorsWithinTheLimits() async throws {
        try await run((Self.doc["cases"]?.arrayValue ?? []).filter { !Self.overLimit($0) })
    }

    /// Over-limit inputs: LIMIT_EXCEEDED before stage 4 (the raw input's
    /// JSON is measured by the core before the first step).
    func testOverLimitInputsAreLimitExceeded() async throws {
        try await run((Self.doc["cases"]?.arrayValue ?? []).filter(Self.overLimit))
    }

    func run(_ cases: [JSONValue]) async throws {
        XCTAssertFalse(cases.isEmpty)
        for c in cases {
            let name = c["name"]?.stringValue ?? "?"
            let counts = Locked(Counts())
            let reg = try registry(counts)
            let expect = c["expect"]!
            do {
                let out: Outcome<JSONValue> = try await reg.invoke(
                    c["capability"]!.stringValue!, input: Self.generate(c["generate"]!),
                    frame: Frame(surface: .mcp, actor: Actor(id: "a1")))
                // What the binding returned: the handler's output, or a pending approval.
                let got =
                    out.value.map { jsonEqual($0, ["ok": true]) ? "ok" : "ok with \($0)" }
                    ?? (out.approval != nil ? "approval_required" : "neither")
                XCTAssertEqual(got, expect["status"]?.stringValue, "\(name): got \(out)")
            } catch let e as CapabilityError {
                XCTAssertEqual("error", expect["status"]?.stringValue, "\(name): got \(e)")
                XCTAssertEqual(e.code.rawValue, expect["code"]?.stringValue, "\(name): \(e)")
                if let details = expect["details"] {
                    XCTAssertTrue(
                        e.details.map { jsonEqual(details, $0) } ?? false, "\(name): \(String(describing: e.details))")
                }
                if e.code == .limitExceeded {
                    XCTAssertEqual(e.code.kind, "std:invalid-args", name)
                    XCTAssertEqual(counts.with { $0.validated }, 0, "\(name): no validator sees an over-limit input")
                }
            }
            XCTAssertEqual(
                counts.with { $0.handler }, Int(c["handlerCalls"]?.doubleValue ?? -1), "\(name): handler calls")
        }
    }

    func testPendingApprovalsPerActor() async throws {
        for store in ["memory", "sqlite"] {
            for p in Self.doc["pending"]?.arrayValue ?? [] {
                let path = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "orpc-limits-\(UUID().uuidString).db"
                ).path
                defer { try? FileManager.default.removeItem(atPath: path) }
                let counts = Locked(Counts())
                let reg = try registry(counts, store: store == "memory" ? .memory : .sqlite(path: path))
                for step in p["steps"]?.arrayValue ?? [] {
                    let actor = step["actor"]!.stringValue!
                    let expect = step["expect"]!
                    for _ in 0..<Int(step["times"]?.doubleValue ?? 0) {
                        do {
                            let out: Outcome<JSONValue> = try await reg.invoke(
                                p["capability"]!.stringValue!, input: p["input"]!,
                                // A case's own surface (on MCP a repeated identical call finds its request).
                                frame: Frame(
                                    surface: p["surface"]?.stringValue.flatMap(Surface.init(rawValue:)) ?? .mcp,
                                    actor: Actor(id: actor)))
                            XCTAssertNotNil(out.approval, "\(store) \(actor)")
                            XCTAssertEqual(expect["status"]?.stringValue, "approval_required", "\(store) \(actor)")
                        } catch let e as CapabilityError {
                            XCTAssertEqual(e.code.rawValue, expect["code"]?.stringValue, "\(store) \(actor): \(e)")
                        }
                    }
                }
                XCTAssertEqual(counts.with { $0.handler }, 0)
            }
        }
    }
}
