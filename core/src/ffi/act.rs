//! The `std:` metadata operations a host reaches through a binding (issue
//! 16): decode, encode and check a CBOR metadata map per position, in the
//! JSON view of [`crate::act::json_view`] (byte strings, tags and other
//! values JSON cannot say get one-key wrappers, so a decoded map encodes
//! back to the same bytes). The `orpc-agent meta` commands use the same
//! functions.
//!
//! Also the `act:component` section of a WebAssembly component (read it,
//! embed it from an `act.toml` manifest, check a manifest) and
//! `std:forward` (wrap a chain of hops' metadata, unwrap one layer).
//!
//! And two decisions a host of components makes: a use of a capability
//! class against the component's declarations and the operator's grants
//! ([`grant_decide`]), and the tool-definition metadata a capability's
//! `AgentMeta` states ([`tool_definition_meta`]).
//!
//! A map that is not acceptable CBOR, or a JSON view that is not a
//! metadata map, is INVALID_INPUT with `details: {"reason": <code>}` (the
//! decoder's code, e.g. `NOT_A_MAP`, `TRUNCATED`; `NOT_METADATA` for a
//! JSON view that is not a text-keyed map); a component or manifest the
//! same with the component code (`NO_SECTION`, `MANIFEST_TOML`,
//! `INVALID_METADATA` with `details.problems`, …).

use serde_json::{Value, json};

use crate::act::capabilities::{self, Decision, Declarations, Grant};
use crate::act::component::{ComponentError, ComponentMeta};
use crate::act::tool_meta::ToolHints;
use crate::act::{MetaMap, Position, Problem, Severity, ValidateOptions, forward, json_view};
use crate::error::{CapabilityError, ErrorCode};

fn invalid(reason: &str, message: String) -> CapabilityError {
    CapabilityError::new(ErrorCode::InvalidInput, message).with_details(json!({"reason": reason}))
}

fn problem_json(p: &Problem) -> Value {
    json!({
        "key": p.key,
        "code": p.code.as_str(),
        "severity": if p.severity == Severity::Error { "error" } else { "warning" },
        "message": p.message,
    })
}

fn component_error(e: ComponentError) -> CapabilityError {
    let message = format!("act:component: {e}");
    match &e {
        ComponentError::Invalid(problems) => CapabilityError::new(ErrorCode::InvalidInput, message)
            .with_details(json!({
                "reason": e.code(),
                "problems": problems.iter().map(problem_json).collect::<Vec<_>>(),
            })),
        _ => invalid(e.code(), message),
    }
}

fn map_of(view: &Value) -> Result<MetaMap, CapabilityError> {
    let value = json_view::from_json(view)
        .map_err(|e| invalid("NOT_METADATA", format!("std: metadata: {e}")))?;
    MetaMap::from_value(&value).map_err(|e| invalid(e.code(), format!("std: metadata: {e}")))
}

fn view_of(map: &MetaMap) -> Value {
    json_view::to_json(&map.to_value())
}

fn decode_map(bytes: &[u8]) -> Result<MetaMap, CapabilityError> {
    MetaMap::decode(bytes).map_err(|e| invalid(e.code(), format!("std: metadata: {e}")))
}

/// The JSON view of a CBOR metadata map (a definite-length map with text
/// keys, no duplicates, nesting within the decoder's depth limit).
pub fn meta_decode(bytes: &[u8]) -> Result<Value, CapabilityError> {
    Ok(view_of(&decode_map(bytes)?))
}

/// The deterministic CBOR of a metadata map given in the JSON view.
pub fn meta_encode(meta: &Value) -> Result<Vec<u8>, CapabilityError> {
    map_of(meta)?
        .encode()
        .map_err(|e| invalid("NOT_ENCODABLE", format!("std: metadata: {e}")))
}

/// The problems of a metadata map at `position` (`tool-definition`,
/// `tool-call`, …, as [`Position::parse`] reads it), each
/// `{key, code, severity: "error" | "warning", message}`. An empty list:
/// the map is valid there. With `strict`, unknown `std:` keys are errors.
pub fn meta_check(
    bytes: &[u8],
    position: &str,
    strict: bool,
) -> Result<Vec<Value>, CapabilityError> {
    let at = Position::parse(position).ok_or_else(|| {
        let known: Vec<&str> = Position::ALL.iter().map(|p| p.as_str()).collect();
        invalid(
            "UNKNOWN_POSITION",
            format!(
                "unknown metadata position `{position}` (known: {})",
                known.join(", ")
            ),
        )
    })?;
    let map = decode_map(bytes)?;
    Ok(map
        .validate(at, ValidateOptions { strict })
        .iter()
        .map(problem_json)
        .collect())
}

