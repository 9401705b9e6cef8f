//! # orpc-agent-swift
//!
//! The uniffi layer under the Swift package `OrpcAgent`. It converts values
//! and maps errors; every governance decision stays in `orpc-agent-core`.
//!
//! Shape (DESIGN §4, "the host drives, the core decides"): Swift builds a
//! [`FfiRegistry`], starts an [`FfiInvocation`] per call and loops on the
//! integer step kind it returns, performing each step (handler, policy,
//! validator, redactor, timer) on Swift concurrency and answering with one
//! synchronous call that also advances to the next step. Rust never awaits
//! Swift: no async crossing, no tokio runtime.
//!
//! Values the core does not need stay in Swift (`Payload::Host`); the core
//! asks for JSON only when it must read them (`ExportInput`/`ExportOutput`).
//!
//! Panics (there should be none: the core denies `unwrap`/`panic`) never
//! reach Swift: the calls that run the state machine catch them and end the
//! invocation in INTERNAL; the other calls that reach core code return
//! `Result`, so uniffi's own catch turns a panic into a thrown Swift error.
//! Neither aborts the host process.
//!
//! Each uniffi export (function, type, object method) stays in the module
//! that has always defined it: uniffi writes that module path into the
//! export's metadata, so moving one would change the generated Swift (its
//! checksum and its place in the file). Submodules take the rest.

mod answers;
mod convert;
mod error;
mod invocation;
mod postgres;
mod records;
mod registry;

pub use convert::{FfiHostInput, surface_names};
pub(crate) use error::invalid_input;
pub use invocation::FfiInvocation;
pub use records::{
    FfiActor, FfiApprovalPage, FfiApprovalRequest, FfiAuditRecord, FfiFrame, FfiFrameDetails,
    FfiPolicyRecord, FfiRedactionInfo, FfiSurface, FfiTrace,
};
pub use registry::{FfiApprovalView, FfiRegistry, FfiResumeLimit};

uniffi::setup_scaffolding!();

use orpc_agent_core::{CapabilityError, ErrorCode};

/// An error crossing into Swift. `Capability` carries a core
/// `CapabilityError` by code (the Swift layer maps it to its enum);
/// `Registry` is the aggregate build error with every problem as JSON.
#[derive(Debug, thiserror::Error, uniffi::Error)]
pub enum FfiError {
    #[error("{code}: {message}")]
    Capability {
        code: String,
        message: String,
        retryable: bool,
        /// `details` as JSON text, when the error has any.
        details_json: Option<String>,
    },
    #[error("{message}")]
    Registry {
        message: String,
        /// `[{capability, path, code, message}]` as JSON text.
        problems_json: String,
    },
}

