// The depth probe (`Probe`) and its `Encoder`: what `HostJSON` learns
// about an `Encodable` before `JSONEncoder` meets it. Apart from
// HostJSON.swift because an `Encoder`'s containers are long and say
// nothing about the rest.

import Foundation

/// Walks an `Encodable`'s `encode(to:)` producing nothing, to learn what
/// `JSONEncoder` would meet before it runs: how deep the containers nest
/// (it stops at one past `maxDepth`) and where the first NaN or infinity
/// is. Nested `encode(to:)` calls count too (a value delegating to
/// another opens no container: optionals, wrappers), up to four times
/// `maxDepth`, so no chain of them recurses unbounded either; a
/// `JSONValue` inside is walked iteratively. `Data`, `URL` and `Decimal` are scalars,
/// as `JSONEncoder` writes them.
final class Probe {
    struct Stop: Error {}

    let maxDepth: Int
    private(set) var deeper: (depth: Int, path: String)?
    private(set) var nonFiniteAt: String?
    private var nested = 0

    init(maxDepth: Int) { self.maxDepth = maxDepth }

    /// `value` at `depth` (the containers around it).
    func walk(_ value: Encodable, depth: Int, path: [CodingKey]) throws {
        if deeper != nil { throw Stop() }
        switch value {
        case is Data, is URL, is Decimal: return
        case let d as Double: return number(d.isFinite, path)
        case let f as Float: return number(f.isFinite, path)
        case let j as JSONValue:
            // Its own encode(to:) recurses per level: walked iteratively instead.
            var w = JSONWriter(maxDepth: max(0, maxDepth - depth), text: false)
            w.write(j)
            let base = HostJSON.pointer(path)
            if let at = w.nonFiniteAt, nonFiniteAt == nil { nonFiniteAt = HostJSON.join(base, at) }
            if let (d, at) = w.deeper {
                deeper = (depth + d, HostJSON.join(base, at))
                throw Stop()
            }
            return
        default: break
        }
        nested += 1
        defer { nested -= 1 }
        if nested > 4 * maxDepth {
            deeper = (maxDepth + 1, HostJSON.pointer(path))
            throw Stop()
        }
        try value.encode(to: ProbeEncoder(probe: self, depth: depth, codingPath: path))
    }

    func number(_ finite: Bool, _ path: [CodingKey]) {
        if !finite, nonFiniteAt == nil { nonFiniteAt = HostJSON.pointer(path) }
    }

    /// A container opened at `depth`; past the bound, the walk stops.
    func open(_ depth: Int, _ path: [CodingKey]) {
        if depth > maxDepth, deeper == nil { deeper = (depth, HostJSON.pointer(path)) }
    }

    func check() throws { if deeper != nil { throw Stop() } }
}

struct IndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String { String(intValue ?? 0) }
    init(_ i: Int) { intValue = i }
    init?(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { return nil }
}

struct ProbeEncoder: Encoder {
    let probe: Probe
    /// Containers around the value this encoder encodes.
    let depth: Int
    let codingPath: [CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy: Key.Type) -> KeyedEncodingContainer<Key> {
        probe.open(depth + 1, codingPath)
        return KeyedEncodingContainer(ProbeKeyed<Key>(probe: probe, depth: depth + 1, codingPath: codingPath))
    }

    func unkeyedContainer() -> UnkeyedEncodingContainer {
        probe.open(depth + 1, codingPath)
        return ProbeUnkeyed(probe: probe, depth: depth + 1, codingPath: codingPath)
    }

    func singleValueContainer() -> SingleValueEncodingContainer {
        ProbeSingle(probe: probe, depth: depth, codingPath: codingPath)
    }
}

struct ProbeKeyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let probe: Probe
    /// This container's own depth.
    let depth: Int
    let codingPath: [CodingKey]

    func encodeNil(forKey key: Key) throws { try probe.check() }
    func encode(_ value: Bool, forKey key: Key) throws { try probe.check() }
    func encode(_ value: String, forKey key: Key) throws { try probe.check() }
    func encode(_ value: Double, forKey key: Key) throws {
        try probe.check()
        probe.number(value.isFinite, codingPath + [key])
    }
    func encode(_ value: Float, forKey key: Key) throws {
        try probe.check()
        probe.number(value.isFinite, codingPath + [key])
    }
    func encode(_ value: Int, forKey key: Key) throws { try probe.check() }
    func encode(_ value: Int8, forKey key: Key) throws { try probe.check() }
    func encode(_ value: Int16, forKey key: Key) throws { try probe.check() }
    func encode(_ value: Int32, forKey key: Key) throws { try probe.check() }
    func encode(_ value: Int64, forKey key: Key) throws { try probe.check() }
    func encode(_ value: UInt, forKey key: Key) throws { try probe.check() }
    func encode(_ value: UInt8, forKey key: Key) throws { try probe.check() }
    func encode(_ value: UInt16, forKey key: Key) throws { try probe.check() }
    func encode(_ value: UInt32, forKey key: Key) throws { try probe.check() }
    func encode(_ value: UInt64, forKey key: Key) throws { try probe.check() }
    func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try probe.check()
        try probe.walk(value, depth: depth, path: codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<
        NestedKey
    > {
        probe.open(depth + 1, codingPath + [key])
        return KeyedEncodingContainer(
            ProbeKeyed<NestedKey>(probe: probe, depth: depth + 1, codingPath: codingPath + [key]))
    }

    func nestedUnkeyedContainer(forKey key: Key) -> UnkeyedEncodingContainer {
        probe.open(depth + 1, codingPath + [key])
        return ProbeUnkeyed(probe: probe, depth: depth + 1, codingPath: codingPath + [key])
    }

    func superEncoder() -> Encoder {
        ProbeEncoder(probe: probe, depth: depth, codingPath: codingPath + [AnyKey("super")])
    }
    func superEncoder(forKey key: Key) -> Encoder {
        ProbeEncoder(probe: probe, depth: depth, codingPath: codingPath + [key])
    }
}

