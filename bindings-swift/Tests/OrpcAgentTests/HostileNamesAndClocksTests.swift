import Foundation
import XCTest

@testable import OrpcAgent

/// Names Swift calls equal that the core does not, clocks at their
/// extremes, and NaN where JSON has none: the core's byte-wise names, its
/// saturating time and its refusal, never a trap or a silent `null`.
final class HostileNamesAndClocksTests: XCTestCase {
    func meta() -> AgentMeta {
        AgentMeta(description: "Read.", expose: [.mcp: true], sideEffect: .read, risk: .low)
    }

    /// "café" (NFC) and "cafe\u{301}" (NFD) are two capabilities to the core
    /// (and to Node and Python): each name runs its own, and a name only
    /// canonically equal to an id (the Kelvin sign for "K") is not found.
    func testCanonicallyEquivalentIdsAreTwoCapabilitiesAndNeitherRunsAsTheOther() async throws {
        let reg = try CapabilityRegistry(capabilities: [
            Capability("caf\u{E9}", meta: meta()) { (_: JSONValue, _) in JSONValue.string("nfc") },
            Capability("cafe\u{301}", meta: meta()) { (_: JSONValue, _) in JSONValue.string("nfd") },
            Capability("K", meta: meta()) { (_: JSONValue, _) in JSONValue.string("k") },
        ])
        for (name, ran) in [("caf\u{E9}", "nfc"), ("cafe\u{301}", "nfd"), ("K", "k")] {
            let out: Outcome<JSONValue> = try await reg.invoke(name, input: JSONValue.null, frame: Frame(surface: .mcp))
            XCTAssertEqual(out.value, .string(ran), name)
        }
        await assertThrows(.notFound) {
            let _: Outcome<JSONValue> = try await reg.invoke(
                "\u{212A}", input: JSONValue.null, frame: Frame(surface: .mcp))
        }
    }

    /// A clock an app gives that reads near `UInt64.max`: a host policy's
    /// deadline saturates as the core's does, and the call completes.
    func testAClockNearTheEndOfTimeSaturatesInsteadOfTrapping() async throws {
        struct EndOfTime: AgentClock {
            func nowMs() -> UInt64 { .max - 5 }
            func sleep(untilMs deadlineMs: UInt64) async throws { try Task.checkCancellation() }
            func schedule(atMs deadlineMs: UInt64, _ fire: @escaping @Sendable () -> Void) -> AgentTimer {
                Task {}  // never fires: the call ends by its work
            }
        }
        let allow = HostPolicy(name: "allow") { _ in .allow }
        let reg = try CapabilityRegistry(
            capabilities: [
                Capability("a.read", meta: meta(), policies: [.host(allow)]) { (v: JSONValue, _) in v }
            ], options: RegistryOptions(clock: EndOfTime()))
        let out: Outcome<JSONValue> = try await reg.invoke(
            "a.read", input: JSONValue.int(1), frame: Frame(surface: .mcp))
        XCTAssertEqual(out.value, .int(1))
    }

    /// The system clock's sleep until the end of time waits (until
    /// cancelled) rather than overflowing its nanoseconds.
    func testTheSystemClockSleepsUntilTheEndOfTimeWithoutOverflow() async throws {
        let sleeper = Task { try await SystemClock().sleep(untilMs: .max) }
        try await Task.sleep(nanoseconds: 10_000_000)
        sleeper.cancel()
        do {
            try await sleeper.value
            XCTFail("expected a cancellation")
        } catch is CancellationError {}
    }

    /// A NaN or infinity in `std:` metadata or a declaration is the core's
    /// INVALID_INPUT `NON_FINITE_NUMBER` (as in Node and Python), never
    /// encoded as `null`.
    func testANonFiniteNumberInMetadataOrADeclarationIsRefusedNotWrittenAsNull() throws {
        for value in [Double.nan, .infinity] {
            XCTAssertThrowsError(try StdMeta.encode(["std:x": .double(value)])) { error in
                let e = error as? CapabilityError
                XCTAssertEqual(e?.code, .invalidInput, "\(error)")
                XCTAssertEqual(e?.details?["reason"], .string("NON_FINITE_NUMBER"), "\(error)")
            }
        }
        XCTAssertThrowsError(
            try CapabilityRegistry(capabilities: [
                Capability(
                    "a.read",
                    meta: AgentMeta(
                        description: "Read.", expose: [.mcp: true], sideEffect: .read, risk: .low,
                        policies: [["decision": "deny", "reason": .double(.nan)]])
                ) { (v: JSONValue, _) in v }
            ])
        ) { error in XCTAssertEqual((error as? CapabilityError)?.code, .invalidInput, "\(error)") }
    }

    /// Object keys are told apart by their bytes, as JSON and the core tell
    /// them apart: both spellings of "café" stay, in a value, in parsed
    /// text, and in an approval request the core wrote (which Swift could
    /// not read before: "duplicate key").
    func testObjectKeysThatAreCanonicallyEquivalentAreTwoKeys() async throws {
        var o = JSONObject()
        o["caf\u{E9}"] = 1
        o["cafe\u{301}"] = 2
        XCTAssertEqual(o.count, 2)
        XCTAssertEqual(o["caf\u{E9}"], 1)
        XCTAssertEqual(o["cafe\u{301}"], 2)
        let parsed = try JSONValue(parsing: "{\"caf\u{E9}\":1,\"cafe\u{301}\":2}")
        XCTAssertEqual(parsed.objectValue?.count, 2)
        let reg = try CapabilityRegistry(capabilities: [
            Capability(
                "a.write",
                meta: AgentMeta(
                    description: "Write.", expose: [.mcp: true], sideEffect: .write, risk: .high,
                    approval: .init(required: true))
            ) { (v: JSONValue, _) in v }
        ])
        let out: Outcome<JSONValue> = try await reg.invoke(
            "a.write", input: JSONValue.object(o), frame: Frame(surface: .mcp, actor: Actor(id: "ann")))
        XCTAssertEqual(try XCTUnwrap(out.approval).input.objectValue?.count, 2)
    }
}
