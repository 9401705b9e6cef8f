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

    /// A number as RFC 8259 writes one: `-? (0 | [1-9][0-9]*) (. [0-9]+)?
    /// ([eE] [+-]? [0-9]+)?`. Anything else (`+1`, `01`, `.5`, `1.`) is
    /// refused as Node's and Python's readers refuse it, so a text is
    /// read the same in every language.
    mutating func number() throws -> JSONValue {
        let start = i
        var integral = true
        if i < b.count, b[i] == UInt8(ascii: "-") { i += 1 }
        guard i < b.count, isDigit(b[i]) else { throw fail("unexpected character") }
        if b[i] == UInt8(ascii: "0") {
            i += 1
            if i < b.count, isDigit(b[i]) { throw fail("bad number: a leading zero") }
        } else {
            digits()
        }
        if i < b.count, b[i] == UInt8(ascii: ".") {
            integral = false
            i += 1
            guard i < b.count, isDigit(b[i]) else { throw fail("bad number: no digit after the point") }
            digits()
        }
        if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            integral = false
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            guard i < b.count, isDigit(b[i]) else { throw fail("bad number: no digit in the exponent") }
            digits()
        }
        // ASCII only: the bytes are valid UTF-8.
        let text = String(decoding: b[start..<i], as: UTF8.self)
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

    private func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    private mutating func digits() { while i < b.count, isDigit(b[i]) { i += 1 } }

    /// Exactly four hex digits (no sign: `UInt32(_:radix:)` would take `+`).
    mutating func hex4() throws -> UInt32 {
        guard i + 4 <= b.count else { throw fail("bad \\u escape") }
        var v: UInt32 = 0
        for c in b[i..<i + 4] {
            let digit: UInt32
            switch c {
            case 0x30...0x39: digit = UInt32(c - 0x30)
            case 0x41...0x46: digit = UInt32(c - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(c - 0x61 + 10)
            default: throw fail("bad \\u escape")
            }
            v = v << 4 | digit
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
            // JSON escapes every control character (Node's and Python's readers refuse a raw one).
            if c < 0x20 { throw fail("control character in a string") }
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
                let u = try escapedScalar()
                bytes.append(contentsOf: Array(String(u).utf8))
            default: throw fail("bad escape")
            }
        }
        guard let s = String(bytes: bytes, encoding: .utf8) else { throw fail("invalid UTF-8") }
        return s
    }

    /// The scalar of a `\u` escape (its `\u` read): a UTF-16 surrogate
    /// must come as a high one followed by the escape of a low one. An
    /// unpaired surrogate names no character: a Swift `String` cannot hold
    /// it, and replacing it would hand a handler (and bind an approval to)
    /// another text than the one sent, so it is refused.
    private mutating func escapedScalar() throws -> Unicode.Scalar {
        let first = try hex4()
        var scalar = first
        if (0xDC00..<0xE000).contains(first) { throw fail("unpaired surrogate") }
        if (0xD800..<0xDC00).contains(first) {
            guard i + 1 < b.count, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u") else {
                throw fail("unpaired surrogate")
            }
            i += 2
            let low = try hex4()
            guard (0xDC00..<0xE000).contains(low) else { throw fail("unpaired surrogate") }
            scalar = 0x10000 + ((first - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let u = Unicode.Scalar(scalar) else { throw fail("unpaired surrogate") }
        return u
    }
}
