import Foundation
import OrpcAgentFFI

/// The core's depth bounds, read once from the linked core: Swift walks a
/// value only as deep as the core could accept it, so no recursive walk runs
/// unbounded on a hostile value (and no depth is a Swift constant).
enum CoreDepth {
    /// The deepest raw input the core accepts (`limits::MAX_INPUT_DEPTH`).
    static let input = Int(inputMaxDepth())
    /// The deepest value the approval hash binds (`MAX_HASH_DEPTH`): the
    /// bound for every value Swift exports, hashes or converts through JSON.
    static let hash = Int(maxHashDepth())
}

/// Host values as the core's FFI wants them measured (`FfiHostInput`),
/// without any unbounded recursion. Swift reports only what it meets —
/// the JSON text, where a NaN or infinity sits, where it stopped walking —
/// and the core decides (input limits, the hash's sub-codes).
enum HostJSON {
    /// A raw input, at the start of a call. A `JSONValue` is written whole,
    /// iteratively, so the core measures its real text (every limit, in its
    /// own order, as Node's `JSON.stringify`). Any other `Encodable` runs its
    /// own recursive `encode(to:)`: it is walked first by a probe that stops
    /// past the core's input depth.
    static func input(_ value: Any) -> FfiHostInput {
        measure(value, textDepth: nil, probeDepth: CoreDepth.input)
    }

    /// A value the core will read as JSON (the validated input it asks for,
    /// a hash, a policy's view, an output): walked at most to the hash's depth.
    static func export(_ value: Any) -> FfiHostInput {
        measure(value, textDepth: CoreDepth.hash, probeDepth: CoreDepth.hash)
    }

    static func measure(_ value: Any, textDepth: Int?, probeDepth: Int) -> FfiHostInput {
        if let j = value as? JSONValue {
            var w = JSONWriter(maxDepth: textDepth)
            w.write(j)
            if let (depth, path) = w.deeper { return .deeper(depth: UInt32(clamping: depth), path: path) }
            return .json(text: w.out, nonFiniteAt: w.nonFiniteAt)
        }
        guard let e = value as? Encodable else { return .opaque }
        // A raw input is only measured: most stream in one walk.
        if textDepth == nil, let text = JSONStream.text(of: e, maxDepth: probeDepth) {
            return .json(text: text, nonFiniteAt: nil)
        }
        return exact(e, textDepth: textDepth, probeDepth: probeDepth)
    }

    /// The probe, then `JSONEncoder`: what `measure` reports for any
    /// `Encodable` (the reference `JSONStream` is checked against).
    static func exact(_ e: Encodable, textDepth: Int?, probeDepth: Int) -> FfiHostInput {
        let probe = Probe(maxDepth: probeDepth)
        do {
            try probe.walk(e, depth: 0, path: [])
        } catch is Probe.Stop {
        } catch {
            return .opaque  // its own encode(to:) threw
        }
        if let (depth, path) = probe.deeper { return .deeper(depth: UInt32(clamping: depth), path: path) }
        let encoder = JSONEncoder()
        if probe.nonFiniteAt != nil {
            // Measurable text (JSONEncoder refuses NaN); the core refuses the value.
            encoder.nonConformingFloatEncodingStrategy = .convertToString(
                positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        }
        guard let data = try? encoder.encode(AnyEncodable(e)) else { return .opaque }
        return .json(text: String(decoding: data, as: UTF8.self), nonFiniteAt: probe.nonFiniteAt)
    }

    /// A JSON Pointer (RFC 6901), the root as `/` (the core's rendering).
    static func pointer(_ path: [CodingKey]) -> String {
        pointer(path.map { $0.intValue.map(String.init) ?? $0.stringValue })
    }

    static func pointer(_ tokens: [String]) -> String {
        if tokens.isEmpty { return "/" }
        return tokens.map {
            "/" + $0.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
        }.joined()
    }

    /// `relative` (a pointer from a value at `base`) as a pointer from the root.
    static func join(_ base: String, _ relative: String) -> String {
        base == "/" ? relative : relative == "/" ? base : base + relative
    }
}

extension JSONValue {
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

/// Compact JSON text of a `JSONValue`, written iteratively (an explicit
/// stack: no recursion, any depth). A NaN or infinity has no JSON form: it
/// is written as `null` and the first one's position kept. With `maxDepth`
/// it stops at a container deeper than that and keeps where. With `text`
/// off it only walks (the probe's view of a `JSONValue` inside a value).
struct JSONWriter {
    var out = ""
    var nonFiniteAt: String?
    var deeper: (depth: Int, path: String)?
    let maxDepth: Int?
    let text: Bool

