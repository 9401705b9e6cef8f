import Foundation
import XCTest

@testable import OrpcAgent

/// The call's deadline bounds every hook, and a handler is never started
/// past it (issue 14 items 3 and 4). Every answer tells the core the time,
/// so the core decides that a validator, policy or audit subscriber spent
/// the deadline; a validator, output validator or redactor still running at
/// the deadline is answered `DeadlinePassed` (TIMEOUT, fail closed).
///
/// No durations decide an outcome: a hook moves the test clock itself, and a
/// hook that never returns waits on a continuation the test resumes at the
/// end. The real-time waits below are watchdogs only (a call that hangs
/// fails the test instead of hanging the suite).
final class HookDeadlineTests: XCTestCase {
    static let timeoutMs: UInt64 = 1_000
    static let secret = "DE44-SECRET"

    let meta = AgentMeta(
        description: "Write a note.", expose: [.mcp: true], sideEffect: .write, risk: .low,
        timeoutMs: Int(HookDeadlineTests.timeoutMs))
    let frame = Frame(surface: .mcp)

    /// A hook that never returns: it waits for the test to release it (and
    /// ignores cancellation, as a careless hook would), noting whether its
    /// task was cancelled meanwhile.
    final class Hang: @unchecked Sendable {
        struct State {
            var started = false
            var cancelled = false
            var released = false
            var c: CheckedContinuation<Void, Never>?
            /// Who waits for the hook's task to see its cancellation.
            var cancellationWaiters: [CheckedContinuation<Void, Never>] = []
        }
        private let state = Locked(State())

