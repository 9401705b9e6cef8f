// `JSONStream`'s `Encoder` and its single-value container: where an
// `encode(to:)` starts and where it writes a scalar. The keyed and
// unkeyed containers are in JSONStreamContainers.swift.

import Foundation

struct StreamEncoder: Encoder {
    let stream: JSONStream
    let depth: Int
    let level: Int
    var codingPath: [CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy: Key.Type) -> KeyedEncodingContainer<Key> {
        let id = stream.begin(level: level) ? stream.openContainer(object: true, depth: depth + 1) : -1
        return KeyedEncodingContainer(StreamKeyed<Key>(stream: stream, id: id, depth: depth + 1))
    }

    func unkeyedContainer() -> UnkeyedEncodingContainer {
        let id = stream.begin(level: level) ? stream.openContainer(object: false, depth: depth + 1) : -1
        return StreamUnkeyed(stream: stream, id: id, depth: depth + 1)
    }

    func singleValueContainer() -> SingleValueEncodingContainer {
        StreamSingle(stream: stream, depth: depth, level: level)
    }
}

private struct StreamSingle: SingleValueEncodingContainer {
    let stream: JSONStream
    /// The containers around this value.
    let depth: Int
    let level: Int
    var codingPath: [CodingKey] { [] }

    private func begin() throws { guard stream.begin(level: level) else { throw JSONStream.Unstreamable() } }

    mutating func encodeNil() throws {
        try begin()
        stream.null()
    }
    mutating func encode(_ value: Bool) throws {
        try begin()
        stream.scalar(value)
    }
    mutating func encode(_ value: String) throws {
        try begin()
        stream.scalar(value)
    }
    mutating func encode(_ value: Double) throws {
        try begin()
        try stream.scalar(value)
    }
    mutating func encode(_ value: Float) throws {
        try begin()
        try stream.scalar(value)
    }
    mutating func encode(_ value: Int) throws {
        try begin()
        stream.scalar(value)
    }
    mutating func encode(_ value: Int8) throws {
        try begin()
        stream.scalar(value)
    }
    mutating func encode(_ value: Int16) throws {
        try begin()
        stream.scalar(value)
    }
    mutating func encode(_ value: Int32) throws {
        try begin()
        stream.scalar(value)
    }
    mutating func encode(_ value: Int64) throws {
        try begin()
        stream.scalar(value)
    }
    mutating func encode(_ value: UInt) throws {
        try begin()
        stream.scalar(value)
    }
    mutating func encode(_ value: UInt8) throws {
        try begin()
        stream.scalar(value)
    }
    mutating func encode(_ value: UInt16) throws {
        try begin()
        stream.scalar(value)
    }
    mutating func encode(_ value: UInt32) throws {
        try begin()
        stream.scalar(value)
    }
    mutating func encode(_ value: UInt64) throws {
        try begin()
        stream.scalar(value)
    }
    mutating func encode<T: Encodable>(_ value: T) throws {
        try begin()
        try stream.walk(value, depth: depth)
    }
}
