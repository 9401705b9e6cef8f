//! The input-limits verdict a binding hands an invocation at its start
//! (`Invocation::start_index_measured`), from what the binding measured of
//! a raw input it holds: the JSON text it wrote of it (over a few
//! characters: shorter text cannot exceed a limit) and where the input holds
//! its first non-finite number, which JSON has no form for.
//!
//! One rule in every language: the limits first ([`check_serialized`]), then
//! — within them — a NaN or infinity is the hash's `NON_FINITE_NUMBER`
//! (INVALID_INPUT), so no validator, policy, hash or handler is handed a
//! value the core would hold as something else (the `null` its JSON text
//! writes). Node and Python handed it on; Swift refused it.

use crate::act::HashError;
use crate::error::CapabilityError;
use crate::limits::check_serialized;

/// The verdict from the host's measure; `None` when it has none (no JSON
/// text worth checking and nothing non-finite: the pipeline checks the
/// first JSON form it gets). `non_finite_at` is the JSON pointer of the
/// first non-finite number.
pub fn measured_input(
    text: Option<&str>,
    non_finite_at: Option<String>,
) -> Option<Result<(), CapabilityError>> {
    if text.is_none() && non_finite_at.is_none() {
        return None;
    }
    Some(text.map_or(Ok(()), check_serialized).and_then(|()| {
        non_finite_at.map_or(Ok(()), |path| Err(HashError::NonFinite { path }.into()))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_first_then_a_non_finite_number() {
        assert!(measured_input(None, None).is_none());
        assert_eq!(
            measured_input(Some("{\"a\":1}"), None).map(|r| r.is_ok()),
            Some(true)
        );
        let e = measured_input(None, Some("/a".into()))
            .unwrap()
            .unwrap_err();
        assert_eq!(e.details.as_ref().unwrap()["reason"], "NON_FINITE_NUMBER");
        assert!(e.message.contains("/a"), "{}", e.message);
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let e = measured_input(Some(&deep), Some("/0".into()))
            .unwrap()
            .unwrap_err();
        assert_ne!(
            e.details
                .as_ref()
                .and_then(|d| d.get("reason"))
                .and_then(|r| r.as_str()),
            Some("NON_FINITE_NUMBER")
        );
    }
}
