import Foundation
import OrpcAgentFFI

/// `std:` metadata maps (spec/004): decode CBOR to a JSON view, encode the
/// view to deterministic CBOR, check a map against a metadata position —
/// the core's functions (`orpc_agent_core::ffi::act`), the same in every
/// binding and in `orpc-agent meta`. Conversion only.
///
/// The JSON view: plain values map one to one; what JSON cannot say gets a
/// one-key wrapper — `{"$bytes": hex}`, `{"$tag": n, "value": …}`,
/// `{"$float": "NaN"}`, `{"$int": "<decimal>"}`, `{"$map": [[k, v], …]}` —
/// so a decoded map encodes back to the same bytes. Bad input throws
/// `CapabilityError` `.invalidInput` whose `details["reason"]` is the
/// decoder's code (`NOT_A_MAP`, `TRUNCATED`, …; `UNKNOWN_POSITION`).
public enum StdMeta {
    /// The JSON view of a CBOR metadata map.
    public static func decode(_ cbor: Data) throws -> JSONValue {
        let text = try ffi { try stdMetaDecode(cbor: cbor) }
        return try CoreJSON.parse("metadata map", text)
    }

    /// The deterministic CBOR of a metadata map in the JSON view.
    public static func encode(_ meta: JSONValue) throws -> Data {
        try ffi { try stdMetaEncode(metaJson: meta.checkedJSONText()) }
    }

    /// The problems of a metadata map at `position` (`tool-definition`,
    /// `tool-call`, …); none means valid there. `strict`: unknown `std:`
    /// keys are errors.
    public static func check(_ cbor: Data, position: String, strict: Bool = false) throws -> [StdMetaProblem] {
        let text = try ffi { try stdMetaCheck(cbor: cbor, position: position, strict: strict) }
        return try CoreJSON.array("metadata problems", text).map { try StdMetaProblem(core: $0) }
    }
}

extension StdMeta {
    /// `std:forward` for a chain of hops: `hops[0]` as the first component
    /// sees it, `hops[1]` under its `std:forward`, and so on.
    public static func wrapForward(_ hops: [JSONValue]) throws -> JSONValue {
        let text = try ffi { try stdForwardWrap(hopsJson: JSONValue.array(hops).checkedJSONText()) }
        return try CoreJSON.parse("metadata map", text)
    }

    /// One `std:forward` layer unwrapped: this hop's metadata, and the next
    /// hop's (`nil` when there is none).
    public static func unwrapForward(_ meta: JSONValue) throws -> (here: JSONValue, next: JSONValue?) {
        let text = try ffi { try stdForwardUnwrap(metaJson: meta.checkedJSONText()) }
        let o = try CoreObject("std:forward layer", text: text)
        return (try o.value("here"), o.optional("next"))
    }
}

extension StdMeta {
    /// The tool-definition metadata map (spec/004) a capability's agent
    /// metadata states, in the JSON view: `std:read-only` and
    /// `std:destructive` from `sideEffect`, `std:idempotent`,
    /// `std:timeout-ms`, `std:tags`, the description as `std:usage-hints`.
    /// `meta` is the metadata's JSON form (as a declaration file writes
    /// it); metadata the registry would refuse is `.invalidInput` with
    /// `details["reason"]` `INVALID_AGENT_META` and `details["problems"]`.
    public static func toolDefinition(capabilityId: String, meta: JSONValue) throws -> JSONValue {
        let text = try ffi { try stdToolDefinitionMeta(capabilityId: capabilityId, metaJson: meta.checkedJSONText()) }
        return try CoreJSON.parse("metadata map", text)
    }
}

/// Capability classes (spec/004 `std.capabilities`): what a component
/// declares, what the host grants, decided by the core.
public enum CapabilityGrants {
    /// One use of a capability class decided against what a component
    /// declares (`declared`: the `std.capabilities` map, `{"wasi:http":
    /// {"allow": [{"host": "*.example.com"}]}}`) and what the host granted
    /// (`grants`: `{"wasi:http": {}}` as declared, or `{"allow": [...]}`
    /// narrower; no grant widens a declaration). `request`: `{"id",
    /// "params"}`. A malformed declaration, grant or request throws
    /// `.invalidInput` (`details["reason"]`: `WILDCARD_CLASS`,
    /// `BAD_CAPABILITY_ID`, `BAD_PARAMETER`, `BAD_REQUEST`, …), never an
    /// allow.
    public static func decide(declared: JSONValue, grants: JSONValue, request: JSONValue) throws
        -> CapabilityGrantDecision
    {
        let text = try ffi {
            try capabilityGrantDecide(
                declaredJson: declared.checkedJSONText(), grantsJson: grants.checkedJSONText(),
                requestJson: request.checkedJSONText())
        }
        let o = try CoreObject("capability grant decision", text: text)
        guard case .bool(let allowed)? = o.optional("allowed") else {
            throw CoreJSON.malformed("capability grant decision", field: "allowed", expected: "a boolean")
        }
        if allowed { return .allowed }
        return .denied(reason: try o.string("reason"), message: try o.string("message"))
    }
}

/// What `CapabilityGrants.decide` answers.
public enum CapabilityGrantDecision: Sendable, Equatable {
    case allowed
    /// `reason`: `UNDECLARED`, `NOT_GRANTED`, `OUTSIDE_DECLARATION` or
    /// `OUTSIDE_GRANT`.
    case denied(reason: String, message: String)
}

/// The `act:component` section of a WebAssembly component (spec/004), read
/// and written by the core.
public enum ActComponent {
    /// The section's metadata, readable: `{name, version, description,
    /// defaultLanguage, capabilities: [{id, description, allow, mountRoot,
    /// mounts}], metadata}`. No section is `.invalidInput` (`NO_SECTION`).
    public static func inspect(_ wasm: Data) throws -> JSONValue {
        try CoreJSON.parse("component", try ffi { try actComponentInspect(wasm: wasm) })
    }

    /// `wasm` with the section the `act.toml` manifest text describes.
    public static func embed(manifest: String, into wasm: Data, manifestName: String = "act.toml") throws -> Data {
        try ffi { try actComponentEmbed(manifest: manifest, manifestName: manifestName, wasm: wasm) }
    }

    /// A manifest checked: the metadata it describes (`inspect`'s form).
    public static func checkManifest(_ manifest: String, manifestName: String = "act.toml") throws -> JSONValue {
        try CoreJSON.parse(
            "component", try ffi { try actManifestCheck(manifest: manifest, manifestName: manifestName) })
    }
}

/// One problem `StdMeta.check` found.
public struct StdMetaProblem: Sendable, Equatable {
    /// The key it is about (`""` for the map as a whole).
    public let key: String
    /// A stable code, e.g. `WRONG_TYPE`, `UNKNOWN_STD_KEY`.
    public let code: String
    /// `error` or `warning`.
    public let severity: String
    public let message: String

    init(core json: JSONValue) throws {
        let o = try CoreObject("metadata problem", json)
        key = try o.string("key")
        code = try o.string("code")
        severity = try o.string("severity")
        message = try o.string("message")
    }
}

extension JSONValue {
    /// Compact JSON text as the core reads it, or the core's refusal
    /// (INVALID_INPUT `NON_FINITE_NUMBER`, naming where) of a value that
    /// holds a NaN or infinity: what crosses as JSON that is not an input
    /// (`std:` metadata, declarations) is never read as `null`.
    func checkedJSONText() throws -> String {
        var w = JSONWriter()
        w.write(self)
        if let at = w.nonFiniteAt { try ffi { try hostJsonCheck(input: .json(text: w.out, nonFiniteAt: at)) } }
        return w.out
    }
}