    init(maxDepth: Int? = nil, text: Bool = true) {
        self.maxDepth = maxDepth
        self.text = text
    }

    private mutating func put(_ s: String) { if text { out += s } }

    /// One open array or object: its items, and the next one to write.
    private struct Level {
        let array: [JSONValue]
        let object: JSONObject?
        var next = 0
    }
    private var levels: [Level] = []

    /// Where the value being written sits.
    private var here: String {
        HostJSON.pointer(
            levels.map { l in
                guard let o = l.object else { return String(l.next - 1) }
                return o.keys[l.next - 1]
            })
    }

    mutating func write(_ root: JSONValue) {
        var pending: JSONValue? = root
        while true {
            if let v = pending {
                pending = nil
                switch v {
                case .array(let a):
                    if let maxDepth, levels.count >= maxDepth {
                        deeper = (levels.count + 1, here)
                        return
                    }
                    put("[")
                    levels.append(Level(array: a, object: nil))
                case .object(let o):
                    if let maxDepth, levels.count >= maxDepth {
                        deeper = (levels.count + 1, here)
                        return
                    }
                    put("{")
                    levels.append(Level(array: [], object: o))
                case .double(let d) where !d.isFinite:
                    if nonFiniteAt == nil { nonFiniteAt = here }
                    put("null")
                default:
                    if text { writeScalar(v) }
                }
            }
            guard let top = levels.indices.last else { return }
            let i = levels[top].next
            if let o = levels[top].object {
                if i < o.count {
                    if i > 0 { put(",") }
                    let k = o.keys[i]
                    if text { JSONWriter.writeString(k, to: &out) }
                    put(":")
                    levels[top].next = i + 1
                    pending = o[k]
                } else {
                    put("}")
                    levels.removeLast()
                }
            } else if i < levels[top].array.count {
                if i > 0 { put(",") }
                levels[top].next = i + 1
                pending = levels[top].array[i]
            } else {
                put("]")
                levels.removeLast()
            }
        }
    }

    private mutating func writeScalar(_ v: JSONValue) {
        switch v {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .uint(let u): out += String(u)
        case .double(let d):
            if d == d.rounded(), abs(d) < 1e15 {
                // Integral doubles keep a fraction so they stay doubles.
                out += String(format: "%.1f", d)
            } else {
                out += "\(d)"
            }
        case .string(let s): JSONWriter.writeString(s, to: &out)
        case .array, .object: break  // containers are written by `write`
        }
    }

    /// A JSON string: the `JSONValue` text's escapes, or with
    /// `asJSONEncoder` `JSONEncoder`'s (`\/`, `\b`, `\f` too: `JSONStream`,
    /// whose length must be `JSONEncoder`'s).
    static func writeString(_ s: String, to out: inout String, asJSONEncoder: Bool = false) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "/" where asJSONEncoder: out += "\\/"
            case "\u{8}" where asJSONEncoder: out += "\\b"
            case "\u{c}" where asJSONEncoder: out += "\\f"
            default:
                if u.value < 0x20 {
                    out += String(format: "\\u%04x", u.value)
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        out += "\""
    }

}
