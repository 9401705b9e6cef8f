import Foundation
import XCTest

@testable import OrpcAgent

/// The shared conformance vectors (tests/vectors/), read with key order kept.
enum Vectors {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("tests/vectors")

    /// Every case of every file of a suite, as (file, case).
    static func cases(_ suite: String) throws -> [(String, JSONValue)] {
        let dir = root.appendingPathComponent(suite)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".json") }
            .sorted()
        var out: [(String, JSONValue)] = []
        for f in files {
            let doc = try JSONValue(parsing: try Data(contentsOf: dir.appendingPathComponent(f)))
            for c in doc["cases"]?.arrayValue ?? [] { out.append((f, c)) }
        }
        return out
    }
}

/// Numbers compare by value (`1` equals `1.0`), objects by key, arrays in order.
func jsonEqual(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.object(let x), .object(let y)):
        return x.count == y.count && x.allSatisfy { k, v in y[k].map { jsonEqual(v, $0) } ?? false }
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { jsonEqual($0, $1) }
    default:
        if let p = a.doubleValue, let q = b.doubleValue {
            if case .uint(let u) = a, case .uint(let v) = b { return u == v }
            return p == q
        }
        return a == b
    }
}

/// The vectors' subset rule: objects by key (an expected null also matches
/// an absent key), arrays element-wise with equal length.
func subset(_ expected: JSONValue, _ actual: JSONValue?) -> Bool {
    switch (expected, actual) {
    case (.null, nil): return true
    case (.object(let e), .object(let a)?):
        return e.allSatisfy { k, v in (a[k] != nil && subset(v, a[k])) || (v.isNull && a[k] == nil) }
    case (.array(let e), .array(let a)?): return e.count == a.count && zip(e, a).allSatisfy { subset($0, $1) }
    case (_, let a?): return jsonEqual(expected, a)
    default: return false
    }
}

/// A plain error (not a `CapabilityError`): what a `{throw}` schema throws.
struct VectorValidatorThrew: Error { let message: String }

/// The vectors' validator vocabulary: `{required, properties, defaults}`.
func checkSchema(_ schema: JSONValue, _ value: JSONValue) throws -> JSONValue {
    if let m = schema["throw"]?.stringValue { throw VectorValidatorThrew(message: m) }
    if let m = schema["refuse"]?.stringValue { throw CapabilityError(.invalidInput, m) }
    guard var o = value.objectValue else { throw CapabilityError(.invalidInput, "expected an object") }
    for (k, v) in schema["defaults"]?.objectValue ?? JSONObject() where o[k] == nil { o[k] = v }
    for k in schema["required"]?.arrayValue ?? [] {
        if o[k.stringValue ?? ""] == nil {
            throw CapabilityError(.invalidInput, "`\(k.stringValue ?? "")` is required")
        }
    }
    for (k, t) in schema["properties"]?.objectValue ?? JSONObject() {
        guard let x = o[k] else { continue }
        let ok: Bool
        switch t.stringValue ?? "" {
        case "string": ok = x.stringValue != nil
        case "number": ok = x.doubleValue != nil
        case "integer":
            if case .double(let d) = x { ok = d.rounded() == d } else { ok = x.doubleValue != nil }
        case "boolean": ok = x.boolValue != nil
        case "object": ok = x.objectValue != nil
        case "array": ok = x.arrayValue != nil
        case "null": ok = x.isNull
        default: ok = false
        }
        if !ok { throw CapabilityError(.invalidInput, "`\(k)` must be a \(t.stringValue ?? "")") }
    }
    return .object(o)
}

/// A thread-safe list.
final class Locked<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T
    init(_ v: T) { value = v }
    func with<R>(_ f: (inout T) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return f(&value)
    }
}