/// The readable form of a component's `act:component` metadata: `{name,
/// version, description, defaultLanguage, capabilities: [{id, description,
/// allow, mountRoot, mounts}], metadata}` (localized texts and values in
/// the JSON view). What `orpc-agent component inspect` prints.
pub fn component_json(c: &ComponentMeta) -> Value {
    let text =
        |l: &Option<crate::act::Localized>| l.as_ref().map(|l| json_view::to_json(&l.to_cbor()));
    // In id order, as the section's deterministic CBOR holds them, so a
    // manifest and the component it was embedded in read the same.
    let mut classes: Vec<_> = c.capabilities.classes.iter().collect();
    classes.sort_by(|a, b| a.id.cmp(&b.id));
    let caps: Vec<Value> = classes
        .into_iter()
        .map(|d| {
            json!({
                "id": d.id,
                "description": text(&d.description),
                "allow": d.allow.iter().map(|c| {
                    c.iter().map(|(k, v)| (k.clone(), json_view::to_json(v))).collect::<serde_json::Map<_, _>>()
                }).collect::<Vec<_>>(),
                "mountRoot": d.mount_root,
                "mounts": d.mounts,
            })
        })
        .collect();
    json!({
        "name": c.name,
        "version": c.version.to_string(),
        "description": text(&c.description),
        "defaultLanguage": c.default_language,
        "capabilities": caps,
        "metadata": json_view::to_json(&c.map.to_value()),
    })
}

/// The `act:component` metadata of a WebAssembly component, read
/// ([`component_json`]'s form).
pub fn component_inspect(wasm: &[u8]) -> Result<Value, CapabilityError> {
    ComponentMeta::from_wasm(wasm)
        .map(|c| component_json(&c))
        .map_err(component_error)
}

/// The component with the `act:component` section an `act.toml` manifest
/// describes (replacing any section it had). `manifest_name` names the
/// manifest in errors.
pub fn component_embed(
    manifest: &str,
    manifest_name: &str,
    wasm: &[u8],
) -> Result<Vec<u8>, CapabilityError> {
    ComponentMeta::from_manifest(manifest, manifest_name)
        .and_then(|c| c.embed(wasm))
        .map_err(component_error)
}

/// An `act.toml` manifest, checked: the metadata it describes
/// ([`component_json`]'s form), or INVALID_INPUT naming every problem.
pub fn manifest_check(manifest: &str, manifest_name: &str) -> Result<Value, CapabilityError> {
    ComponentMeta::from_manifest(manifest, manifest_name)
        .map(|c| component_json(&c))
        .map_err(component_error)
}

/// `std:forward` for a chain of hops (a JSON array of metadata maps in the
/// JSON view): `hops[0]` as the first component sees it, `hops[1]` under
/// its `std:forward`, and so on. Anything but an array is INVALID_INPUT
/// (`NOT_A_LIST`), never an empty chain.
pub fn forward_wrap(hops: &Value) -> Result<Value, CapabilityError> {
    let Some(hops) = hops.as_array() else {
        return Err(invalid(
            "NOT_A_LIST",
            "std:forward: the hops must be a list of metadata maps".into(),
        ));
    };
    let maps = hops.iter().map(map_of).collect::<Result<Vec<_>, _>>()?;
    Ok(view_of(&forward::wrap_chain(&maps)))
}

/// One `std:forward` layer unwrapped: `{here, next}` — this hop's metadata
/// without `std:forward`, and the next hop's (null when there is none).
pub fn forward_unwrap(meta: &Value) -> Result<Value, CapabilityError> {
    let (here, next) = forward::unwrap(&map_of(meta)?)
        .map_err(|e| invalid(e.code(), format!("std:forward: {e}")))?;
    Ok(json!({"here": view_of(&here), "next": next.as_ref().map(view_of)}))
}

fn cbor_of(view: &Value, what: &str) -> Result<ciborium::Value, CapabilityError> {
    json_view::from_json(view).map_err(|e| invalid("NOT_METADATA", format!("{what}: {e}")))
}

fn declaration_error(what: &str, e: capabilities::DeclarationError) -> CapabilityError {
    invalid(e.code(), format!("{what}: {e}"))
}

