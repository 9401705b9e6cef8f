import Foundation
import XCTest

@testable import OrpcAgent

/// tests/vectors/progress through the public API: a handler makes each
/// case's reports with `ctx.progress`, and the frame's `onProgress` hears
/// the accepted ones. The core decides which are accepted; this runner only
/// reads the numbers out of the vectors (each is a `UInt64`).
final class ProgressVectorTests: XCTestCase {
    func testEveryProgressVector() async throws {
        let cases = try Vectors.cases("progress")
        XCTAssertGreaterThan(cases.count, 0, "no progress vectors found")
        for (file, c) in cases {
            let name = "\(file): \(c["name"]?.stringValue ?? "?")"
            let reports = try (c["reports"]?.arrayValue ?? []).map { r in
                (
                    done: try XCTUnwrap(r["done"]?.uint64Value, name),
                    total: r["total"].flatMap(\.uint64Value),
                    expect: r["expect"] ?? .null
                )
            }
            let registry = try CapabilityRegistry(capabilities: [
                Capability(
                    "work.run",
                    meta: AgentMeta(
                        description: "Reports progress.", expose: [.direct: true], sideEffect: .none, risk: .low)
                ) { (_: JSONValue, ctx) in
                    reports.map { ctx.progress($0.done, total: $0.total) }
                }
            ])
            let events = Locked<[ProgressEvent]>([])
            let out: Outcome<[Bool]> = try await registry.invoke(
                "work.run", input: JSONValue.null,
                frame: Frame(surface: .direct, onProgress: { e in events.with { $0.append(e) } }))
            let accepted = reports.map(\.expect).filter { $0["dropped"] == nil }
            XCTAssertEqual(out.value, reports.map { $0.expect["dropped"] == nil }, name)
            XCTAssertEqual(
                events.with { $0 },
                accepted.map { ProgressEvent(done: $0["done"]?.uint64Value ?? 0, total: $0["total"]?.uint64Value) },
                name)
        }
    }
}
