//! How core errors become an `FfiError`, and the `INVALID_INPUT` the glue
//! raises for a malformed argument. `FfiError` itself stays in `lib.rs`:
//! uniffi writes its module path into the metadata, and so into the
//! checksum, of every exported call that can throw it.

use orpc_agent_core::meta::RegistryError;
use orpc_agent_core::{CapabilityError, ErrorCode};

use crate::FfiError;

impl From<CapabilityError> for FfiError {
    fn from(e: CapabilityError) -> FfiError {
        FfiError::Capability {
            code: e.code.as_str().to_owned(),
            message: e.message,
            retryable: e.retryable,
            details_json: e.details.map(|d| d.to_string()),
        }
    }
}

impl From<RegistryError> for FfiError {
    fn from(e: RegistryError) -> FfiError {
        let json = orpc_agent_core::ffi::registry_error_json(&e);
        FfiError::Registry {
            message: e.to_string(),
            problems_json: json["problems"].to_string(),
        }
    }
}

pub(crate) fn invalid_input(message: impl Into<String>) -> FfiError {
    CapabilityError::new(ErrorCode::InvalidInput, message).into()
}
