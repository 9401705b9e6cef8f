import Foundation

@testable import OrpcAgent

/// A virtual clock for the vectors (starts at unix ms 1 000 000). Like
/// tokio's paused time, it jumps to the next timer when everything waits:
/// a ticker advances to the earliest sleeper or timer once no clock
/// activity has happened for a while of real time.
///
/// What keeps that order total:
/// - everything a vector's call waits on is registered synchronously by the
///   thread that arms it — a deadline timer (`schedule`, no task), a
///   handler's or policy's delay (`waiter`, before the hook first
///   suspends) — so once the call awaits, what it waits for is listed;
/// - a sleeper or waiter the clock woke counts as running until its task
///   has resumed (`inFlight`): the ticker never jumps while one has not,
///   however long the machine takes to schedule it;
/// - the ticker decides and advances under one hold of the lock.
///
/// The one registration that can lag is a handler started in a task of its
/// own (Swift 6.0's `Task { }`): its delay appears when the task first
/// runs. So the ticker jumps to a deadline timer, which a late delay would
/// have preceded, only after a long quiet (`timerQuietMs`), and to a
/// sleeper after a short one.
final class ManualClock: AgentClock, @unchecked Sendable {
    private enum Wake {
        case sleeper(CheckedContinuation<Void, Error>)
        case timer(@Sendable () -> Void)
        case waiter(Waiter)
    }
    private let lock = NSLock()
    private var now: UInt64 = 1_000_000
    private var waiters: [(id: Int, at: UInt64, wake: Wake)] = []
    private var nextId = 0
    private var activity = 0
    /// Sleepers and waiters woken whose tasks have not resumed yet.
    private var inFlight = 0

    /// Real milliseconds of quiet before the ticker jumps to a sleeper, and
    /// to a deadline timer.
    static let sleeperQuietMs = 20
    static let timerQuietMs = 200

