// How the driver awaits application code without being held by it
// (SI-9): `race` runs the work in its own task (`startTask`) against a
// timer and the caller's cancellation, `bounded` races a validator or
// redactor against the call's deadline, `FirstOf` lets exactly one of
// them settle the step, and `Raced` says which did. The timer thread
// itself is in Clock.swift.

import Foundation
import OrpcAgentFFI

extension Driver {
    /// Runs `work` in its own task against a timer at `deadlineMs` and the
    /// caller's cancellation; returns the next step kind. The first of them
    /// wins and settles: `answer` tells the core, then the steps that need
    /// no await are performed (`advanceSync`), on the winner's thread; the
    /// others are cancelled and NOT awaited, so a handler that ignores
    /// cancellation cannot hold the call past its deadline (SI-9), and a
    /// busy executor cannot delay the deadline's outcome. (Where the work
    /// starts on this thread, `startTask`, one that blocks before it first
    /// suspends holds this thread, so the caller returns when it stops;
    /// its outcome is still the deadline's, decided and audited then.)
    func race<T: Sendable>(
        deadlineMs: UInt64?, _ work: @escaping @Sendable () async throws -> T,
        answer: @escaping @Sendable (Raced<T>) -> UInt8
    ) async -> UInt8 {
        let first = FirstOf<UInt8>()
        let clock = options.clock
        let settle: @Sendable (Raced<T>) -> Void = { [self] raced in first.finish { advanceSync(answer(raced)) } }
        return await withTaskCancellationHandler {
            // The timer first: the work may run on this thread until it
            // first suspends (`startTask`), and one that blocks there must
            // still be settled at its deadline.
            if let deadlineMs { first.arm(clock.schedule(atMs: deadlineMs) { settle(.timedOut) }) }
            // Settled already (the caller was cancelled): no work starts.
            if !first.isFinished {
                first.started(
                    startTask {
                        do { settle(.value(try await work())) } catch { settle(.failed(error)) }
                    })
            }
            // Settled on this thread (the work did not suspend): no await.
            if let v = first.takeEarly() { return v }
            // Unsafe is sound here: FirstOf resumes exactly once.
            return await withUnsafeContinuation { first.attach($0) }
        } onCancel: {
            settle(.cancelled)
        }
    }

    /// Runs a validator or redactor against the call's deadline (the
    /// core's `call_deadline_ms`, the instant the handler's deadline is
    /// too): one still running then is answered `DeadlinePassed` and the
    /// core ends the call in TIMEOUT, so a hook that never returns cannot
    /// hold the call (it is cancelled and not awaited, like a handler).
    func bounded<T: Sendable>(
        _ work: @escaping @Sendable () async throws -> T, answer: @escaping @Sendable (Raced<T>) -> UInt8
    ) async -> UInt8 {
        await race(deadlineMs: inv.callDeadlineMs(), work, answer: answer)
    }
}

/// `work`'s value, or `nil` when it has not settled by `deadlineMs` on
/// `clock` (it is then cancelled and not awaited, as a hook past its
/// deadline in the driver). A hook outside a call — the approval-input
/// redactor an approval UI asks for — holds no caller past the core's
/// bound. The caller's cancellation is a failure (`CancellationError`).
func settled<T: Sendable>(
    by deadlineMs: UInt64, on clock: any AgentClock, _ work: @escaping @Sendable () async throws -> T
) async throws -> T? {
    let first = FirstOf<Result<T, Error>?>()
    return try await withTaskCancellationHandler {
        first.arm(clock.schedule(atMs: deadlineMs) { first.finish { nil } })
        if !first.isFinished {
            first.started(
                startTask {
                    let r: Result<T, Error>
                    do { r = .success(try await work()) } catch { r = .failure(error) }
                    first.finish { r }
                })
        }
        if let early = first.takeEarly() { return try early?.get() }
        return try await withUnsafeContinuation { first.attach($0) }?.get()
    } onCancel: {
        first.finish { .failure(CancellationError()) }
    }
}

/// Starts `body` in a task of its own, which the caller can abandon at a
/// deadline (SI-9). Where the toolchain and the OS have `Task.immediate`
/// (Swift 6.2; macOS/iOS 26), the task starts on the calling thread and
/// runs there until it first suspends: a handler that answers without
/// suspending costs no hand-off to another thread (the wake-up of an idle
/// worker was most of a call). A handler that blocks its thread before it
/// first suspends delays its caller as it would in Node; its late answer is
/// still the core's TIMEOUT (every answer carries the time), decided and
/// audited at the deadline by the timer. Elsewhere, `Task { }`.
func startTask(_ body: sending @escaping () async -> Void) -> Task<Void, Never> {
    #if compiler(>=6.2)
        if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
            return Task.immediate(operation: body)
        }
    #endif
    return Task(operation: body)
}

/// Resumes a continuation exactly once, whoever comes first (the work, the
/// timer, the caller's cancellation); later ones are discarded. The winner
/// settles the outcome itself, on its own thread, before the awaiting task
/// resumes: nothing the outcome needs waits for the awaiting task's
/// executor to have a thread. The loser work and timer are cancelled.
final class FirstOf<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: UnsafeContinuation<T, Never>?
    private var early: T?
    private var done = false
    private var timer: AgentTimer?
    private var job: Task<Void, Never>?

    /// The value settled before anyone awaited it (the work finished on
    /// the calling thread), taken once; `nil` if not settled yet.
    func takeEarly() -> T? {
        lock.lock()
        defer { lock.unlock() }
        let v = early
        early = nil
        return v
    }

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

    /// The timer that may settle this race: cancelled when another wins
    /// (at once if one has).
    func arm(_ t: AgentTimer) {
        lock.lock()
        if done {
            lock.unlock()
            t.cancel()
            return
        }
        timer = t
        lock.unlock()
    }

    /// The work's task: cancelled when another wins (at once if one has).
    func started(_ j: Task<Void, Never>) {
        lock.lock()
        if done {
            lock.unlock()
            j.cancel()
            return
        }
        job = j
        lock.unlock()
    }

    /// Whether a winner has settled already.
    var isFinished: Bool {
        lock.lock()
        defer { lock.unlock() }
        return done
    }

    /// The first call wins: the others are cancelled, `settle` runs here,
    /// once, and its value resumes the awaiting task. Later calls do
    /// nothing.
    func finish(_ settle: () -> T) {
        lock.lock()
        guard !done else {
            lock.unlock()
            return
        }
        done = true
        let (t, j) = (timer, job)
        timer = nil
        job = nil
        lock.unlock()
        t?.cancel()
        j?.cancel()
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