/// One use of a capability class (spec/004 `std.capabilities`) decided
/// against what the component declares and what the host granted, in the
/// JSON view:
/// - `declared`: `{"<namespace:name>": {allow?, description?, mount-root?, mounts?}}`
///   (the `std.capabilities` table of an `act.toml`);
/// - `grants`: `{"<namespace:name>": {allow?}}` (`{}` grants the class as
///   declared; a list narrows it, an empty one admits nothing);
/// - `request`: `{"id": "<namespace:name>", "params": {…}}`.
///
/// The answer is `{"allowed": true}` or `{"allowed": false, "reason":
/// UNDECLARED | NOT_GRANTED | OUTSIDE_DECLARATION | OUTSIDE_GRANT,
/// "message"}`. A declaration, grant or request that is not one is
/// INVALID_INPUT with the declaration code (`BAD_CAPABILITY_ID`,
/// `WILDCARD_CLASS`, `BAD_PARAMETER`, …; `BAD_REQUEST` for the request):
/// nothing malformed is ever allowed.
pub fn grant_decide(
    declared: &Value,
    grants: &Value,
    request: &Value,
) -> Result<Value, CapabilityError> {
    let declared = Declarations::from_cbor(&cbor_of(declared, "std.capabilities")?)
        .map_err(|e| declaration_error("std.capabilities", e))?;
    let grants = Grant::list_from_cbor(&cbor_of(grants, "grants")?)
        .map_err(|e| declaration_error("grants", e))?;
    let bad_request = |why: &str| invalid("BAD_REQUEST", format!("capability request: {why}"));
    let Some(request) = request.as_object() else {
        return Err(bad_request("expected {\"id\", \"params\"}"));
    };
    if let Some(extra) = request.keys().find(|k| *k != "id" && *k != "params") {
        return Err(bad_request(&format!("unknown field {extra:?}")));
    }
    let Some(id) = request.get("id").and_then(Value::as_str) else {
        return Err(bad_request("`id` must be the class id, a string"));
    };
    let params = match request.get("params") {
        None => Vec::new(),
        Some(p) => match cbor_of(p, "capability request params")? {
            ciborium::Value::Map(entries) => entries
                .into_iter()
                .map(|(k, v)| match k {
                    ciborium::Value::Text(k) => Ok((k, v)),
                    _ => Err(bad_request("parameter names are text")),
                })
                .collect::<Result<_, _>>()?,
            _ => return Err(bad_request("`params` must be a map")),
        },
    };
    let request = capabilities::Request {
        id: id.to_owned(),
        params,
    };
    Ok(match capabilities::decide(&declared, &grants, &request) {
        Decision::Allowed => json!({"allowed": true}),
        Decision::Denied { reason, message } => {
            json!({"allowed": false, "reason": reason.code(), "message": message})
        }
    })
}

/// The tool-definition metadata map (spec/004, DESIGN §8) that a
/// capability's `AgentMeta` (its JSON form, as a declaration file or
/// `.meta({agent})` writes it) states, in the JSON view: `std:read-only`
/// and `std:destructive` from `sideEffect`, `std:idempotent`,
/// `std:timeout-ms`, `std:tags` when declared, and the description as
/// `std:usage-hints`. Metadata the core would refuse at build is
/// INVALID_INPUT `{reason: "INVALID_AGENT_META", problems: [{capability,
/// path, code, message}]}`.
pub fn tool_definition_meta(capability_id: &str, meta: &Value) -> Result<Value, CapabilityError> {
    let meta = crate::meta::parse::parse_agent_meta(capability_id, meta).map_err(|problems| {
        CapabilityError::new(
            ErrorCode::InvalidInput,
            format!("{capability_id}: the agent metadata has problems"),
        )
        .with_details(json!({
            "reason": "INVALID_AGENT_META",
            "problems": problems.iter().map(crate::meta::Problem::to_json).collect::<Vec<_>>(),
        }))
    })?;
    Ok(view_of(&ToolHints::from_agent_meta(&meta).to_meta_map()))
}

