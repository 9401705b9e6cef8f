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
    public func nowMs() -> UInt64 { UInt64(Date().timeIntervalSince1970 * 1000) }
    public func sleep(untilMs deadlineMs: UInt64) async throws {
        let now = nowMs()
        if deadlineMs > now { try await Task.sleep(nanoseconds: (deadlineMs - now) * 1_000_000) }
        try Task.checkCancellation()
    }
    public func schedule(atMs deadlineMs: UInt64, _ fire: @escaping @Sendable () -> Void) -> AgentTimer {
        DeadlineThread.shared.schedule(atMs: deadlineMs, fire)
    }
}

/// One thread that fires deadlines for `SystemClock`: arming is a lock and
/// a heap push (the thread is woken only when the new deadline is the
/// earliest), cancelling is a flag.
final class DeadlineThread: @unchecked Sendable {
    static let shared = DeadlineThread()

    final class Entry: AgentTimer, @unchecked Sendable {
        let at: UInt64
        let fire: @Sendable () -> Void
        var cancelled = false
        init(at: UInt64, fire: @escaping @Sendable () -> Void) {
            self.at = at
            self.fire = fire
        }
        func cancel() { DeadlineThread.shared.cancel(self) }
    }

    let cond = NSCondition()
    private var heap: [Entry] = []
    private var cancelledInHeap = 0

    /// Cancelled entries stay in the heap until popped, so cancelling is
    /// O(1); when they are most of it, the heap is rebuilt without them
    /// (deadlines are usually cancelled long before they fire).
    func cancel(_ e: Entry) {
        cond.lock()
        if !e.cancelled {
            e.cancelled = true
            cancelledInHeap += 1
            if cancelledInHeap > 1024, cancelledInHeap * 2 > heap.count {
                heap = heap.filter { !$0.cancelled }.sorted { $0.at < $1.at }
                cancelledInHeap = 0
            }
        }
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
        push(e)
        let earliest = heap[0] === e
        cond.unlock()
        if earliest { cond.signal() }
        return e
    }

    private func loop() {
        cond.lock()
        while true {
            while let top = heap.first, top.cancelled {
                pop()
                cancelledInHeap -= 1
            }
            guard let top = heap.first else {
                cond.wait()
                continue
            }
            let now = SystemClock().nowMs()
            if top.at > now {
                _ = cond.wait(until: Date(timeIntervalSince1970: Double(top.at) / 1000))
                continue
            }
            pop()
            top.cancelled = true  // fired: a later cancel() is a no-op
            cond.unlock()
            // Off this thread: what a deadline settles (the core's answer,
            // the finished audit record) must not delay the next deadline.
            DispatchQueue(label: "orpc-agent.deadline").async(execute: top.fire)
            cond.lock()
        }
    }

    private func push(_ e: Entry) {
        heap.append(e)
        var i = heap.count - 1
        while i > 0 {
            let p = (i - 1) / 2
            if heap[p].at <= heap[i].at { break }
            heap.swapAt(p, i)
            i = p
        }
    }

    private func pop() {
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        var i = 0
        while true {
            let l = 2 * i + 1
            let r = l + 1
            var m = i
            if l < heap.count, heap[l].at < heap[m].at { m = l }
            if r < heap.count, heap[r].at < heap[m].at { m = r }
            if m == i { break }
            heap.swapAt(i, m)
            i = m
        }
    }
}

/// Resumes a continuation exactly once, whoever comes first (the work, the
/// timer, the caller's cancellation); later ones are discarded. The winner
/// settles the outcome itself, on its own thread, before the awaiting task
/// resumes: nothing the outcome needs waits for the awaiting task's
/// executor to have a thread.
final class FirstOf<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: UnsafeContinuation<T, Never>?
    private var early: T?
    private var done = false
    private var cleanup: [@Sendable () -> Void] = []

    func attach(_ c: UnsafeContinuation<T, Never>) {
        lock.lock()
        if let v = early {
            early = nil
            lock.unlock()
            c.resume(returning: v)
            return
        }
        continuation = c
        lock.unlock()
    }

    func onFinish(_ f: @escaping @Sendable () -> Void) {
        lock.lock()
        if done {
            lock.unlock()
            f()
            return
        }
        cleanup.append(f)
        lock.unlock()
    }

    /// The first call wins: the others are cancelled (cleanup), `settle`
    /// runs here, once, and its value resumes the awaiting task. Later
    /// calls do nothing.
    func finish(_ settle: () -> T) {
        lock.lock()
        guard !done else {
            lock.unlock()
            return
        }
        done = true
        let fs = cleanup
        cleanup = []
        lock.unlock()
        for f in fs { f() }
        let v = settle()
        lock.lock()
        let c = continuation
        continuation = nil
        if c == nil { early = v }
        lock.unlock()
        c?.resume(returning: v)
    }
}

enum Raced<T: Sendable>: Sendable {
    case value(T)
    case failed(Error)
    case timedOut
    case cancelled
}