struct ProbeUnkeyed: UnkeyedEncodingContainer {
    let probe: Probe
    /// This container's own depth.
    let depth: Int
    let codingPath: [CodingKey]
    var count = 0

    init(probe: Probe, depth: Int, codingPath: [CodingKey]) {
        self.probe = probe
        self.depth = depth
        self.codingPath = codingPath
    }

    private mutating func next() throws -> [CodingKey] {
        try probe.check()
        defer { count += 1 }
        return codingPath + [IndexKey(count)]
    }

    mutating func encodeNil() throws { _ = try next() }
    mutating func encode(_ value: Bool) throws { _ = try next() }
    mutating func encode(_ value: String) throws { _ = try next() }
    mutating func encode(_ value: Double) throws { probe.number(value.isFinite, try next()) }
    mutating func encode(_ value: Float) throws { probe.number(value.isFinite, try next()) }
    mutating func encode(_ value: Int) throws { _ = try next() }
    mutating func encode(_ value: Int8) throws { _ = try next() }
    mutating func encode(_ value: Int16) throws { _ = try next() }
    mutating func encode(_ value: Int32) throws { _ = try next() }
    mutating func encode(_ value: Int64) throws { _ = try next() }
    mutating func encode(_ value: UInt) throws { _ = try next() }
    mutating func encode(_ value: UInt8) throws { _ = try next() }
    mutating func encode(_ value: UInt16) throws { _ = try next() }
    mutating func encode(_ value: UInt32) throws { _ = try next() }
    mutating func encode(_ value: UInt64) throws { _ = try next() }
    mutating func encode<T: Encodable>(_ value: T) throws {
        let path = try next()
        try probe.walk(value, depth: depth, path: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let path = codingPath + [IndexKey(count)]
        count += 1
        probe.open(depth + 1, path)
        return KeyedEncodingContainer(ProbeKeyed<NestedKey>(probe: probe, depth: depth + 1, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> UnkeyedEncodingContainer {
        let path = codingPath + [IndexKey(count)]
        count += 1
        probe.open(depth + 1, path)
        return ProbeUnkeyed(probe: probe, depth: depth + 1, codingPath: path)
    }

    mutating func superEncoder() -> Encoder {
        let path = codingPath + [IndexKey(count)]
        count += 1
        return ProbeEncoder(probe: probe, depth: depth, codingPath: path)
    }
}

struct ProbeSingle: SingleValueEncodingContainer {
    let probe: Probe
    /// The containers around this value.
    let depth: Int
    let codingPath: [CodingKey]

    func encodeNil() throws { try probe.check() }
    func encode(_ value: Bool) throws { try probe.check() }
    func encode(_ value: String) throws { try probe.check() }
    func encode(_ value: Double) throws {
        try probe.check()
        probe.number(value.isFinite, codingPath)
    }
    func encode(_ value: Float) throws {
        try probe.check()
        probe.number(value.isFinite, codingPath)
    }
    func encode(_ value: Int) throws { try probe.check() }
    func encode(_ value: Int8) throws { try probe.check() }
    func encode(_ value: Int16) throws { try probe.check() }
    func encode(_ value: Int32) throws { try probe.check() }
    func encode(_ value: Int64) throws { try probe.check() }
    func encode(_ value: UInt) throws { try probe.check() }
    func encode(_ value: UInt8) throws { try probe.check() }
    func encode(_ value: UInt16) throws { try probe.check() }
    func encode(_ value: UInt32) throws { try probe.check() }
    func encode(_ value: UInt64) throws { try probe.check() }
    func encode<T: Encodable>(_ value: T) throws {
        try probe.check()
        try probe.walk(value, depth: depth, path: codingPath)
    }
}