/// Every error code of the core, as wire strings: the Swift error enum's
/// drift test compares its cases with this list.
#[uniffi::export]
pub fn all_error_codes() -> Vec<String> {
    orpc_agent_core::all_error_codes()
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// The `std:` error kind of a code (`NOT_FOUND` → `std:not-found`), or
/// `None` for an unknown code.
#[uniffi::export]
pub fn error_kind(code: String) -> Option<String> {
    ErrorCode::parse(&code).map(|c| c.kind().as_str().to_owned())
}

/// Whether an error with this code is retryable when its thrower says
/// nothing (`ErrorCode::default_retryable`: TIMEOUT); false for an unknown
/// code.
#[uniffi::export]
pub fn default_retryable(code: String) -> bool {
    ErrorCode::parse(&code).is_some_and(ErrorCode::default_retryable)
}

/// The approval input hash (DESIGN §5) of a JSON input: lowercase hex
/// SHA-256 of the deterministic CBOR of `{capability, input}`.
#[uniffi::export]
pub fn input_hash_json(capability_id: String, input_json: String) -> Result<String, FfiError> {
    let input = convert::parse_json(&input_json)?;
    orpc_agent_core::act::deterministic::input_hash(&capability_id, &input)
        .map_err(|e| FfiError::from(CapabilityError::from(e)))
}

/// The approval input hash of a host value as Swift measured it
/// (`HostJSON.measure`): a NaN or infinity is the core's
/// `NON_FINITE_NUMBER`, nesting past `max_hash_depth` its `TOO_DEEP`
/// (INVALID_INPUT with `details.reason`), as on the CBOR path.
#[uniffi::export]
pub fn input_hash_host(capability_id: String, input: FfiHostInput) -> Result<String, FfiError> {
    let value = convert::json_value(input)?;
    orpc_agent_core::act::deterministic::input_hash(&capability_id, &value)
        .map_err(|e| FfiError::from(CapabilityError::from(e)))
}

/// The core's refusal (INVALID_INPUT `NON_FINITE_NUMBER`) of JSON text Swift
/// wrote with a NaN or infinity as `null`: for `std:` metadata, declarations.
#[uniffi::export]
pub fn host_json_check(input: FfiHostInput) -> Result<(), FfiError> {
    convert::json_value(input).map(drop).map_err(FfiError::from)
}

/// The deepest nesting the core accepts in an input
/// (`limits::MAX_INPUT_DEPTH`; a top-level container is depth 1): how far
/// Swift walks a raw input's `encode(to:)` before it stops and reports it
/// too deep.
#[uniffi::export]
pub fn input_max_depth() -> u32 {
    u32::try_from(orpc_agent_core::limits::MAX_INPUT_DEPTH).unwrap_or(u32::MAX)
}

/// The deepest nesting the approval hash binds
/// (`act::deterministic::MAX_HASH_DEPTH`): how far Swift walks a value it
/// exports or hashes.
#[uniffi::export]
pub fn max_hash_depth() -> u32 {
    u32::try_from(orpc_agent_core::act::deterministic::MAX_HASH_DEPTH).unwrap_or(u32::MAX)
}

/// The core's step kinds by name, in numeric order (`StepKind::ALL`:
/// position `i` is kind `i + 1`): the Swift mirror's drift test compares
/// its cases with this list.
#[uniffi::export]
pub fn step_kind_names() -> Vec<String> {
    orpc_agent_core::ffi::step_kind_names()
}

/// The approval input hash of an input the host holds as CBOR bytes (values
/// JSON cannot carry — byte strings, tags, non-text keys — are refused with
/// `INVALID_INPUT`, as the hash rules say).
#[uniffi::export]
pub fn input_hash_cbor(capability_id: String, input_cbor: Vec<u8>) -> Result<String, FfiError> {
    use orpc_agent_core::act::decode::{DecodeOptions, decode};
    use orpc_agent_core::act::deterministic::{MAX_HASH_DEPTH, hash_cbor_input};
    let options = DecodeOptions {
        // One level past the hash limit, so the hash reports TOO_DEEP
        // rather than the decoder.
        max_depth: MAX_HASH_DEPTH + 1,
        allow_indefinite: false,
    };
    let value = decode(&input_cbor, options)
        .map_err(|e| invalid_input(format!("the input is not valid CBOR: {e}")))?;
    hash_cbor_input(&capability_id, &value).map_err(|e| FfiError::from(CapabilityError::from(e)))
}

#[cfg(test)]
mod tests;

/// The JSON view (as text) of a CBOR `std:` metadata map
/// (`orpc_agent_core::ffi::act::meta_decode`).
#[uniffi::export]
pub fn std_meta_decode(cbor: Vec<u8>) -> Result<String, FfiError> {
    Ok(orpc_agent_core::ffi::act::meta_decode(&cbor)?.to_string())
}

/// The deterministic CBOR of a metadata map given as JSON-view text.
#[uniffi::export]
pub fn std_meta_encode(meta_json: String) -> Result<Vec<u8>, FfiError> {
    let meta = convert::parse_json(&meta_json)?;
    Ok(orpc_agent_core::ffi::act::meta_encode(&meta)?)
}

/// The problems (as JSON text) of a metadata map at a position.
#[uniffi::export]
pub fn std_meta_check(cbor: Vec<u8>, position: String, strict: bool) -> Result<String, FfiError> {
    let problems = orpc_agent_core::ffi::act::meta_check(&cbor, &position, strict)?;
    Ok(serde_json::Value::Array(problems).to_string())
}

/// The `act:component` metadata (as JSON text) of a WebAssembly component.
#[uniffi::export]
pub fn act_component_inspect(wasm: Vec<u8>) -> Result<String, FfiError> {
    Ok(orpc_agent_core::ffi::act::component_inspect(&wasm)?.to_string())
}

/// The component with the `act:component` section a manifest describes.
#[uniffi::export]
pub fn act_component_embed(
    manifest: String,
    manifest_name: String,
    wasm: Vec<u8>,
) -> Result<Vec<u8>, FfiError> {
    Ok(orpc_agent_core::ffi::act::component_embed(
        &manifest,
        &manifest_name,
        &wasm,
    )?)
}

/// An `act.toml` manifest checked: the metadata it describes, as JSON text.
#[uniffi::export]
pub fn act_manifest_check(manifest: String, manifest_name: String) -> Result<String, FfiError> {
    Ok(orpc_agent_core::ffi::act::manifest_check(&manifest, &manifest_name)?.to_string())
}

/// `std:forward` over a chain of hops (JSON-view text of an array).
#[uniffi::export]
pub fn std_forward_wrap(hops_json: String) -> Result<String, FfiError> {
    let hops = convert::parse_json(&hops_json)?;
    Ok(orpc_agent_core::ffi::act::forward_wrap(&hops)?.to_string())
}

/// One `std:forward` layer unwrapped: `{here, next}` as JSON text.
#[uniffi::export]
pub fn std_forward_unwrap(meta_json: String) -> Result<String, FfiError> {
    let meta = convert::parse_json(&meta_json)?;
    Ok(orpc_agent_core::ffi::act::forward_unwrap(&meta)?.to_string())
}

/// A capability-class use decided against a component's declarations and
/// the host's grants (each JSON-view text): `{allowed, reason?, message?}`.
#[uniffi::export]
pub fn capability_grant_decide(
    declared_json: String,
    grants_json: String,
    request_json: String,
) -> Result<String, FfiError> {
    let declared = convert::parse_json(&declared_json)?;
    let grants = convert::parse_json(&grants_json)?;
    let request = convert::parse_json(&request_json)?;
    Ok(orpc_agent_core::ffi::act::grant_decide(&declared, &grants, &request)?.to_string())
}

/// The tool-definition metadata (JSON-view text) an agent metadata states.
#[uniffi::export]
pub fn std_tool_definition_meta(
    capability_id: String,
    meta_json: String,
) -> Result<String, FfiError> {
    let meta = convert::parse_json(&meta_json)?;
    Ok(orpc_agent_core::ffi::act::tool_definition_meta(&capability_id, &meta)?.to_string())
}
