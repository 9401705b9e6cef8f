import Foundation

/// The time source the driver reads and arms timers on. `SystemClock` in
/// apps; tests pass a manual clock so deadlines and backoff are exact.
public protocol AgentClock: Sendable {
    /// Unix time in milliseconds.
    func nowMs() -> UInt64
    /// Returns at `deadlineMs` (unix ms); throws `CancellationError` when
    /// the calling task is cancelled first.
    func sleep(untilMs deadlineMs: UInt64) async throws
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
}

/// Resumes a continuation once, whoever comes first (the work, the timer,
/// the caller's cancellation); later results are discarded.
final class FirstOf<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, Never>?
    private var early: T?
    private var done = false
    private var cleanup: [@Sendable () -> Void] = []

    func attach(_ c: CheckedContinuation<T, Never>) {
        lock.lock()
        if let v = early {
            early = nil
            lock.unlock()
            c.resume(returning: v)
            runCleanup()
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

    func finish(_ v: T) {
        lock.lock()
        guard !done else {
            lock.unlock()
            return
        }
        done = true
        if let c = continuation {
            continuation = nil
            lock.unlock()
            c.resume(returning: v)
            runCleanup()
        } else {
            early = v
            lock.unlock()
        }
    }

    private func runCleanup() {
        lock.lock()
        let fs = cleanup
        cleanup = []
        lock.unlock()
        for f in fs { f() }
    }
}

enum Raced<T: Sendable>: Sendable {
    case value(T)
    case failed(Error)
    case timedOut
    case cancelled
}

/// Runs `work` in its own task against a timer at `deadlineMs` and the
/// caller's cancellation. Returns as soon as one of them wins; the others
/// are cancelled and NOT awaited, so a handler that ignores cancellation
/// cannot hold the caller past its deadline (SI-9).
func race<T: Sendable>(
    clock: AgentClock, deadlineMs: UInt64?, _ work: @escaping @Sendable () async throws -> T
) async -> Raced<T> {
    let first = FirstOf<Raced<T>>()
    return await withTaskCancellationHandler {
        await withCheckedContinuation { (c: CheckedContinuation<Raced<T>, Never>) in
            let job = Task {
                do { first.finish(.value(try await work())) } catch { first.finish(.failed(error)) }
            }
            first.onFinish { job.cancel() }
            if let deadlineMs {
                let timer = Task {
                    do {
                        try await clock.sleep(untilMs: deadlineMs)
                        first.finish(.timedOut)
                    } catch {}
                }
                first.onFinish { timer.cancel() }
            }
            first.attach(c)
        }
    } onCancel: {
        first.finish(.cancelled)
    }
}
