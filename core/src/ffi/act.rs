//! The `std:` metadata operations a host reaches through a binding (issue
//! 16): decode, encode and check a CBOR metadata map per position, in the
//! JSON view of [`crate::act::json_view`] (byte strings, tags and other
//! values JSON cannot say get one-key wrappers, so a decoded map encodes
//! back to the same bytes). The `orpc-agent meta` commands use the same
//! functions.
//!
//! A map that is not acceptable CBOR, or a JSON view that is not a
//! metadata map, is INVALID_INPUT with `details: {"reason": <code>}` (the
//! decoder's code, e.g. `NOT_A_MAP`, `TRUNCATED`; `NOT_METADATA` for a
//! JSON view that is not a text-keyed map).

use serde_json::{Value, json};

use crate::act::{MetaMap, Position, Severity, ValidateOptions, json_view};
use crate::error::{CapabilityError, ErrorCode};

fn invalid(reason: &str, message: String) -> CapabilityError {
    CapabilityError::new(ErrorCode::InvalidInput, message).with_details(json!({"reason": reason}))
}

fn decode_map(bytes: &[u8]) -> Result<MetaMap, CapabilityError> {
    MetaMap::decode(bytes).map_err(|e| invalid(e.code(), format!("std: metadata: {e}")))
}

/// The JSON view of a CBOR metadata map (a definite-length map with text
/// keys, no duplicates, nesting within the decoder's depth limit).
pub fn meta_decode(bytes: &[u8]) -> Result<Value, CapabilityError> {
    Ok(json_view::to_json(&decode_map(bytes)?.to_value()))
}

/// The deterministic CBOR of a metadata map given in the JSON view.
pub fn meta_encode(meta: &Value) -> Result<Vec<u8>, CapabilityError> {
    let value = json_view::from_json(meta)
        .map_err(|e| invalid("NOT_METADATA", format!("std: metadata: {e}")))?;
    let map = MetaMap::from_value(&value)
        .map_err(|e| invalid(e.code(), format!("std: metadata: {e}")))?;
    map.encode()
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
        .into_iter()
        .map(|p| {
            json!({
                "key": p.key,
                "code": p.code.as_str(),
                "severity": if p.severity == Severity::Error { "error" } else { "warning" },
                "message": p.message,
            })
        })
        .collect())
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
