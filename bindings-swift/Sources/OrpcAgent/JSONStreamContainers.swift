// `JSONStream`'s keyed and unkeyed containers: each entry is checked in
// order (`entry`) and written as it comes (JSONStream.swift).

import Foundation

struct StreamKeyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let stream: JSONStream
    let id: Int
    /// This container's own depth.
    let depth: Int
    var codingPath: [CodingKey] { [] }

    private func at(_ key: Key) throws { try stream.entry(id, key: key.stringValue) }

    mutating func encodeNil(forKey key: Key) throws {
        try at(key)
        stream.null()
    }
    mutating func encode(_ value: Bool, forKey key: Key) throws {
        try at(key)
        stream.scalar(value)
    }
    mutating func encode(_ value: String, forKey key: Key) throws {
        try at(key)
        stream.scalar(value)
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        try at(key)
        try stream.scalar(value)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        try at(key)
        try stream.scalar(value)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws {
        try at(key)
        stream.scalar(value)
    }
    mutating func encode(_ value: Int8, forKey key: Key) throws {
        try at(key)
        stream.scalar(value)
    }
    mutating func encode(_ value: Int16, forKey key: Key) throws {
        try at(key)
        stream.scalar(value)
    }
    mutating func encode(_ value: Int32, forKey key: Key) throws {
        try at(key)
        stream.scalar(value)
    }
    mutating func encode(_ value: Int64, forKey key: Key) throws {
        try at(key)
        stream.scalar(value)
    }
    mutating func encode(_ value: UInt, forKey key: Key) throws {
        try at(key)
        stream.scalar(value)
    }
    mutating func encode(_ value: UInt8, forKey key: Key) throws {
        try at(key)
        stream.scalar(value)
    }
    mutating func encode(_ value: UInt16, forKey key: Key) throws {
        try at(key)
        stream.scalar(value)
    }
    mutating func encode(_ value: UInt32, forKey key: Key) throws {
        try at(key)
        stream.scalar(value)
    }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        try at(key)
        stream.scalar(value)
    }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try at(key)
        try stream.walk(value, depth: depth)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let id = opened(key, object: true)
        return KeyedEncodingContainer(StreamKeyed<NestedKey>(stream: stream, id: id, depth: depth + 1))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> UnkeyedEncodingContainer {
        StreamUnkeyed(stream: stream, id: opened(key, object: false), depth: depth + 1)
    }

    private func opened(_ key: Key, object: Bool) -> Int {
        guard (try? at(key)) != nil else { return stream.fail() }
        return stream.openContainer(object: object, depth: depth + 1)
    }

    mutating func superEncoder() -> Encoder { stream.unstreamableEncoder() }
    mutating func superEncoder(forKey key: Key) -> Encoder { stream.unstreamableEncoder() }
}

struct StreamUnkeyed: UnkeyedEncodingContainer {
    let stream: JSONStream
    let id: Int
    /// This container's own depth.
    let depth: Int
    var codingPath: [CodingKey] { [] }
    private(set) var count = 0

    init(stream: JSONStream, id: Int, depth: Int) {
        self.stream = stream
        self.id = id
        self.depth = depth
    }

    private mutating func next() throws {
        try stream.entry(id, key: nil)
        count += 1
    }

    mutating func encodeNil() throws {
        try next()
        stream.null()
    }
    mutating func encode(_ value: Bool) throws {
        try next()
        stream.scalar(value)
    }
    mutating func encode(_ value: String) throws {
        try next()
        stream.scalar(value)
    }
    mutating func encode(_ value: Double) throws {
        try next()
        try stream.scalar(value)
    }
    mutating func encode(_ value: Float) throws {
        try next()
        try stream.scalar(value)
    }
    mutating func encode(_ value: Int) throws {
        try next()
        stream.scalar(value)
    }
    mutating func encode(_ value: Int8) throws {
        try next()
        stream.scalar(value)
    }
    mutating func encode(_ value: Int16) throws {
        try next()
        stream.scalar(value)
    }
    mutating func encode(_ value: Int32) throws {
        try next()
        stream.scalar(value)
    }
    mutating func encode(_ value: Int64) throws {
        try next()
        stream.scalar(value)
    }
    mutating func encode(_ value: UInt) throws {
        try next()
        stream.scalar(value)
    }
    mutating func encode(_ value: UInt8) throws {
        try next()
        stream.scalar(value)
    }
    mutating func encode(_ value: UInt16) throws {
        try next()
        stream.scalar(value)
    }
    mutating func encode(_ value: UInt32) throws {
        try next()
        stream.scalar(value)
    }
    mutating func encode(_ value: UInt64) throws {
        try next()
        stream.scalar(value)
    }
    mutating func encode<T: Encodable>(_ value: T) throws {
        try next()
        try stream.walk(value, depth: depth)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(StreamKeyed<NestedKey>(stream: stream, id: opened(object: true), depth: depth + 1))
    }

    mutating func nestedUnkeyedContainer() -> UnkeyedEncodingContainer {
        StreamUnkeyed(stream: stream, id: opened(object: false), depth: depth + 1)
    }

    private mutating func opened(object: Bool) -> Int {
        guard (try? next()) != nil else { return stream.fail() }
        return stream.openContainer(object: object, depth: depth + 1)
    }

    mutating func superEncoder() -> Encoder { stream.unstreamableEncoder() }
}
