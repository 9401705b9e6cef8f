import Foundation
import XCTest

@testable import OrpcAgent

/// What Swift hands an application from the core is held to the one wire
/// schema (`schema/wire.schema.json`), as Node's values are through ajv and
/// Python's through jsonschema: each public record's fields have the
/// schema's types (a field the schema requires and never sends as null is
/// not optional; one it may send as null or leave out is), and the JSON
/// forms of real approval requests and audit records validate.
final class WireSchemaValueTests: XCTestCase {
    let schema = WireSchemaTests.schema

    /// The Swift type names that hold what `property` allows (not counting
    /// `Optional`), e.g. `["String"]` for `{"type": "string"}`.
    func swiftTypes(_ property: JSONValue) -> Set<String> {
        if let ref = property["$ref"]?.stringValue {
            let name = String(ref.split(separator: "/").last ?? "")
            switch name {
            case "ApprovalStatus": return ["String"]  // read as its string
            case "PolicyRecord": return ["Policy"]
            default: return [name]
            }
        }
        if property["enum"] != nil { return ["String"] }
        if let options = property["anyOf"]?.arrayValue {
            return options.reduce(into: Set<String>()) { $0.formUnion(swiftTypes($1)) }
        }
        let types =
            property["type"]?.arrayValue?.compactMap(\.stringValue) ?? [property["type"]?.stringValue].compactMap { $0 }
        if types.isEmpty { return ["JSONValue"] }  // `{}`: any JSON value
        return types.reduce(into: Set<String>()) { all, t in
            switch t {
            case "string": all.insert("String")
            case "integer": all.formUnion(["Int", "Int64", "UInt64"])
            case "boolean": all.insert("Bool")
            case "object": all.formUnion(["Dictionary<String, JSONValue>", "JSONValue"])
            case "array":
                for item in swiftTypes(property["items"] ?? .null) { all.insert("Array<\(item)>") }
            default: break  // "null": the field is optional
            }
        }
    }

    /// Whether the schema may leave `property` out or send it as null.
    func mayBeAbsent(_ property: JSONValue, named name: String, required: Set<String>) -> Bool {
        if !required.contains(name) { return true }
        if property["type"]?.arrayValue?.contains(.string("null")) == true { return true }
        return property["anyOf"]?.arrayValue?.contains { $0["type"]?.stringValue == "null" } == true
    }

