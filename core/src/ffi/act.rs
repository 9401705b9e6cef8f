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
//! A map that is not acceptable CBOR, or a JSON view that is not a
//! metadata map, is INVALID_INPUT with `details: {"reason": <code>}` (the
//! decoder's code, e.g. `NOT_A_MAP`, `TRUNCATED`; `NOT_METADATA` for a
//! JSON view that is not a text-keyed map); a component or manifest the
//! same with the component code (`NO_SECTION`, `MANIFEST_TOML`,
//! `INVALID_METADATA` with `details.problems`, …).

use serde_json::{Value, json};

use crate::act::component::{ComponentError, ComponentMeta};
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
