// JSON text to `JSONValue`: `init(parsing:)` and its parser, which keeps
// key order and integer exactness and fails with the offset.

import Foundation

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

    /// Compact JSON text, or `nil` when the value holds a non-finite
    /// double, which has no JSON form (what a handler error's details
    /// cross as: such details are left out, as Node and Python leave out
    /// details with no JSON form).
    var exactJSONText: String? {
        var w = JSONWriter()
        w.write(self)
        return w.nonFiniteAt == nil ? w.out : nil
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
