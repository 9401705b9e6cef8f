import Foundation

/// The compact JSON text of an ordinary `Encodable`, written in the one walk
/// of its `encode(to:)` — the fast path for measuring a raw input
/// (`HostJSON.input`), where `JSONEncoder` (a tree, then text) and the
/// depth probe were a quarter of a typed call.
///
/// The text is `JSONEncoder`'s, byte for byte up to the order of keys: its
/// numbers (`description`, a trailing `.0` dropped; a `Float` as a
/// `Float`), its escapes (`\/`, `\b`, `\f`, `\u001f`), as the core's input
/// limits read the text's length as well as its parse. It only streams what
/// it can write in order: structs, enums, arrays, dictionaries, optionals
/// and scalars, each container filled before its parent goes on. Anything
/// else — a container written to after a sibling or its parent moved on or
/// from another `encode(to:)`, two containers from one encoder, a key
/// written twice to one container (`JSONEncoder` keeps the last), a value
/// that writes nothing, `superEncoder`, `Data`/`URL`/`Decimal`/`Date`
/// (which `JSONEncoder` writes its own way), a `JSONValue`, a NaN or
/// infinity, a container past `maxDepth`, a chain of delegating
/// `encode(to:)` calls, any error thrown in the walk (even one the value's
/// own `encode(to:)` catches) — returns `nil`, and the caller takes the
/// exact path (the probe, then `JSONEncoder`), which reports what it met.
/// So this never decides anything: the text goes to the core, as before.
///
/// Only for measuring: a value the core hashes or stores is still written
/// by `JSONEncoder` (`HostJSON.export`).
final class JSONStream {
    struct Unstreamable: Error {}

    private(set) var out = ""
    let maxDepth: Int
    /// The open containers, innermost last: an id, object or array, how
    /// many entries it has, and an object's keys so far.
    private var open: [(id: Int, object: Bool, count: Int, keys: Set<String>)] = []
    private var lastID = 0
    /// One entry per `walk` in progress: whether its value has been written
    /// (a container opened or a single value encoded), and how many
    /// containers were open when it began (those are not its own).
    private var walks: [(written: Bool, base: Int)] = []
    /// Set at anything that cannot stream, and never cleared: an error an
    /// `encode(to:)` catches still ends the stream.
    private var failed = false
    private var nested = 0

    init(maxDepth: Int) { self.maxDepth = maxDepth }

    /// Types `JSONEncoder` writes its own way, and `JSONValue` (walked
    /// iteratively on the exact path).
    private static let ownWay = [Data.self, URL.self, Decimal.self, Date.self, JSONValue.self].map {
        ObjectIdentifier($0 as Any.Type)
    }

    /// The text of `value`, or `nil` when it must take the exact path.
    static func text(of value: Encodable, maxDepth: Int) -> String? {
        let s = JSONStream(maxDepth: maxDepth)
        do {
            try s.walk(value, depth: 0)
        } catch {
            return nil
        }
        return s.failed ? nil : s.out
    }

    /// Ends the stream: the error to throw.
    func unstreamable() -> Unstreamable {
        failed = true
        return Unstreamable()
    }

    /// Writes `value`, whose enclosing containers are `depth` deep.
    func walk(_ value: Encodable, depth: Int) throws {
        // Value types compared by metatype: cheaper than `is` on an
        // existential, which the walk of every field would pay.
        let type = ObjectIdentifier(Swift.type(of: value))
        if JSONStream.ownWay.contains(where: { $0 == type }) { throw unstreamable() }
        nested += 1
        defer { nested -= 1 }
        if nested > 4 * maxDepth { throw unstreamable() }
        let base = open.count
        walks.append((false, base))
        do {
            try value.encode(to: StreamEncoder(stream: self, depth: depth, level: walks.count - 1))
        } catch {
            failed = true
            throw error
        }
        try check()
        guard walks.removeLast().written else { throw unstreamable() }
        close(downTo: base)
    }

    func check() throws { if failed { throw Unstreamable() } }

    /// The walk at `level` writes its value: only once, and only while it
    /// is the innermost walk.
    func begin(level: Int) -> Bool {
        guard !failed, level == walks.count - 1, !walks[level].written else {
            failed = true
            return false
        }
        walks[level].written = true
        return true
    }

    /// Opens a container `depth` deep; its id.
    func openContainer(object: Bool, depth: Int) -> Int {
        if depth > maxDepth { failed = true }
        lastID += 1
        open.append((lastID, object, 0, []))
        out += object ? "{" : "["
        return lastID
    }

    /// Starts the next entry of container `id` (a comma, and the key of an
    /// object's entry); closes the containers inside it, which are done.
    /// Only a container of the innermost walk, only a key not written yet.
    func entry(_ id: Int, key: String?) throws {
        try check()
        var i = open.count - 1
        while i >= 0, open[i].id != id { i -= 1 }
        guard i >= 0, i >= walks.last?.base ?? 0 else { throw unstreamable() }
        if let key, !open[i].keys.insert(key).inserted { throw unstreamable() }
        close(downTo: i + 1)
        if open[i].count > 0 { out += "," }
        open[i].count += 1
        if let key {
            JSONWriter.writeString(key, to: &out, asJSONEncoder: true)
            out += ":"
        }
    }

    private func close(downTo n: Int) {
        while open.count > n { out += open.removeLast().object ? "}" : "]" }
    }

    func null() { out += "null" }
    func scalar(_ v: Bool) { out += v ? "true" : "false" }
    func scalar(_ s: String) { JSONWriter.writeString(s, to: &out, asJSONEncoder: true) }
    func scalar<T: BinaryInteger>(_ v: T) { out += String(v) }
    func scalar(_ d: Double) throws {
        guard d.isFinite else { throw unstreamable() }
        number(d.description)
    }
    func scalar(_ f: Float) throws {
        guard f.isFinite else { throw unstreamable() }
        number(f.description)
    }

    /// A float as `JSONEncoder` writes it: its description, without a
    /// trailing `.0` (`2.0` is `2`, `-0.0` is `-0`).
    private func number(_ description: String) {
        out += description.hasSuffix(".0") ? description.dropLast(2) : Substring(description)
    }
}

extension JSONStream {
    /// Marks the walk unstreamable from a call that cannot throw; an id no
    /// container has.
    func fail() -> Int {
        failed = true
        return -1
    }

    /// What `superEncoder` returns: the walk is unstreamable.
    func unstreamableEncoder() -> Encoder {
        failed = true
        return StreamEncoder(stream: self, depth: 0, level: -1)
    }
}