    /// Each field of `value` against the schema's `definition`: its type,
    /// and `Optional` exactly where the schema allows no value (a list or
    /// map the schema may leave out may instead default to empty).
    func checkFields(of value: Any, against definition: String, besides: Set<String> = []) {
        let def = schema["$defs"]?[definition]
        let required = Set(def?["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        let children = Mirror(reflecting: value).children.filter { !besides.contains($0.label ?? "") }
        XCTAssertFalse(children.isEmpty, definition)
        for child in children {
            guard let label = child.label, let property = def?["properties"]?[label] else {
                XCTFail("\(definition).\(child.label ?? "?") is not in the schema")
                continue
            }
            var type = String(describing: Swift.type(of: child.value))
            let optional = type.hasPrefix("Optional<")
            if optional { type = String(type.dropFirst("Optional<".count).dropLast()) }
            XCTAssertTrue(swiftTypes(property).contains(type), "\(definition).\(label): \(type)")
            let absent = mayBeAbsent(property, named: label, required: required)
            if optional {
                XCTAssertTrue(absent, "\(definition).\(label) is optional, the schema requires it")
            } else if absent {
                let defaultsEmpty = type.hasPrefix("Array<") || type.hasPrefix("Dictionary<")
                XCTAssertTrue(defaultsEmpty, "\(definition).\(label) must be optional: the schema may omit it")
            }
        }
    }

    func testEachPublicRecordsFieldsHaveTheSchemasTypes() {
        let actor = Actor(id: "ann", roles: ["clerk"], attributes: ["team": "eu"])
        checkFields(of: actor, against: "Actor")
        checkFields(of: TraceContext(traceparent: "00-x"), against: "TraceContext")
        checkFields(of: Frame(surface: .mcp), against: "Frame", besides: ["context", "onProgress"])
        checkFields(
            of: RedactionInfo(surface: .mcp, capabilityId: "c", actor: actor, context: nil), against: "RedactionInfo",
            besides: ["context"])
        let request = ApprovalRequest(
            id: "apr_0", capabilityId: "c", input: [:], surface: .mcp, actor: actor, type: nil, reason: nil,
            createdAt: 1, expiresAt: 2, status: "pending", decidedBy: nil, decidedAt: nil, decisionReason: nil,
            sessionId: nil, json: [:])
        checkFields(of: request, against: "ApprovalRequest", besides: ["json"])
        checkFields(of: ApprovalPage(requests: [request], nextCursor: nil), against: "ApprovalPage")
        let policy = AuditRecord.Policy(
            scope: "runtime", index: 0, name: nil, mode: "enforce", host: false, decision: "allow", reason: nil,
            approvalType: nil, failed: false)
        checkFields(of: policy, against: "PolicyRecord")
        let record = AuditRecord(
            json: [:], event: "finished", capabilityId: nil, requested: nil, surface: .mcp, actorId: nil,
            resumed: false, policies: [], approvalId: nil, attempts: 0, startedAt: 0, durationMs: 0, outcome: nil,
            stage: 1, trace: nil, requestId: nil, agentId: nil, sessionId: nil, failure: nil)
        // `trace` holds the record's `traceparent` (null when absent) and
        // `tracestate`: optional, as both may be.
        checkFields(of: record, against: "AuditRecord", besides: ["json", "trace"])
        XCTAssertTrue(String(describing: type(of: record.trace)).hasPrefix("Optional<TraceContext>"))
        // `ErrorInfo.retryable` is what the app gave (none: the code's
        // default); the error's `retryable`, always there, is the wire's.
        let late = CapabilityError(.timeout, "late")
        checkFields(of: late.info, against: "CapabilityError", besides: ["retryable"])
        let retryable: Bool = late.retryable
        XCTAssertEqual(late.json["retryable"], .bool(retryable))
    }

    func testTheRecordsARealCallDeliversValidate() async throws {
        let records = Locked<[AuditRecord]>([])
        let reg = try CapabilityRegistry(
            capabilities: [
                Capability(
                    "payments.transfer",
                    meta: AgentMeta(
                        description: "Send money.", expose: [.mcp: true], sideEffect: .external, risk: .high,
                        approval: .init(required: true))
                ) { (x: JSONValue, _) in x }
            ], options: RegistryOptions(audit: { r in records.with { $0.append(r) } }))
        let actor = Actor(id: "ann", roles: ["clerk"], attributes: ["team": "eu"])
        let frame = Frame(surface: .mcp, actor: actor, requestId: "r-1")
        let pending: Outcome<JSONValue> = try await reg.invoke(
            "payments.transfer", input: JSONValue.object(JSONObject([("to", "bob"), ("cents", 500)])), frame: frame)
        let request = try XCTUnwrap(pending.approval)
        try reg.approve(request.id, approver: "boss", reason: "fine")
        let done: Outcome<JSONValue> = try await reg.resume(request.id, frame: frame)
        XCTAssertNotNil(done.value)
        let decided = try XCTUnwrap(try reg.approval(request.id))
        for value in [request.json, decided.json] {
            XCTAssertEqual(validate(value, as: "ApprovalRequest"), [], "\(value)")
        }
        let delivered = records.with { $0 }
        // The gated call's finished record; the resume's started and finished.
        XCTAssertEqual(delivered.map(\.event), ["finished", "started", "finished"])
        for r in delivered { XCTAssertEqual(validate(r.json, as: "AuditRecord"), [], "\(r.json)") }
        // The check refuses what the schema refuses: a field it does not
        // name, a missing one, a wrong type, a value out of range or list.
        var extra = try XCTUnwrap(request.json.objectValue)
        extra["approver"] = "boss"
        var missing = try XCTUnwrap(request.json.objectValue)
        missing["status"] = nil
        var badStage = try XCTUnwrap(delivered.last?.json.objectValue)
        badStage["stage"] = 15
        var badSurface = try XCTUnwrap(delivered.last?.json.objectValue)
        badSurface["surface"] = "email"
        var badType = try XCTUnwrap(delivered.last?.json.objectValue)
        badType["resumed"] = "yes"
        for (value, name) in [(extra, "ApprovalRequest"), (missing, "ApprovalRequest")] {
            XCTAssertNotEqual(validate(.object(value), as: name), [], "\(value)")
        }
        for value in [badStage, badSurface, badType] {
            XCTAssertNotEqual(validate(.object(value), as: "AuditRecord"), [], "\(value)")
        }
    }

    /// The problems `value` has against the schema's definition `name`.
    func validate(_ value: JSONValue, as name: String) -> [String] {
        WireSchemaCheck(root: schema).problems(value, .object(JSONObject([("$ref", .string("#/$defs/\(name)"))])), "$")
    }
}

/// The part of JSON Schema 2020-12 the wire schema uses — `$ref`, `enum`,
/// `anyOf`, `type` (one or a list), `properties` with `required` and
/// `additionalProperties: false`, `items`, `minimum`, `maximum` — so Swift
/// checks values as ajv and jsonschema do, with no validator dependency.
/// A keyword it does not know fails, so a schema that grows is not
/// silently half-checked.
struct WireSchemaCheck {
    let root: JSONValue
    static let known: Set<String> = [
        "$ref", "enum", "anyOf", "type", "properties", "required", "additionalProperties", "items", "minimum",
        "maximum", "description",
    ]

    func problems(_ value: JSONValue, _ schema: JSONValue, _ path: String) -> [String] {
        guard let keywords = schema.objectValue else { return ["\(path): the schema is not an object"] }
        if let unknown = keywords.keys.first(where: { !Self.known.contains($0) }) {
            return ["\(path): keyword \(unknown) is not checked here"]
        }
        if let ref = schema["$ref"]?.stringValue {
            let name = String(ref.split(separator: "/").last ?? "")
            guard let target = root["$defs"]?[name] else { return ["\(path): no definition \(name)"] }
            return problems(value, target, path)
        }
        if let options = schema["enum"]?.arrayValue, !options.contains(value) {
            return ["\(path): \(value) is not one of the schema's values"]
        }
        if let options = schema["anyOf"]?.arrayValue, !options.contains(where: { problems(value, $0, path).isEmpty }) {
            return ["\(path): \(value) matches no option"]
        }
        let types =
            schema["type"]?.arrayValue?.compactMap(\.stringValue) ?? [schema["type"]?.stringValue].compactMap { $0 }
        if !types.isEmpty, !types.contains(where: { Self.isA(value, $0) }) {
            return ["\(path): \(value) is not \(types.joined(separator: " or "))"]
        }
        var found: [String] = []
        if let n = value.doubleValue {
            if let min = schema["minimum"]?.doubleValue, n < min { found.append("\(path): below \(min)") }
            if let max = schema["maximum"]?.doubleValue, n > max { found.append("\(path): above \(max)") }
        }
        if let items = schema["items"], let array = value.arrayValue {
            for (i, item) in array.enumerated() { found += problems(item, items, "\(path)[\(i)]") }
        }
        if let properties = schema["properties"]?.objectValue, let object = value.objectValue {
            for name in schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where object[name] == nil {
                found.append("\(path): \(name) is missing")
            }
            for key in object.keys {
                guard let property = properties[key] else {
                    if schema["additionalProperties"] == .bool(false) {
                        found.append("\(path): \(key) is not in the schema")
                    }
                    continue
                }
                found += problems(object[key] ?? .null, property, "\(path).\(key)")
            }
        }
        return found
    }

    static func isA(_ value: JSONValue, _ type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object):
            return true
        case ("integer", .int), ("integer", .uint), ("number", .int), ("number", .uint), ("number", .double):
            return true
        case ("integer", .double(let d)): return d.rounded() == d
        default: return false
        }
    }
}
