//! `orpc_agent._native`: the Python binding's native module.
//!
//! Thin by design (DESIGN §1, §4): conversions between Python values and
//! the core's types, error mapping, and the synchronous crossings of the
//! asyncio driver loop in `python/orpc_agent/_driver.py`. Every governance
//! decision is the core's (`orpc-agent-core`).

mod act;
mod adapter_answers;
mod audit;
mod awaitable;
mod convert;
mod eager;
mod errors;
mod frame;
mod host_answers;
mod invocation;
mod limits;
mod outcome;
mod postgres;
mod registry;
mod telemetry;

use orpc_agent_core::act::deterministic::MAX_HASH_DEPTH;
use orpc_agent_core::act::hash_cbor_input;
use orpc_agent_core::pipeline::StepKind;
use orpc_agent_core::{CapabilityError, ErrorCode, all_error_codes as core_error_codes};
use pyo3::prelude::*;

/// Every error code the core can raise, in the core's order (drift tests).
#[pyfunction]
fn all_error_codes() -> Vec<&'static str> {
    core_error_codes()
}

/// The `std:` error kind of a code, or `None` for an unknown code.
#[pyfunction]
fn error_kind(code: &str) -> Option<&'static str> {
    ErrorCode::parse(code).map(|c| c.kind().as_str())
}

/// Whether errors with `code` are retryable by default.
#[pyfunction]
fn default_retryable(code: &str) -> Option<bool> {
    ErrorCode::parse(code).map(|c| c.default_retryable())
}

/// The approval input hash (DESIGN §5) of a Python value: lowercase hex
/// SHA-256 of the deterministic CBOR of `{"capability", "input"}`.
#[pyfunction]
fn input_hash(py: Python<'_>, capability_id: &str, input: &Bound<'_, PyAny>) -> PyResult<String> {
    let fail = |e: CapabilityError| errors::capability_error(py, &e);
    let value = convert::py_to_cbor(input).map_err(fail)?;
    hash_cbor_input(capability_id, &value).map_err(|e| fail(e.into()))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<frame::Frame>()?;
    m.add_class::<registry::NativeRegistry>()?;
    m.add_class::<invocation::Invocation>()?;
    m.add_class::<outcome::InvokeOk>()?;
    m.add("GovernedCall", awaitable::call_type(m.py())?)?;
    m.add_function(wrap_pyfunction!(errors::_install_error_factories, m)?)?;
    m.add_function(wrap_pyfunction!(all_error_codes, m)?)?;
    m.add_function(wrap_pyfunction!(error_kind, m)?)?;
    m.add_function(wrap_pyfunction!(default_retryable, m)?)?;
    m.add_function(wrap_pyfunction!(input_hash, m)?)?;
    adapter_answers::register(m)?;
    act::register(m)?;
    postgres::register(m)?;
    telemetry::register(m)?;
    m.add("MAX_HASH_DEPTH", MAX_HASH_DEPTH)?;
    m.add("INTERNAL_MESSAGE", orpc_agent_core::error::INTERNAL_MESSAGE)?;
    m.add(
        "APPROVAL_VIEW_FAILED_MESSAGE",
        orpc_agent_core::pipeline::redaction::APPROVAL_VIEW_FAILED_MESSAGE,
    )?;
    let decision_codes = pyo3::types::PyDict::new(m.py());
    for code in orpc_agent_core::ffi::decision_code::ALL {
        decision_codes.set_item(orpc_agent_core::ffi::decision_code::name(code), code)?;
    }
    m.add("DECISION_CODE", decision_codes)?;
    // Answer codes, as `Invocation.answer` takes them: `ANSWER_INPUT_VALID`…
    for (code, name) in orpc_agent_core::ffi::answer_code::ALL {
        m.add(upper_snake("ANSWER_", name).as_str(), code)?;
    }
    // How an approval UI may show a request's input: `APPROVAL_VIEW_AS_STORED`…
    for (code, name) in orpc_agent_core::ffi::approval_view_code::ALL {
        m.add(upper_snake("APPROVAL_VIEW_", name).as_str(), code)?;
    }
    m.add("DONE_OK", invocation::DONE_OK)?;
    m.add("SUSPENDED", registry::SUSPENDED)?;
    m.add("VALIDATOR_RAISED", registry::VALIDATOR_RAISED)?;
    m.add("HANDLER_RAISED", registry::HANDLER_RAISED)?;
    // Step kinds, as the driver loop compares them: `VALIDATE_INPUT`…
    for kind in StepKind::ALL {
        m.add(upper_snake("", kind.name()).as_str(), kind.as_u8())?;
    }
    Ok(())
}

/// `prefix` and the core's `name` in upper snake case: `("ANSWER_",
/// "InputValid")` → `ANSWER_INPUT_VALID`.
fn upper_snake(prefix: &str, name: &str) -> String {
    let mut constant = String::from(prefix);
    for (i, c) in name.chars().enumerate() {
        if i > 0 && c.is_ascii_uppercase() {
            constant.push('_');
        }
        constant.push(c.to_ascii_uppercase());
    }
    constant
}
