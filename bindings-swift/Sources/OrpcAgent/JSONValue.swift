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
public struct JSONObject: Sendable, Hashable, Sequence {
    public private(set) var keys: [String] = []
    private var values: [String: JSONValue] = [:]

    public init() {}
    public init(_ pairs: [(String, JSONValue)]) { for (k, v) in pairs { self[k] = v } }

    public subscript(key: String) -> JSONValue? {
        get { values[key] }
        set {
            if let v = newValue {
                if values.updateValue(v, forKey: key) == nil { keys.append(key) }
            } else if values.removeValue(forKey: key) != nil {
                keys.removeAll { $0 == key }
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
            return (keys[i], values[keys[i]]!)
        }
    }

    public static func == (a: JSONObject, b: JSONObject) -> Bool { a.values == b.values }
    public func hash(into h: inout Hasher) { h.combine(values) }
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

// MARK: - Text

/// Why a text is not JSON.
public struct JSONParseError: Error, CustomStringConvertible, Sendable {
    public let offset: Int
    public let reason: String
    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

extension JSONValue {
    /// Parses JSON text, keeping object key order. Duplicate keys are an
    /// error (a second declaration must not silently replace the first).
    public init(parsing text: String) throws {
        var p = JSONParser(Array(text.utf8))
        self = try p.parseDocument()
    }
    public init(parsing data: Data) throws {
        var p = JSONParser(Array(data))
        self = try p.parseDocument()
    }

    /// Compact JSON text, written iteratively (any depth). Non-finite
    /// doubles have no JSON form: they are written as `null` here; the
    /// pipeline and `InputHash` refuse them instead (INVALID_INPUT,
    /// `NON_FINITE_NUMBER`).
    public var jsonText: String {
        var w = JSONWriter()
        w.write(self)
        return w.out
    }
}

private struct JSONParser {
    let b: [UInt8]
    var i = 0
    var depth = 0
    init(_ bytes: [UInt8]) { b = bytes }

    func fail(_ reason: String) -> JSONParseError { JSONParseError(offset: i, reason: reason) }

    mutating func ws() { while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 } }

    mutating func parseDocument() throws -> JSONValue {
        let v = try value()
        ws()
        guard i == b.count else { throw fail("trailing characters") }
        return v
    }

    mutating func expect(_ word: String, _ v: JSONValue) throws -> JSONValue {
        let w = Array(word.utf8)
        guard i + w.count <= b.count, Array(b[i..<i + w.count]) == w else { throw fail("unexpected token") }
        i += w.count
        return v
    }

    mutating func value() throws -> JSONValue {
        ws()
        guard i < b.count else { throw fail("unexpected end") }
        switch b[i] {
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "["):
            depth += 1
            guard depth <= 512 else { throw fail("nested too deeply") }
            defer { depth -= 1 }
            i += 1
            var items: [JSONValue] = []
            ws()
            if i < b.count, b[i] == UInt8(ascii: "]") {
                i += 1
                return .array(items)
            }
            while true {
                items.append(try value())
                ws()
                guard i < b.count else { throw fail("unterminated array") }
                if b[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                if b[i] == UInt8(ascii: "]") {
                    i += 1
                    return .array(items)
                }
                throw fail("expected , or ]")
            }
        case UInt8(ascii: "{"):
            depth += 1
            guard depth <= 512 else { throw fail("nested too deeply") }
            defer { depth -= 1 }
            i += 1
            var obj = JSONObject()
            ws()
            if i < b.count, b[i] == UInt8(ascii: "}") {
                i += 1
                return .object(obj)
            }
            while true {
                ws()
                guard i < b.count, b[i] == UInt8(ascii: "\"") else { throw fail("expected a key") }
                let k = try string()
                ws()
                guard i < b.count, b[i] == UInt8(ascii: ":") else { throw fail("expected :") }
                i += 1
                let v = try value()
                guard obj[k] == nil else { throw fail("duplicate key \"\(k)\"") }
                obj[k] = v
                ws()
                guard i < b.count else { throw fail("unterminated object") }
                if b[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                if b[i] == UInt8(ascii: "}") {
                    i += 1
                    return .object(obj)
                }
                throw fail("expected , or }")
            }
        default: return try number()
        }
    }

    mutating func number() throws -> JSONValue {
        let start = i
        var integral = true
        if i < b.count, b[i] == UInt8(ascii: "-") { i += 1 }
        while i < b.count {
            let c = b[i]
            if c >= 0x30 && c <= 0x39 {
                i += 1
            } else if c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E")
                || c == UInt8(ascii: "+") || c == UInt8(ascii: "-")
            {
                integral = false
                i += 1
            } else {
                break
            }
        }
        guard i > start, let text = String(bytes: b[start..<i], encoding: .utf8) else {
            throw fail("unexpected character")
        }
        if integral {
            if let v = Int64(text) { return .int(v) }
            if let v = UInt64(text) { return .uint(v) }
            // The core's rule (UNREPRESENTABLE_NUMBER): an integer is held
            // exactly (−2^63 … 2^64−1) or refused, never rounded to a double.
            throw fail("integer beyond 64 bits")
        }
        guard let d = Double(text) else { throw fail("bad number") }
        return .double(d)
    }

    mutating func hex4() throws -> UInt32 {
        guard i + 4 <= b.count, let s = String(bytes: b[i..<i + 4], encoding: .ascii), let v = UInt32(s, radix: 16)
        else {
            throw fail("bad \\u escape")
        }
        i += 4
        return v
    }

    mutating func string() throws -> String {
        i += 1  // opening quote
        var bytes: [UInt8] = []
        while true {
            guard i < b.count else { throw fail("unterminated string") }
            let c = b[i]
            i += 1
            if c == UInt8(ascii: "\"") { break }
            if c != UInt8(ascii: "\\") {
                bytes.append(c)
                continue
            }
            guard i < b.count else { throw fail("unterminated escape") }
            let e = b[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): bytes.append(0x22)
            case UInt8(ascii: "\\"): bytes.append(0x5C)
            case UInt8(ascii: "/"): bytes.append(0x2F)
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if scalar >= 0xD800 && scalar < 0xDC00, i + 1 < b.count, b[i] == UInt8(ascii: "\\"),
                    b[i + 1] == UInt8(ascii: "u")
                {
                    i += 2
                    let low = try hex4()
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                let u = Unicode.Scalar(scalar) ?? "\u{FFFD}"
                bytes.append(contentsOf: Array(String(u).utf8))
            default: throw fail("bad escape")
            }
        }
        guard let s = String(bytes: bytes, encoding: .utf8) else { throw fail("invalid UTF-8") }
        return s
    }
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
