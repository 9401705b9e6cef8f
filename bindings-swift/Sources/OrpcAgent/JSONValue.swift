import Foundation

/// A JSON value whose objects keep their key order.
///
/// Used where a payload is dynamic (model tool calls, approval inputs,
/// audit records, metadata read from files). Typed payloads use your own
/// `Codable` types instead; `JSONValue` is `Codable` too, so either works
/// with `CapabilityRegistry.invoke`.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// An integer that fits `Int64`.
    case int(Int64)
    /// An integer above `Int64.max` (JSON allows it; hashes keep it exact).
    case uint(UInt64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// Subscript into an object (`nil` when absent or not an object).
    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }
    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }
    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
    /// The number as a `Double` (any numeric case).
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .uint(let u): return Double(u)
        case .double(let d): return d
        default: return nil
        }
    }
    /// The number as a `UInt64`, when it is a non-negative integer.
    public var uint64Value: UInt64? {
        switch self {
        case .int(let i) where i >= 0: return UInt64(i)
        case .uint(let u): return u
        case .double(let d) where d >= 0 && d.rounded() == d && d < 1.8e19: return UInt64(d)
        default: return nil
        }
    }
}

/// A JSON object that remembers insertion order (declaration order matters:
/// capabilities are registered, and tool-name collisions reported, in it).
/// Keys are told apart by their UTF-8 bytes, as JSON, the core, Node and
/// Python tell them apart: "é" and "e\u{301}" are two keys (Swift's `String
/// ==` would make them one, and one value would replace the other).
public struct JSONObject: Sendable, Hashable, Sequence {
    public private(set) var keys: [String] = []
    private var values: [ByteKey: JSONValue] = [:]

    public init() {}
    public init(_ pairs: [(String, JSONValue)]) { for (k, v) in pairs { self[k] = v } }

    public subscript(key: String) -> JSONValue? {
        get { values[ByteKey(key)] }
        set {
            if let v = newValue {
                if values.updateValue(v, forKey: ByteKey(key)) == nil { keys.append(key) }
            } else if values.removeValue(forKey: ByteKey(key)) != nil {
                keys.removeAll { $0.utf8.elementsEqual(key.utf8) }
            }
        }
    }

    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    public func makeIterator() -> AnyIterator<(key: String, value: JSONValue)> {
        var i = 0
        return AnyIterator {
            guard i < keys.count else { return nil }
            defer { i += 1 }
            return (keys[i], values[ByteKey(keys[i])]!)
        }
    }

    public static func == (a: JSONObject, b: JSONObject) -> Bool { a.values == b.values }
    public func hash(into h: inout Hasher) { h.combine(values) }
}

/// A string compared and hashed by its UTF-8 bytes, as JSON and the core
/// compare keys and ids (`JSONObject`, the registry's capability ids).
struct ByteKey: Hashable, Sendable {
    let text: String
    init(_ text: String) { self.text = text }
    static func == (a: ByteKey, b: ByteKey) -> Bool { a.text.utf8.elementsEqual(b.text.utf8) }
    func hash(into h: inout Hasher) {
        var t = text
        t.withUTF8 { h.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral v: Bool) { self = .bool(v) }
    public init(integerLiteral v: Int64) { self = .int(v) }
    public init(floatLiteral v: Double) { self = .double(v) }
    public init(stringLiteral v: String) { self = .string(v) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(JSONObject(elements)) }
}

// MARK: - Codable

extension JSONValue: Codable {
    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? c.decode(Int64.self) {
            self = .int(i)
        } else if let u = try? c.decode(UInt64.self) {
            self = .uint(u)
        } else if let d = try? c.decode(Double.self) {
            self = .double(d)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([JSONValue].self) {
            self = .array(a)
        } else {
            let o = try decoder.container(keyedBy: AnyKey.self)
            var obj = JSONObject()
            for k in o.allKeys { obj[k.stringValue] = try o.decode(JSONValue.self, forKey: k) }
            self = .object(obj)
        }
    }

    public func encode(to encoder: Encoder) throws {
        switch self {
        case .object(let o):
            var c = encoder.container(keyedBy: AnyKey.self)
            for (k, v) in o { try c.encode(v, forKey: AnyKey(k)) }
        default:
            var c = encoder.singleValueContainer()
            switch self {
            case .null: try c.encodeNil()
            case .bool(let b): try c.encode(b)
            case .int(let i): try c.encode(i)
            case .uint(let u): try c.encode(u)
            case .double(let d): try c.encode(d)
            case .string(let s): try c.encode(s)
            case .array(let a): try c.encode(a)
            case .object: break
            }
        }
    }
}

struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ s: String) { stringValue = s }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { return nil }
}

// MARK: - Bridging typed values

enum JSONBridge {
    /// `value` as `T`: itself when it already is one (no JSON on the hot
    /// path), else through JSON.
    static func convert<T: Decodable>(_ value: Any, to _: T.Type) throws -> T {
        if let v = value as? T { return v }
        if T.self == JSONValue.self { return try JSONValue(parsing: try data(of: value)) as! T }
        return try JSONDecoder().decode(T.self, from: try data(of: value))
    }

    /// JSON bytes of an `Encodable` value (or a `JSONValue`), walked at
    /// most to the core's hash depth first (`HostJSON.export`), so a
    /// hostile value is refused rather than recursed into. A value with no
    /// JSON form (a NaN or infinity, nesting past that depth, a throwing
    /// `encode(to:)`) throws.
    static func data(of value: Any) throws -> Data {
        Data(try text(of: value).utf8)
    }

    static func text(of value: Any) throws -> String {
        guard case .json(let text, nil) = HostJSON.export(value) else {
            throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "the value has no JSON form"))
        }
        return text
    }
}

struct AnyEncodable: Encodable {
    let wrapped: Encodable
    init(_ w: Encodable) { wrapped = w }
    func encode(to encoder: Encoder) throws { try wrapped.encode(to: encoder) }
}