    func nowMs() -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        return now
    }

    private func register(_ at: UInt64, _ wake: Wake) -> Int {
        nextId += 1
        waiters.append((nextId, at, wake))
        activity += 1
        return nextId
    }

    private func remove(_ id: Int) -> Wake? {
        let i = waiters.firstIndex { $0.id == id }
        activity += 1
        return i.map { waiters.remove(at: $0).wake }
    }

    /// A woken sleeper's or waiter's task runs again.
    fileprivate func resumed() {
        lock.lock()
        inFlight -= 1
        activity += 1
        lock.unlock()
    }

    func sleep(untilMs deadline: UInt64) async throws {
        lock.lock()
        if deadline <= now {
            lock.unlock()
            try Task.checkCancellation()
            return
        }
        nextId += 1
        let id = nextId
        lock.unlock()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, Error>) in
                lock.lock()
                if Task.isCancelled {
                    lock.unlock()
                    c.resume(throwing: CancellationError())
                    return
                }
                // The clock may have moved past it since the check above
                // (another thread's `advance`): no later advance would wake it.
                if deadline <= now {
                    inFlight += 1  // as if woken: `resumed` below
                    lock.unlock()
                    c.resume()
                    return
                }
                waiters.append((id, deadline, .sleeper(c)))
                activity += 1
                lock.unlock()
            }
        } onCancel: {
            lock.lock()
            let w = remove(id)
            lock.unlock()
            if case .sleeper(let c)? = w { c.resume(throwing: CancellationError()) }
        }
        // Resumed without an error: woken by the clock.
        resumed()
    }

    /// A deadline timer, registered at once (no task), fired by the
    /// `advance` that reaches it, on that thread.
    func schedule(atMs deadlineMs: UInt64, _ fire: @escaping @Sendable () -> Void) -> AgentTimer {
        lock.lock()
        if deadlineMs <= now {
            lock.unlock()
            fire()
            return Timer(clock: self, id: -1)
        }
        let id = register(deadlineMs, .timer(fire))
        lock.unlock()
        return Timer(clock: self, id: id)
    }

    private struct Timer: AgentTimer {
        let clock: ManualClock
        let id: Int
        func cancel() {
            clock.lock.lock()
            _ = clock.remove(id)
            clock.lock.unlock()
        }
    }

    /// A delay that ignores cancellation (a badly behaved hook), registered
    /// now, on the calling thread: `await w.wait()` returns once the clock
    /// reaches `untilMs` (or `drain` ends it).
    func waiter(untilMs at: UInt64) -> Waiter {
        let w = Waiter(clock: self)
        lock.lock()
        if at <= now {
            lock.unlock()
            w.open(counted: false)
            return w
        }
        _ = register(at, .waiter(w))
        lock.unlock()
        return w
    }

    /// Moves the clock to `target` and takes every sleeper and timer due by
    /// then (the lock held); each woken sleeper or waiter is in flight.
    private func advanceHoldingLock(to target: UInt64) -> [Wake] {
        if target > now { now = target }
        let due = waiters.filter { $0.at <= now }.sorted { ($0.at, $0.id) < ($1.at, $1.id) }
        waiters.removeAll { $0.at <= now }
        activity += 1
        for w in due {
            if case .timer = w.wake { continue }
            inFlight += 1
        }
        return due.map(\.wake)
    }

    /// Moves the clock to `to` and wakes every sleeper and timer due by then.
    func advance(to target: UInt64) {
        lock.lock()
        let due = advanceHoldingLock(to: target)
        lock.unlock()
        for w in due { Self.wake(w) }
    }

    private static func wake(_ w: Wake) {
        switch w {
        case .sleeper(let c): c.resume()
        case .timer(let fire): fire()
        case .waiter(let w): w.open(counted: true)
        }
    }

    func advance(by ms: UInt64) { advance(to: nowMs() + ms) }

    /// Runs `body` with auto-advance on.
    func run<T>(_ body: () async throws -> T) async rethrows -> T {
        let ticker = Task.detached { [self] in
            var quietSince = DispatchTime.now().uptimeNanoseconds
            var seen = -1
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: 1_000_000)
                let t = DispatchTime.now().uptimeNanoseconds
                // Decided and advanced under one hold of the lock: nothing
                // registered meanwhile is woken at a later instant.
                lock.lock()
                if activity != seen || inFlight > 0 {
                    seen = activity
                    quietSince = t
                    lock.unlock()
                    continue
                }
                guard let next = waiters.min(by: { ($0.at, $0.id) < ($1.at, $1.id) }) else {
                    lock.unlock()
                    continue
                }
                let needed: Int
                if case .timer = next.wake { needed = Self.timerQuietMs } else { needed = Self.sleeperQuietMs }
                guard Int((t - quietSince) / 1_000_000) >= needed else {
                    lock.unlock()
                    continue
                }
                let due = advanceHoldingLock(to: next.at)
                seen = activity
                quietSince = t
                lock.unlock()
                for w in due { Self.wake(w) }
            }
        }
        defer { ticker.cancel() }
        return try await body()
    }

    /// Ends every remaining sleeper (handlers that ignored their deadline)
    /// and drops every timer.
    func drain() {
        lock.lock()
        let all = waiters
        waiters = []
        activity += 1
        lock.unlock()
        for w in all {
            switch w.wake {
            case .sleeper(let c): c.resume(throwing: CancellationError())
            case .waiter(let w): w.open(counted: false)
            case .timer: break
            }
        }
    }
}

/// A one-shot gate a hook awaits without cancellation (`ManualClock.waiter`).
final class Waiter: @unchecked Sendable {
    private let lock = NSLock()
    private let clock: ManualClock
    private var isOpen = false
    /// Opened by the clock's advance: in flight until its task resumes.
    private var counted = false
    private var continuation: CheckedContinuation<Void, Never>?

    init(clock: ManualClock) { self.clock = clock }

    func open(counted: Bool) {
        lock.lock()
        isOpen = true
        self.counted = counted
        let c = continuation
        continuation = nil
        lock.unlock()
        c?.resume()
    }

    func wait() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            lock.lock()
            if isOpen {
                lock.unlock()
                c.resume()
                return
            }
            continuation = c
            lock.unlock()
        }
        lock.lock()
        let woken = counted
        counted = false
        lock.unlock()
        if woken { clock.resumed() }
    }
}
