// Governed invoke against a direct `await` of the same closure (DESIGN §11:
// "Swift: governed invoke — report, then set"). Release build:
//   make bench-swift
// Prints p50/p90 per call for each, interleaved in rounds so both see the
// same machine state, and the p50 ratio.
import Foundation
import OrpcAgent

struct Query: Codable, Sendable { let n: Int }

let handler: @Sendable (Query, HandlerContext) async throws -> Int = { q, _ in q.n &* 2 }
let meta = AgentMeta(description: "Double a number.", expose: [.mcp: true], sideEffect: .none, risk: .low)
let jsonHandler: @Sendable (JSONValue, HandlerContext) async throws -> JSONValue = { v, _ in v }
let registry = try! CapabilityRegistry(capabilities: [
    Capability("math.double", meta: meta, handler: handler),
    Capability("json.echo", meta: meta, handler: jsonHandler),
])
let frame = Frame(surface: .mcp)
let context = HandlerContext(attempt: 1, deadlineAtMs: 0, capabilityId: "math.double", frame: frame)

func percentile(_ xs: [UInt64], _ p: Double) -> Double {
    let s = xs.sorted()
    return Double(s[min(s.count - 1, Int(Double(s.count) * p))])
}

@inline(never) func direct(_ q: Query) async throws -> Int { try await handler(q, context) }

/// The floor of any design that can abandon a handler at its deadline
/// (SI-9): the closure in its own task, awaited.
@inline(never) func inTask(_ q: Query) async throws -> Int { try await Task { try await handler(q, context) }.value }

/// A model's tool call: dynamic JSON in and out (no stage 4 conversion).
@inline(never) func governedJSON(_ v: JSONValue) async throws -> Int {
    let out: Outcome<JSONValue> = try await registry.invoke("json.echo", input: v, frame: frame)
    return out.value == nil ? 0 : 1
}

@inline(never) func governed(_ q: Query) async throws -> Int {
    let out: Outcome<Int> = try await registry.invoke("math.double", input: q, frame: frame)
    return out.value ?? 0
}

/// Runs off the main actor, as an app's request handlers would.
func measure() async throws {
    let rounds = 10
    let perRound = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 5_000
    var directNs: [UInt64] = []
    var governedNs: [UInt64] = []
    var taskNs: [UInt64] = []
    var jsonNs: [UInt64] = []
    var sink = 0
    // Warm-up.
    for i in 0..<2_000 {
        sink &+= try await direct(Query(n: i))
        sink &+= try await governed(Query(n: i))
    }
    for _ in 0..<rounds {
        for i in 0..<perRound {
            let t0 = DispatchTime.now().uptimeNanoseconds
            sink &+= try await direct(Query(n: i))
            directNs.append(DispatchTime.now().uptimeNanoseconds - t0)
        }
        for i in 0..<perRound {
            let t0 = DispatchTime.now().uptimeNanoseconds
            sink &+= try await governed(Query(n: i))
            governedNs.append(DispatchTime.now().uptimeNanoseconds - t0)
        }
        for i in 0..<perRound {
            let t0 = DispatchTime.now().uptimeNanoseconds
            sink &+= try await governedJSON(.int(Int64(i)))
            jsonNs.append(DispatchTime.now().uptimeNanoseconds - t0)
        }
        for i in 0..<perRound {
            let t0 = DispatchTime.now().uptimeNanoseconds
            sink &+= try await inTask(Query(n: i))
            taskNs.append(DispatchTime.now().uptimeNanoseconds - t0)
        }
    }
    let d50 = percentile(directNs, 0.5)
    let g50 = percentile(governedNs, 0.5)
    print("swift bench (\(rounds * perRound) calls each, release, p50 per call; sink \(sink % 7))")
    print(
        String(
            format: "  direct await of the closure : p50 %8.3f µs  p90 %8.3f µs", d50 / 1000,
            percentile(directNs, 0.9) / 1000))
    print(
        String(
            format: "  the closure in its own Task  : p50 %8.3f µs  p90 %8.3f µs", percentile(taskNs, 0.5) / 1000,
            percentile(taskNs, 0.9) / 1000))
    print(
        String(
            format: "  governed registry.invoke     : p50 %8.3f µs  p90 %8.3f µs", g50 / 1000,
            percentile(governedNs, 0.9) / 1000))
    print(
        String(
            format: "  governed, JSONValue in/out   : p50 %8.3f µs  p90 %8.3f µs", percentile(jsonNs, 0.5) / 1000,
            percentile(jsonNs, 0.9) / 1000))
    print(
        String(
            format: "  ratio governed/direct (p50)  : %.1f×  (+%.2f µs per call)", g50 / max(d50, 1), (g50 - d50) / 1000
        ))
}

/// `OrpcAgentBench --only governed|json|task|direct [calls]`: one variant in
/// a loop, nothing timed — for a profiler (`perf record -p`).
func profile(_ variant: String, _ calls: Int) async throws {
    var sink = 0
    for i in 0..<calls {
        switch variant {
        case "governed": sink &+= try await governed(Query(n: i))
        case "json": sink &+= try await governedJSON(.int(Int64(i)))
        case "task": sink &+= try await inTask(Query(n: i))
        case "direct": sink &+= try await direct(Query(n: i))
        default:
            print("--only takes governed, json, task or direct, not \(variant)")
            return
        }
    }
    print("\(variant): \(calls) calls; sink \(sink % 7)")
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--only", arguments.count >= 2 {
    let calls = arguments.count > 2 ? Int(arguments[2]) ?? 1_000_000 : 1_000_000
    try await Task.detached { try await profile(arguments[1], calls) }.value
} else {
    try await Task.detached { try await measure() }.value
}
