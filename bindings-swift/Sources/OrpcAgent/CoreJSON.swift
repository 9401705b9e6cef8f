import Foundation

/// Reading JSON the core wrote — build problems, metadata problems,
/// grant decisions, `std:forward` layers — strictly. (Frames, redaction
/// info, approval requests and audit records arrive as typed records:
/// CoreRecords.swift.) A field the core always sends that is missing or has the
/// wrong type is an error, never a default: a surface read as `direct`, an
/// empty capability id or an anonymous actor would be a governance
/// decision made here. Fields the core may omit are `nil` when absent or
/// `null`, an error when of another type.
///
/// The error is `CapabilityError.internal` with `details` `{decoding:
/// what, field}`; its message names the field, never a value.
enum CoreJSON {
    static func malformed(_ what: String, field: String?, expected: String) -> CapabilityError {
        var details = JSONObject()
        details["decoding"] = .string(what)
        if let field { details["field"] = .string(field) }
        let subject = field.map { "`\($0)` is missing or not \(expected)" } ?? "it is not \(expected)"
        return CapabilityError(
            .internal, "The agent runtime sent a malformed \(what): \(subject).", details: .object(details))
    }

    /// `text` parsed, or the typed error for `what`.
    static func parse(_ what: String, _ text: String) throws -> JSONValue {
        do { return try JSONValue(parsing: text) } catch { throw malformed(what, field: nil, expected: "valid JSON") }
    }

    /// A JSON array the core sent as `what`.
    static func array(_ what: String, _ text: String) throws -> [JSONValue] {
        guard let list = try parse(what, text).arrayValue else { throw malformed(what, field: nil, expected: "a list") }
        return list
    }
}

/// One JSON object the core sent, read field by field (`CoreJSON`).
struct CoreObject {
    /// What it is, for the error ("approval request").
    let what: String
    let fields: JSONObject

    init(_ what: String, _ value: JSONValue) throws {
        guard let o = value.objectValue else { throw CoreJSON.malformed(what, field: nil, expected: "an object") }
        self.what = what
        fields = o
    }

    init(_ what: String, text: String) throws {
        try self.init(what, try CoreJSON.parse(what, text))
    }

    func fail(_ key: String, _ expected: String) -> CapabilityError {
        CoreJSON.malformed(what, field: key, expected: expected)
    }

    /// A field the core always sends, of any JSON type (`null` included).
    func value(_ key: String) throws -> JSONValue {
        guard let v = fields[key] else { throw fail(key, "present") }
        return v
    }

    /// A field the core may omit: `nil` when absent or `null`.
    func optional(_ key: String) -> JSONValue? {
        guard let v = fields[key], !v.isNull else { return nil }
        return v
    }

    func string(_ key: String) throws -> String {
        guard let s = fields[key]?.stringValue else { throw fail(key, "a string") }
        return s
    }

    func optionalString(_ key: String) throws -> String? {
        guard let v = optional(key) else { return nil }
        guard let s = v.stringValue else { throw fail(key, "a string") }
        return s
    }
}
