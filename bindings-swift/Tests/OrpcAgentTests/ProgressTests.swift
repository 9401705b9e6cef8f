import Foundation
import XCTest

@testable import OrpcAgent

/// Progress from inside a handler: the core checks each report; accepted
/// ones reach the frame's `onProgress`, rejected ones are dropped.
final class ProgressTests: XCTestCase {
    static let reports: [(UInt64, UInt64?)] = [
        (0, 3), (1, nil),
        (1, nil),  // not increasing
        (5, nil),  // above the total
        (2, 4),  // the total changed
        (2, 3), (3, nil),
    ]
    static let answers = [true, true, false, false, false, true, true]
    static let accepted = [
        ProgressEvent(done: 0, total: 3), ProgressEvent(done: 1, total: 3),
        ProgressEvent(done: 2, total: 3), ProgressEvent(done: 3, total: 3),
    ]

    func registry() throws -> CapabilityRegistry {
        try CapabilityRegistry(capabilities: [
            Capability(
                "work.run",
                meta: AgentMeta(description: "Works.", expose: [.direct: true], sideEffect: .none, risk: .low)
            ) { (_: JSONValue, ctx) in
                ProgressTests.reports.map { ctx.progress($0.0, total: $0.1) }
            }
        ])
    }

    func testAcceptedReportsReachOnProgressRejectedOnesAreDropped() async throws {
        let events = Locked<[ProgressEvent]>([])
        let out: Outcome<[Bool]> = try await registry().invoke(
            "work.run", input: JSONValue.null,
            frame: Frame(surface: .direct, onProgress: { e in events.with { $0.append(e) } }))
        XCTAssertEqual(out.value, ProgressTests.answers)
        XCTAssertEqual(events.with { $0 }, ProgressTests.accepted)
    }

    func testWithoutAListenerTheHandlerGetsTheSameAnswers() async throws {
        let out: Outcome<[Bool]> = try await registry().invoke(
            "work.run", input: JSONValue.null, frame: Frame(surface: .direct))
        XCTAssertEqual(out.value, ProgressTests.answers)
    }

    func testOutsideAGovernedCallProgressIsRefused() {
        let ctx = HandlerContext(capabilityId: "x", frame: Frame(surface: .direct))
        XCTAssertFalse(ctx.progress(1))
    }
}
