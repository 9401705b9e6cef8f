//! Errors across the boundary. A `CapabilityError` travels as its JSON
//! (`{code, message, retryable, kind, details?}`) in the message of a thrown
//! JS error whose `code` is `ORPC_AGENT_ERROR`; the façade turns it into a
//! `CapabilityError` (or a `RegistryValidationError` for build problems).

use napi_derive::napi;
use orpc_agent_core::{CapabilityError, ErrorCode};
use serde_json::{Value, json};

/// The `code` of every JS error this module throws on purpose.
pub const THROWN: &str = "ORPC_AGENT_ERROR";

pub fn throw_json(v: &Value) -> napi::Error {
    napi::Error::new(napi::Status::GenericFailure, v.to_string())
}

pub fn throw(e: &CapabilityError) -> napi::Error {
    throw_json(&json!({"error": e.to_json()}))
}

pub fn internal(message: &str) -> CapabilityError {
    CapabilityError::new(ErrorCode::Internal, message)
}

pub fn invalid(message: impl Into<String>) -> CapabilityError {
    CapabilityError::new(ErrorCode::InvalidInput, message)
}

/// Parses JSON the façade produced; a failure is the caller's bad value.
pub fn parse_json(text: &str, what: &str) -> Result<Value, CapabilityError> {
    serde_json::from_str(text).map_err(|e| invalid(format!("{what} is not valid JSON: {e}")))
}

/// Every error code of the core, in its stable order (drift tests).
#[napi(catch_unwind)]
pub fn all_error_codes() -> Vec<String> {
    orpc_agent_core::all_error_codes()
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// `{code: {kind, retryable}}` for every code: what a `CapabilityError`
/// built in JavaScript reports as its `kind` and default `retryable`.
#[napi(catch_unwind)]
pub fn error_code_table() -> String {
    let mut m = serde_json::Map::new();
    for code in ErrorCode::ALL {
        let e = CapabilityError::new(code, "");
        m.insert(
            code.as_str().to_owned(),
            json!({"kind": e.kind().as_str(), "retryable": e.retryable}),
        );
    }
    Value::Object(m).to_string()
}

/// The core's step kinds by number: `stepKinds()[i]` names kind `i + 1`
/// (drift test of the façade's `Kind` mirror).
#[napi(catch_unwind)]
pub fn step_kinds() -> Vec<String> {
    orpc_agent_core::ffi::step_kind_names()
}

/// JSON text of at most this many characters cannot exceed an input limit
/// (`limits::SHORT_TEXT_CHARS`): the façade does not send such a raw
/// input's text to be measured.
#[napi(catch_unwind)]
pub fn short_input_text_chars() -> u32 {
    u32::try_from(orpc_agent_core::limits::SHORT_TEXT_CHARS).unwrap_or(0)
}

/// The surfaces in their stable index order (the façade passes a frame's
/// surface as this index).
#[napi(catch_unwind)]
pub fn surfaces() -> Vec<String> {
    orpc_agent_core::Surface::ALL
        .iter()
        .map(|s| s.as_str().to_owned())
        .collect()
}

/// The approval input hash of DESIGN §5 for `capability_id` and the input
/// given as JSON text: lowercase hex SHA-256 of the deterministic CBOR of
/// `{"capability", "input"}`. Errors are INVALID_INPUT with the hash
/// sub-code in `details.reason`.
#[napi(catch_unwind)]
pub fn input_hash(capability_id: String, input_json: String) -> napi::Result<String> {
    let input = parse_json(&input_json, "the input").map_err(|e| throw(&e))?;
    orpc_agent_core::act::input_hash(&capability_id, &input)
        .map_err(|e| throw(&CapabilityError::from(e)))
}

/// The message of a JavaScript value's refusal by `json.ts` (the input at
/// the JSON pointer `path` met sub-code `reason`; `kind` names a value JSON
/// cannot hold): the core's wording, the same in every binding.
#[napi(catch_unwind)]
pub fn host_value_error_message(reason: String, path: String, kind: String) -> String {
    orpc_agent_core::act::HashError::of_host_value(&reason, &path, &kind).to_string()
}

/// Why an agent gateway cannot serve the surface named `name` (`null`: not
/// a text), or `null` when it can (`orpc_agent_core::gateway`).
#[napi(catch_unwind)]
pub fn gateway_surface_refusal(name: Option<String>) -> Option<String> {
    orpc_agent_core::gateway::surface_refusal(name.as_deref())
}

/// The model's description of a capability presented with the arguments
/// `fixed_json` fixed (`orpc_agent_core::gateway::bound_description`).
#[napi(catch_unwind)]
pub fn gateway_bound_description(description: String, fixed_json: String) -> String {
    orpc_agent_core::gateway::bound_description(&description, &fixed_json)
}

/// `{code, status}`: the oRPC error an HTTP client of the same procedure
/// gets for a `CapabilityError` its handler threw
/// (`orpc_agent_core::orpc_error::orpc_code_of`). An unknown code is
/// INTERNAL_SERVER_ERROR.
#[napi(catch_unwind)]
pub fn orpc_error_of(code: String, retryable: bool) -> String {
    let (c, s) = ErrorCode::parse(&code)
        .map(|c| orpc_agent_core::orpc_error::orpc_code_of(c, retryable))
        .unwrap_or(("INTERNAL_SERVER_ERROR", 500));
    json!({"code": c, "status": s}).to_string()
}

/// The core's table of oRPC codes, for documentation and tests:
/// `[{orpcCode, status, code, retryable, undeclaredMessage}]`.
#[napi(catch_unwind)]
pub fn orpc_error_table() -> String {
    let rows: Vec<Value> = orpc_agent_core::orpc_error::TABLE
        .iter()
        .map(|r| {
            json!({
                "orpcCode": r.orpc_code,
                "status": r.status,
                "code": r.code.as_str(),
                "retryable": r.retryable,
                "undeclaredMessage": r.undeclared_message,
            })
        })
        .collect();
    Value::Array(rows).to_string()
}
