//! Input limits (`core/src/limits.rs`) on JSON text from a transport: any
//! text is accepted, refused as not JSON (`INVALID_INPUT`) or refused with
//! `LIMIT_EXCEEDED` naming the limit — never a panic; an accepted value
//! passes `check` again, fits the size limit as compact JSON, and hashes
//! (its depth is within the input hash's own limit). On JSON text,
//! `check_serialized` (the bindings' entry, which skips parsing text that
//! cannot exceed a limit) gives the full check's verdict.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orpc_agent_core::ErrorCode;
use orpc_agent_core::limits::{self, MAX_INPUT_BYTES};

fuzz_target!(|text: &str| {
    let full = limits::check_json_text(text);
    if full
        .as_ref()
        .map_or_else(|e| e.code == ErrorCode::LimitExceeded, |_| true)
    {
        let short = limits::check_serialized(text);
        assert_eq!(
            full.as_ref().map(drop).map_err(|e| e.details.clone()),
            short.map_err(|e| e.details),
            "check_serialized disagrees with check_json_text"
        );
    }
    match full {
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