/// The CBOR head of an array of `n` items (RFC 8949 §3.1, shortest form).
fn array_head(n: usize, out: &mut Vec<u8>) {
    let n = n as u64;
    match n {
        0..=23 => out.push(0x80 | n as u8),
        24..=0xff => out.extend_from_slice(&[0x98, n as u8]),
        0x100..=0xffff => {
            out.push(0x99);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        0x1_0000..=0xffff_ffff => {
            out.push(0x9a);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        }
        _ => {
            out.push(0x9b);
            out.extend_from_slice(&n.to_be_bytes());
        }
    }
}

/// The descriptors of the capabilities exposed on `surface` as one CBOR
/// array, each item [`crate::act::tool_meta::descriptor_to_cbor`]'s (the
/// descriptor's JSON fields plus a `metadata` map of its `std:`
/// tool-definition keys): how a host describes its tools to a component
/// host or over the gateway's CBOR listing. An unknown surface is
/// INVALID_INPUT.
pub fn descriptors_cbor(
    registry: &crate::registry::CapabilityRegistry,
    surface: &str,
) -> Result<Vec<u8>, CapabilityError> {
    let s = crate::meta::Surface::parse(surface).ok_or_else(|| {
        invalid(
            "UNKNOWN_SURFACE",
            format!(
                "unknown surface `{surface}`; expected one of direct, aiSdk, mcp, workflow, test"
            ),
        )
    })?;
    let list = registry.descriptors(s);
    let mut out = Vec::new();
    array_head(list.len(), &mut out);
    for d in &list {
        let bytes = crate::act::tool_meta::descriptor_to_cbor(d).map_err(|e| {
            CapabilityError::new(ErrorCode::Internal, format!("descriptor CBOR: {e}"))
        })?;
        out.extend_from_slice(&bytes);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_round_trips_through_the_json_view() {
        let meta =
            json!({"std:read-only": true, "std:timeout-ms": 5000, "acme:blob": {"$bytes": "0102"}});
        let bytes = meta_encode(&meta).unwrap();
        assert_eq!(meta_decode(&bytes).unwrap(), meta);
        assert_eq!(
            meta_check(&bytes, "tool-definition", false).unwrap(),
            Vec::<Value>::new()
        );
    }

    #[test]
    fn forward_wraps_a_chain_and_unwraps_one_layer() {
        let hops = [
            json!({"std:request-id": "a"}),
            json!({"std:request-id": "b"}),
        ];
        let chain = forward_wrap(&json!(hops)).unwrap();
        let e = forward_wrap(&json!({"std:request-id": "a"})).unwrap_err();
        assert_eq!(e.details, Some(json!({"reason": "NOT_A_LIST"})));
        assert_eq!(chain["std:forward"], hops[1]);
        let one = forward_unwrap(&chain).unwrap();
        assert_eq!(one, json!({"here": hops[0], "next": hops[1]}));
        assert_eq!(forward_unwrap(&hops[1]).unwrap()["next"], Value::Null);
        let e = forward_unwrap(&json!({"std:forward": 3})).unwrap_err();
        assert_eq!(e.details, Some(json!({"reason": "NOT_A_MAP"})));
    }

    #[test]
    fn a_component_without_a_section_or_a_bad_manifest_is_typed() {
        let e = component_inspect(b"\0asm\x0d\0\x01\0").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput);
        let e = manifest_check("not toml [", "act.toml").unwrap_err();
        assert_eq!(e.details.as_ref().unwrap()["reason"], "MANIFEST_TOML");
    }

    #[test]
    fn descriptors_as_one_cbor_array_that_decodes_back() {
        use crate::registry::{CapabilityDecl, CapabilityRegistry};
        let meta = |d: &str| json!({"description": d, "expose": {"mcp": true}, "sideEffect": "read", "risk": "low"});
        let registry = CapabilityRegistry::build_with_json_options(
            vec![
                CapabilityDecl::new("a.one", meta("one")),
                CapabilityDecl::new("a.two", meta("two")),
            ],
            &json!({}),
        )
        .unwrap();
        let bytes = descriptors_cbor(&registry, "mcp").unwrap();
        let items: Vec<ciborium::Value> = ciborium::from_reader(bytes.as_slice()).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(descriptors_cbor(&registry, "direct").unwrap(), vec![0x80]);
        let e = descriptors_cbor(&registry, "constructor").unwrap_err();
        assert_eq!(e.details, Some(json!({"reason": "UNKNOWN_SURFACE"})));
        let mut head = Vec::new();
        array_head(300, &mut head);
        assert_eq!(head, vec![0x99, 0x01, 0x2c]);
    }

    #[test]
    fn bad_input_names_its_reason() {
        let e = meta_decode(&[0x83, 1, 2, 3]).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput);
        assert_eq!(e.details, Some(json!({"reason": "NOT_A_MAP"})));
        let e = meta_encode(&json!([1])).unwrap_err();
        assert_eq!(e.details, Some(json!({"reason": "NOT_A_MAP"})));
        let e = meta_check(&[0xa0], "nowhere", false).unwrap_err();
        assert_eq!(e.details, Some(json!({"reason": "UNKNOWN_POSITION"})));
        assert!(e.message.contains("tool-definition"), "{}", e.message);
    }
}
