//! `std:` metadata decode, encode and check (`orpc_agent_core::ffi::act`)
//! for src/act.ts. Conversion only: the metadata map's JSON view crosses as
//! JSON text (integers beyond 2^53 marked, as `parseCoreJson` reads them),
//! CBOR as a Buffer.

use napi::bindgen_prelude::Buffer;
use napi_derive::napi;
use orpc_agent_core::ffi::act;

use crate::errors::{parse_json, throw};
use crate::js_json::js_text;

/// The JSON view (as text) of a CBOR metadata map.
#[napi(catch_unwind)]
pub fn std_meta_decode(bytes: Buffer) -> napi::Result<String> {
    act::meta_decode(&bytes)
        .map(|v| js_text(&v))
        .map_err(|e| throw(&e))
}

/// The deterministic CBOR of a metadata map given as JSON-view text.
#[napi(catch_unwind)]
pub fn std_meta_encode(meta: String) -> napi::Result<Buffer> {
    let meta = parse_json(&meta, "the metadata").map_err(|e| throw(&e))?;
    act::meta_encode(&meta)
        .map(Buffer::from)
        .map_err(|e| throw(&e))
}

/// The problems (as JSON text) of a metadata map at a position.
#[napi(catch_unwind)]
pub fn std_meta_check(bytes: Buffer, position: String, strict: bool) -> napi::Result<String> {
    act::meta_check(&bytes, &position, strict)
        .map(|p| serde_json::Value::Array(p).to_string())
        .map_err(|e| throw(&e))
}

/// The `act:component` metadata (as JSON text) of a WebAssembly component.
#[napi(catch_unwind)]
pub fn act_component_inspect(wasm: Buffer) -> napi::Result<String> {
    act::component_inspect(&wasm)
        .map(|v| js_text(&v))
        .map_err(|e| throw(&e))
}

/// The component with the `act:component` section a manifest describes.
#[napi(catch_unwind)]
pub fn act_component_embed(
    manifest: String,
    manifest_name: String,
    wasm: Buffer,
) -> napi::Result<Buffer> {
    act::component_embed(&manifest, &manifest_name, &wasm)
        .map(Buffer::from)
        .map_err(|e| throw(&e))
}

/// An `act.toml` manifest checked: the metadata it describes, as JSON text.
#[napi(catch_unwind)]
pub fn act_manifest_check(manifest: String, manifest_name: String) -> napi::Result<String> {
    act::manifest_check(&manifest, &manifest_name)
        .map(|v| js_text(&v))
        .map_err(|e| throw(&e))
}

/// `std:forward` over a chain of hops (JSON-view text of an array).
#[napi(catch_unwind)]
pub fn std_forward_wrap(hops: String) -> napi::Result<String> {
    let hops = parse_json(&hops, "the hops").map_err(|e| throw(&e))?;
    act::forward_wrap(&hops)
        .map(|v| js_text(&v))
        .map_err(|e| throw(&e))
}

/// One `std:forward` layer unwrapped: `{here, next}` as JSON text.
#[napi(catch_unwind)]
pub fn std_forward_unwrap(meta: String) -> napi::Result<String> {
    let meta = parse_json(&meta, "the metadata").map_err(|e| throw(&e))?;
    act::forward_unwrap(&meta)
        .map(|v| js_text(&v))
        .map_err(|e| throw(&e))
}

/// A capability-class use decided against declarations and grants (each
/// JSON-view text): `{allowed, reason?, message?}` as JSON text.
#[napi(catch_unwind)]
pub fn capability_grant_decide(
    declared: String,
    grants: String,
    request: String,
) -> napi::Result<String> {
    let declared = parse_json(&declared, "the declarations").map_err(|e| throw(&e))?;
    let grants = parse_json(&grants, "the grants").map_err(|e| throw(&e))?;
    let request = parse_json(&request, "the request").map_err(|e| throw(&e))?;
    act::grant_decide(&declared, &grants, &request)
        .map(|v| v.to_string())
        .map_err(|e| throw(&e))
}

/// The tool-definition metadata (JSON-view text) an AgentMeta states.
#[napi(catch_unwind)]
pub fn std_tool_definition_meta(capability_id: String, meta: String) -> napi::Result<String> {
    let meta = parse_json(&meta, "the agent metadata").map_err(|e| throw(&e))?;
    act::tool_definition_meta(&capability_id, &meta)
        .map(|v| js_text(&v))
        .map_err(|e| throw(&e))
}
