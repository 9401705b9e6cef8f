//! Input limits (`core/src/limits.rs`) on JSON text from a transport: any
//! text is accepted, refused as not JSON (`INVALID_INPUT`) or refused with
//! `LIMIT_EXCEEDED` naming the limit — never a panic; an accepted value
//! passes `check` again, fits the size limit as compact JSON, and hashes
//! (its depth is within the input hash's own limit).
#![no_main]

use libfuzzer_sys::fuzz_target;
use orpc_agent_core::ErrorCode;
use orpc_agent_core::limits::{self, MAX_INPUT_BYTES};

fuzz_target!(|text: &str| {
    match limits::check_json_text(text) {
        Ok(v) => {
            limits::check(&v).expect("an accepted value passes again");
            let compact = serde_json::to_string(&v).expect("serializes");
            assert!(compact.len() <= MAX_INPUT_BYTES);
            orpc_agent_core::act::input_hash("fuzz.limits", &v).expect("an accepted input hashes");
        }
        Err(e) => {
            assert!(matches!(
                e.code,
                ErrorCode::InvalidInput | ErrorCode::LimitExceeded
            ));
            if e.code == ErrorCode::LimitExceeded {
                let d = e.details.expect("details name the limit");
                assert!(d["limit"].is_string() && d["max"].is_u64(), "{d}");
            }
        }
    }
});
