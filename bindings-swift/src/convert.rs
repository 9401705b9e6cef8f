//! JSON text ↔ core values, and the frame Swift sends.
//!
//! The frame crosses as its surface index plus, only when it carries more
//! than a surface (actor, trace, ids), its details as a record: the common
//! call pays for one integer.

use orpc_agent_core::act::deterministic::{HashError, MAX_HASH_DEPTH};
use orpc_agent_core::ffi;
use orpc_agent_core::limits::Meter;
use orpc_agent_core::{Answer, CapabilityError, Frame, Surface};
use serde_json::Value;

use crate::records::FfiFrameDetails;
use crate::{FfiError, invalid_input};

pub(crate) fn parse_json(text: &str) -> Result<Value, FfiError> {
    serde_json::from_str(text).map_err(|e| invalid_input(format!("not valid JSON: {e}")))
}

/// The surfaces in the order of their index (`Surface::ALL`), for the
/// Swift enum's drift test.
#[uniffi::export]
pub fn surface_names() -> Vec<String> {
    Surface::ALL.iter().map(|s| s.as_str().to_owned()).collect()
}

/// The frame from the surface index (position in `Surface::ALL`) and,
/// when the caller gave more than a surface, its details.
pub(crate) fn frame(surface: u8, details: Option<FfiFrameDetails>) -> Result<Frame, FfiError> {
    let surface = Surface::from_index(surface)
        .ok_or_else(|| invalid_input(format!("unknown surface index {surface}")))?;
    match details {
        None => Ok(Frame::new(surface)),
        Some(details) => details.into_frame(surface),
    }
}

/// A raw host value as Swift measured it, without any unbounded recursion
/// (`HostJSON.measure`): what the core needs to decide about it. Swift only
/// reports what it met; the verdicts are the core's (`limits`, `HashError`).
#[derive(Debug, uniffi::Enum)]
pub enum FfiHostInput {
    /// Its compact JSON text. A NaN or infinity has no JSON form: it is
    /// written as `null` in `text` and `non_finite_at` is the JSON Pointer of
    /// the first one.
    Json {
        text: String,
        non_finite_at: Option<String>,
    },
    /// Swift stopped walking at a container `depth` deep (a top-level
    /// container is depth 1) at `path`: past the depth it was asked to walk
    /// to, read from the core (`input_max_depth`, `max_hash_depth`).
    Deeper { depth: u32, path: String },
    /// No JSON form: not `Encodable`, or its own `encode(to:)` threw (an application's
    /// in-process value; transports deliver JSON).
    Opaque,
}

/// What a value with no JSON form is called in the core's NOT_JSON_VALUE
/// message ("input at / is …, which the JSON data model has no place for").
const OPAQUE_KIND: &str = "a value Swift cannot encode as JSON";

/// The JSON value of a host input, or the core's error for why it has none
/// the approval hash can bind (`HashError`: `NON_FINITE_NUMBER`,
/// `TOO_DEEP`, `NOT_JSON_VALUE`; INVALID_INPUT with `details.reason`).
pub(crate) fn json_value(input: FfiHostInput) -> Result<Value, CapabilityError> {
    match input {
        FfiHostInput::Json {
            non_finite_at: Some(path),
            ..
        } => Err(HashError::NonFinite { path }.into()),
        FfiHostInput::Json { text, .. } => orpc_agent_core::ffi::exported_input(&text),
        FfiHostInput::Deeper { path, .. } => Err(HashError::TooDeep {
            path,
            limit: MAX_HASH_DEPTH,
        }
        .into()),
        // Swift knows only that the value is not `Encodable` or that its
        // `encode(to:)` threw: the core's NOT_JSON_VALUE at the root, in
        // the words every binding's refusal uses.
        FfiHostInput::Opaque => {
            Err(HashError::of_host_value("NOT_JSON_VALUE", "", OPAQUE_KIND).into())
        }
    }
}

/// The answer to `ExportInput` for the validated input as Swift measured
/// it: the value, or the core's `InputNotExportable` (INVALID_INPUT,
/// audited) with why it has no JSON form.
pub(crate) fn export_answer(input: FfiHostInput) -> Answer {
    match input {
        FfiHostInput::Opaque => Answer::input_not_exportable(None),
        other => Answer::input_exported(json_value(other)),
    }
}

/// The input-limits verdict on a raw input Swift holds, handed to the
/// invocation at its start (`Invocation::start_index_measured`): the core's
/// (`ffi::measured_input`: its JSON text's limits, then a non-finite number
/// is `NON_FINITE_NUMBER`, as in every binding). A walk Swift stopped past
/// the depth limit is the core's meter's `depth`. `None`: no measure (no
/// JSON form at all); the pipeline then checks the first JSON form it gets.
pub(crate) fn start_verdict(input: FfiHostInput) -> Option<Result<(), CapabilityError>> {
    match input {
        FfiHostInput::Json {
            text,
            non_finite_at,
        } => ffi::measured_input(Some(&text), non_finite_at),
        FfiHostInput::Deeper { depth, .. } => {
            let mut meter = Meter::new();
            let depth = usize::try_from(depth).unwrap_or(usize::MAX);
            match meter.array(depth, 0) {
                Err(limit) => Some(Err(meter.error(limit))),
                // Not past the core's limit after all: unmeasured.
                Ok(()) => None,
            }
        }
        FfiHostInput::Opaque => None,
    }
}
