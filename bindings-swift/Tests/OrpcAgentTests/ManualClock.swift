import Foundation

@testable import OrpcAgent

/// A virtual clock for the vectors (starts at unix ms 1 000 000). Like
/// tokio's paused time, it jumps to the next timer when everything waits:
/// a ticker advances to the earliest sleeper once no clock activity has
/// happened for a few real milliseconds.
final class ManualClock: AgentClock, @unchecked Sendable {
    private let lock = NSLock()
    private var now: UInt64 = 1_000_000
    private var waiters: [(id: Int, at: UInt64, c: CheckedContinuation<Void, Error>)] = []
    private var nextId = 0
    private var activity = 0

    func nowMs() -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        return now
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
                    lock.unlock()
                    c.resume()
                    return
                }
                waiters.append((id, deadline, c))
                activity += 1
                lock.unlock()
            }
        } onCancel: {
            lock.lock()
            let i = waiters.firstIndex { $0.id == id }
            let w = i.map { waiters.remove(at: $0) }
            activity += 1
            lock.unlock()
            w?.c.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock to `to` and wakes every sleeper due by then.
    func advance(to target: UInt64) {
        lock.lock()
        if target > now { now = target }
        let due = waiters.filter { $0.at <= now }
        waiters.removeAll { $0.at <= now }
        activity += 1
        lock.unlock()
        for w in due { w.c.resume() }
    }

    func advance(by ms: UInt64) { advance(to: nowMs() + ms) }

    /// Runs `body` with auto-advance on.
    func run<T>(_ body: () async throws -> T) async rethrows -> T {
        let ticker = Task.detached { [self] in
            var quiet = 0
            var seen = -1
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: 1_000_000)
                lock.lock()
                let a = activity
                let next = waiters.map(\.at).min()
                lock.unlock()
                if a == seen {
                    quiet += 1
                } else {
                    quiet = 0
                    seen = a
                }
                if quiet >= 4, let next {
                    advance(to: next)
                    quiet = 0
                }
            }
        }
        defer { ticker.cancel() }
        return try await body()
    }

    /// Fails every remaining sleeper (handlers that ignored their deadline).
    func drain() {
        lock.lock()
        let all = waiters
        waiters = []
        lock.unlock()
        for w in all { w.c.resume(throwing: CancellationError()) }
    }
}
