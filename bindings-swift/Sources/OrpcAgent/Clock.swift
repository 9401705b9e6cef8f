import Foundation

/// The time source the driver reads and arms timers on. `SystemClock` in
/// apps; tests pass a manual clock so deadlines and backoff are exact.
public protocol AgentClock: Sendable {
    /// Unix time in milliseconds.
    func nowMs() -> UInt64
    /// Returns at `deadlineMs` (unix ms); throws `CancellationError` when
    /// the calling task is cancelled first.
    func sleep(untilMs deadlineMs: UInt64) async throws
    /// Calls `fire` at `deadlineMs` unless the returned timer is cancelled
    /// first. The driver arms one per handler run (the deadline), host
    /// policy (its timeout), validator and redactor (the call's deadline);
    /// `fire` settles the call's outcome on the thread it is called
    /// on (the core's TIMEOUT, the finished audit record). The default
    /// sleeps in a task (so it waits for the cooperative pool);
    /// `SystemClock` uses one shared timer thread, which costs no task on
    /// the hot path and hands each fired deadline to a dispatch queue, so a
    /// deadline never waits for the cooperative pool.
    func schedule(atMs deadlineMs: UInt64, _ fire: @escaping @Sendable () -> Void) -> AgentTimer
}

/// An armed timer.
public protocol AgentTimer: Sendable {
    func cancel()
}

extension Task: AgentTimer {}

extension AgentClock {
    public func schedule(atMs deadlineMs: UInt64, _ fire: @escaping @Sendable () -> Void) -> AgentTimer {
        Task {
            do {
                try await sleep(untilMs: deadlineMs)
                fire()
            } catch {}
        }
    }
}

/// Wall-clock time and `Task.sleep`.
public struct SystemClock: AgentClock {
    public init() {}
    /// A system clock set before 1970 reads as 0 (as the core's), never a trap.
    public func nowMs() -> UInt64 { UInt64(max(0, Date().timeIntervalSince1970 * 1000)) }
    public func sleep(untilMs deadlineMs: UInt64) async throws {
        // In steps of at most a day: a longer wait in nanoseconds overflows
        // (and Swift's sleep would return at once).
        while case let now = nowMs(), deadlineMs > now {
            try await Task.sleep(nanoseconds: min(deadlineMs - now, 86_400_000) * 1_000_000)
        }
        try Task.checkCancellation()
    }
    public func schedule(atMs deadlineMs: UInt64, _ fire: @escaping @Sendable () -> Void) -> AgentTimer {
        DeadlineThread.shared.schedule(atMs: deadlineMs, fire)
    }
}

/// One thread that fires deadlines for `SystemClock`: arming is a lock and
/// a heap push, cancelling a lock and a heap removal — each entry knows its
/// place in the heap, so nothing cancelled stays behind (deadlines are
/// usually cancelled long before they fire, one per handler run). The
/// thread is woken only for a deadline earlier than the instant it sleeps
/// until: after a cancel it still sleeps until the cancelled deadline, so
/// a stream of calls with the same timeout wakes it about once per timeout,
/// not once per call.
final class DeadlineThread: @unchecked Sendable {
    static let shared = DeadlineThread()

    final class Entry: AgentTimer, @unchecked Sendable {
        let at: UInt64
        let fire: @Sendable () -> Void
        /// Its index in the heap; -1 once removed (cancelled or fired).
        var slot = -1
        init(at: UInt64, fire: @escaping @Sendable () -> Void) {
            self.at = at
            self.fire = fire
        }
        func cancel() { DeadlineThread.shared.cancel(self) }
    }

    let cond = NSCondition()
    private var heap: [Entry] = []
    /// When the thread wakes by itself: `.max` asleep with nothing armed,
    /// 0 while it is awake (it reads the heap before it sleeps again).
    private var sleepingUntil: UInt64 = 0

    func cancel(_ e: Entry) {
        cond.lock()
        if e.slot >= 0 { remove(at: e.slot) }
        cond.unlock()
    }

    private init() {
        let t = Thread { [unowned self] in self.loop() }
        t.name = "orpc-agent deadlines"
        t.start()
    }

    func schedule(atMs at: UInt64, _ fire: @escaping @Sendable () -> Void) -> AgentTimer {
        let e = Entry(at: at, fire: fire)
        cond.lock()
        heap.append(e)
        e.slot = heap.count - 1
        up(e.slot)
        let wake = at < sleepingUntil
        cond.unlock()
        if wake { cond.signal() }
        return e
    }

    private func loop() {
        cond.lock()
        while true {
            guard let top = heap.first else {
                sleepingUntil = .max
                cond.wait()
                sleepingUntil = 0
                continue
            }
            let now = SystemClock().nowMs()
            if top.at > now {
                // Woken on time, or early by an earlier deadline.
                sleepingUntil = top.at
                _ = cond.wait(until: Date(timeIntervalSince1970: Double(top.at) / 1000))
                sleepingUntil = 0
                continue
            }
            remove(at: 0)  // fired: a later cancel() is a no-op
            cond.unlock()
            // Off this thread: what a deadline settles (the core's answer,
            // the finished audit record) must not delay the next deadline.
            DispatchQueue(label: "orpc-agent.deadline").async(execute: top.fire)
            cond.lock()
        }
    }

    private func remove(at i: Int) {
        let last = heap.count - 1
        heap[i].slot = -1
        if i != last {
            heap.swapAt(i, last)
            heap[i].slot = i
        }
        heap.removeLast()
        if i < heap.count {
            down(i)
            up(i)
        }
    }

    private func swap(_ a: Int, _ b: Int) {
        heap.swapAt(a, b)
        heap[a].slot = a
        heap[b].slot = b
    }

    private func up(_ start: Int) {
        var i = start
        while i > 0 {
            let p = (i - 1) / 2
            if heap[p].at <= heap[i].at { break }
            swap(p, i)
            i = p
        }
    }

    private func down(_ start: Int) {
        var i = start
        while true {
            let l = 2 * i + 1
            let r = l + 1
            var m = i
            if l < heap.count, heap[l].at < heap[m].at { m = l }
            if r < heap.count, heap[r].at < heap[m].at { m = r }
            if m == i { break }
            swap(i, m)
            i = m
        }
    }
}