        func wait() async {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                    let resume = state.with { s -> Bool in
                        s.started = true
                        if s.released { return true }
                        s.c = c
                        return false
                    }
                    if resume { c.resume() }
                }
            } onCancel: {
                let waiters = state.with { s -> [CheckedContinuation<Void, Never>] in
                    s.cancelled = true
                    defer { s.cancellationWaiters = [] }
                    return s.cancellationWaiters
                }
                for waiter in waiters { waiter.resume() }
            }
        }

        /// The hook began (before it moves a manual clock past the deadline).
        func enter() { state.with { $0.started = true } }

        /// Returns once the hook's task has seen its cancellation. The
        /// deadline cancels the task on the thread that fires it; the task
        /// sees it on its own, possibly after the call's outcome is back.
        func cancellationSeen() async {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let seen = state.with { s -> Bool in
                    if s.cancelled { return true }
                    s.cancellationWaiters.append(c)
                    return false
                }
                if seen { c.resume() }
            }
        }

        var started: Bool { state.with { $0.started } }
        var cancelled: Bool { state.with { $0.cancelled } }

        func release() {
            let c = state.with { s -> CheckedContinuation<Void, Never>? in
                s.released = true
                defer { s.c = nil }
                return s.c
            }
            c?.resume()
        }
    }

    /// `body`'s result, or nil when it did not finish within `seconds` of
    /// real time (a watchdog: the call hung).
    func finishes<T: Sendable>(within seconds: Double = 20, _ body: @escaping @Sendable () async -> T) async -> T? {
        let once = Locked<(done: Bool, c: CheckedContinuation<T?, Never>?)>((false, nil))
        let finish: @Sendable (T?) -> Void = { v in
            let c = once.with { s -> CheckedContinuation<T?, Never>? in
                guard !s.done else { return nil }
                s.done = true
                defer { s.c = nil }
                return s.c
            }
            c?.resume(returning: v)
        }
        return await withCheckedContinuation { (c: CheckedContinuation<T?, Never>) in
            once.with { $0.c = c }
            Task { finish(await body()) }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { finish(nil) }
        }
    }

    /// The call's error code (or "ok"), within the watchdog's bound.
    func outcome(of reg: CapabilityRegistry, input: JSONValue = ["text": "hi"]) async -> String? {
        let frame = self.frame
        return await finishes {
            do {
                let out: Outcome<JSONValue> = try await reg.invoke("notes.write", input: input, frame: frame)
                return out.value == nil ? "approval" : "ok"
            } catch let e as CapabilityError {
                return e.code.rawValue
            } catch {
                return "\(error)"
            }
        }
    }

    func registry(
        _ capability: Capability, clock: any AgentClock, policies: [Policy] = [],
        audit: (@Sendable (AuditRecord) -> Void)? = nil
    ) throws -> CapabilityRegistry {
        try CapabilityRegistry(
            capabilities: [capability],
            options: RegistryOptions(
                policies: policies, audit: audit, auditPayloads: true, clock: clock, logger: .off))
    }

    static func record(_ records: Locked<[AuditRecord]>) -> @Sendable (AuditRecord) -> Void {
        { r in records.with { $0.append(r) } }
    }

    static func finished(_ records: Locked<[AuditRecord]>) -> [String] {
        records.with { $0.filter { $0.event == "finished" }.map { $0.outcome ?? "?" } }
    }

    // MARK: a handler is never started past its deadline

    /// The validator spent the deadline: its answer says so, and the core
    /// ends the call in TIMEOUT instead of starting the handler.
    func testAValidatorThatSpentTheDeadlineMeansTheHandlerNeverStarts() async throws {
        let clock = ManualClock()
        let handled = Locked(0)
        let records = Locked<[AuditRecord]>([])
        let reg = try registry(
            Capability(
                "notes.write", meta: meta,
                validateInput: { (v: JSONValue) in
                    clock.advance(by: Self.timeoutMs + 1)
                    return v
                }
            ) { (v: JSONValue, _) in
                handled.with { $0 += 1 }
                return v
            }, clock: clock, audit: Self.record(records))
        let got = await outcome(of: reg)
        XCTAssertEqual(got, "TIMEOUT")
        XCTAssertEqual(handled.with { $0 }, 0, "the handler ran past its deadline")
        XCTAssertEqual(Self.finished(records), ["TIMEOUT"])
    }

    /// The same for host policies: two of them, each within its own
    /// timeout, together past the call's deadline.
    func testHostPoliciesThatSpentTheDeadlineMeanTheHandlerNeverStarts() async throws {
        let clock = ManualClock()
        let handled = Locked(0)
        let records = Locked<[AuditRecord]>([])
        let slow = HostPolicy(name: "slow") { _ in
            clock.advance(by: Self.timeoutMs * 6 / 10)
            return .allow
        }
        let reg = try registry(
            Capability("notes.write", meta: meta, policies: [.host(slow)]) { (v: JSONValue, _) in
                handled.with { $0 += 1 }
                return v
            }, clock: clock, policies: [.host(slow)], audit: Self.record(records))
        let got = await outcome(of: reg)
        XCTAssertEqual(got, "TIMEOUT")
        XCTAssertEqual(handled.with { $0 }, 0, "the handler ran past its deadline")
        XCTAssertEqual(Self.finished(records), ["TIMEOUT"])
    }

    /// And for an audit subscriber that blocked on the `started` record.
    func testAnAuditSubscriberThatSpentTheDeadlineMeansTheHandlerNeverStarts() async throws {
        let clock = ManualClock()
        let handled = Locked(0)
        let records = Locked<[AuditRecord]>([])
        let reg = try registry(
            Capability("notes.write", meta: meta) { (v: JSONValue, _) in
                handled.with { $0 += 1 }
                return v
            }, clock: clock,
            audit: { r in
                records.with { $0.append(r) }
                if r.event == "started" { clock.advance(by: Self.timeoutMs) }
            })
        let got = await outcome(of: reg)
        XCTAssertEqual(got, "TIMEOUT")
        XCTAssertEqual(handled.with { $0 }, 0, "the handler ran past its deadline")
        XCTAssertEqual(Self.finished(records), ["TIMEOUT"])
    }

    /// In time, the same hooks change nothing.
    func testHooksWithinTheDeadlineRunTheHandler() async throws {
        let clock = ManualClock()
        let handled = Locked(0)
        let reg = try registry(
            Capability(
                "notes.write", meta: meta,
                validateInput: { (v: JSONValue) in
                    clock.advance(by: Self.timeoutMs - 1)
                    return v
                }
            ) { (v: JSONValue, _) in
                handled.with { $0 += 1 }
                return v
            }, clock: clock)
        let got = await outcome(of: reg)
        XCTAssertEqual(got, "ok")
        XCTAssertEqual(handled.with { $0 }, 1)
    }

    // MARK: every hook is bounded by the call's deadline

    /// What a hanging hook's call came to: its outcome, the finished audit
    /// record, how many times the handler ran, and whether the hook's task
    /// was cancelled; the hook is released afterwards (its late answer goes
    /// nowhere: still one finished record).
    struct Hung {
        var outcome: String?
        var finished: [String]
        var handled: Int
        /// The hook's task was cancelled at the deadline — or, on the
        /// system clock, the deadline passed before the hook was started
        /// (on a busy machine the 50 ms can be spent before the handler's
        /// result reaches the redactor): either way the hook does not run on.
        var hookCancelled: Bool
        var audit: String
    }

    /// `make` builds the capability around a hook that calls `hang()`. With
    /// the manual clock the hook moves time past the deadline itself; with
    /// the system clock the deadline is a real 50 ms.
    func hangs(
        system: Bool,
        _ make: (AgentMeta, @escaping @Sendable () async -> Void, @escaping @Sendable () -> Void) -> Capability
    ) async throws -> Hung {
        let clock: any AgentClock = system ? SystemClock() : ManualClock()
        let meta = AgentMeta(
            description: "Write a note.", expose: [.mcp: true], sideEffect: .write, risk: .low,
            timeoutMs: system ? 50 : Int(Self.timeoutMs))
        let hang = Hang()
        let handled = Locked(0)
        let records = Locked<[AuditRecord]>([])
        let capability = make(
            meta,
            {
                hang.enter()
                if let manual = clock as? ManualClock { manual.advance(by: Self.timeoutMs) }
                await hang.wait()
            },
            { handled.with { $0 += 1 } })
        let reg = try registry(capability, clock: clock, audit: Self.record(records))
        let started = Date()
        let got = await outcome(of: reg)
        let elapsed = Date().timeIntervalSince(started)
        if system { XCTAssertLessThan(elapsed, 10, "the call waited for the hook") }
        // Only the manual clock orders "the hook started" before the
        // deadline; the system clock's 50 ms may pass first (not a failure).
        if !system { XCTAssertTrue(hang.started, "the hook never ran") }
        // A hook that began is cancelled at the deadline; its task may see
        // that after the outcome is back, so the test waits for it (bounded
        // by a watchdog, not a guess at how long it takes).
        if hang.started {
            let seen = await finishes(within: 20) { [hang] in
                await hang.cancellationSeen()
                return true
            }
            XCTAssertNotNil(seen, "a hook that began was not cancelled (system clock: \(system))")
        }
        let cancelled = hang.cancelled || (system && !hang.started)
        hang.release()
        let audit = records.with { $0.map(\.json.jsonText).joined() }
        return Hung(
            outcome: got, finished: Self.finished(records), handled: handled.with { $0 }, hookCancelled: cancelled,
            audit: audit)
    }

    func testAnInputValidatorThatNeverReturnsIsTimeout() async throws {
        for system in [false, true] {
            let hung = try await hangs(system: system) { meta, hang, handled in
                Capability(
                    "notes.write", meta: meta,
                    validateInput: { (v: JSONValue) in
                        await hang()
                        return v
                    }
                ) { (v: JSONValue, _) in
                    handled()
                    return v
                }
            }
            XCTAssertEqual(hung.outcome, "TIMEOUT", "system clock: \(system)")
            XCTAssertEqual(hung.finished, ["TIMEOUT"], "system clock: \(system)")
            XCTAssertEqual(hung.handled, 0, "system clock: \(system)")
            XCTAssertTrue(hung.hookCancelled, "the validator's task was not cancelled (system clock: \(system))")
        }
    }

    func testAnOutputValidatorThatNeverReturnsIsTimeout() async throws {
        for system in [false, true] {
            let hung = try await hangs(system: system) { meta, hang, handled in
                Capability(
                    "notes.write", meta: meta,
                    validateOutput: { (v: JSONValue) in
                        await hang()
                        return v
                    }
                ) { (_: JSONValue, _) -> JSONValue in
                    handled()
                    return ["account": .string(Self.secret)]
                }
            }
            XCTAssertEqual(hung.outcome, "TIMEOUT", "system clock: \(system)")
            XCTAssertEqual(hung.finished, ["TIMEOUT"], "system clock: \(system)")
            // On the system clock the deadline may pass before the handler starts.
            if system {
                XCTAssertLessThanOrEqual(hung.handled, 1, "system clock: never twice")
            } else {
                XCTAssertEqual(hung.handled, 1, "manual clock")
            }
            XCTAssertTrue(hung.hookCancelled, "the validator's task was not cancelled (system clock: \(system))")
            XCTAssertFalse(hung.audit.contains(Self.secret), "the unvalidated output was recorded")
        }
    }

    func testARedactorThatNeverReturnsIsTimeout() async throws {
        for system in [false, true] {
            let hung = try await hangs(system: system) { meta, hang, handled in
                Capability(
                    "notes.write", meta: meta,
                    redactOutput: { (v: JSONValue, _) in
                        await hang()
                        return v
                    }
                ) { (_: JSONValue, _) -> JSONValue in
                    handled()
                    return ["account": .string(Self.secret)]
                }
            }
            XCTAssertEqual(hung.outcome, "TIMEOUT", "system clock: \(system)")
            XCTAssertEqual(hung.finished, ["TIMEOUT"], "system clock: \(system)")
            // On the system clock the deadline may pass before the handler starts.
            if system {
                XCTAssertLessThanOrEqual(hung.handled, 1, "system clock: never twice")
            } else {
                XCTAssertEqual(hung.handled, 1, "manual clock")
            }
            XCTAssertTrue(hung.hookCancelled, "the redactor's task was not cancelled (system clock: \(system))")
            XCTAssertFalse(hung.audit.contains(Self.secret), "the unredacted output was recorded")
        }
    }
}
