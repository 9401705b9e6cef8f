//! Deterministic encoding round trips: any well-formed item decodes,
//! re-encodes deterministically, and decodes again to the same value; the
//! deterministic encoding is a fixed point (encode ∘ decode = identity on
//! it), and the strict decoder accepts whatever the encoder writes for a
//! text-keyed item.
#![no_main]

use ciborium::Value as Cbor;
use libfuzzer_sys::fuzz_target;
use orpc_agent_core::act::{DecodeOptions, decode, diagnostic, encode_deterministic};

/// NaN is never equal to itself; compare such values by their encoding.
fn has_nan(v: &Cbor) -> bool {
    match v {
        Cbor::Float(f) => f.is_nan(),
        Cbor::Array(a) => a.iter().any(has_nan),
        Cbor::Map(m) => m.iter().any(|(k, v)| has_nan(k) || has_nan(v)),
        Cbor::Tag(_, v) => has_nan(v),
        _ => false,
    }
}

/// Map entries in deterministic order (keys sorted by their encoding), as
/// the encoder writes them; everything else as is.
fn canonical(v: &Cbor) -> Cbor {
    match v {
        Cbor::Array(a) => Cbor::Array(a.iter().map(canonical).collect()),
        Cbor::Map(m) => {
            let mut entries: Vec<(Vec<u8>, Cbor, Cbor)> = m
                .iter()
                .map(|(k, v)| {
                    let key = canonical(k);
                    (
                        encode_deterministic(&key).unwrap_or_default(),
                        key,
                        canonical(v),
                    )
                })
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Cbor::Map(entries.into_iter().map(|(_, k, v)| (k, v)).collect())
        }
        Cbor::Tag(t, v) => Cbor::Tag(*t, Box::new(canonical(v))),
        other => other.clone(),
    }
}

fuzz_target!(|data: &[u8]| {
    let _ = diagnostic(data);
    let strict = decode(data, DecodeOptions::default());
    let Ok(first) = decode(data, DecodeOptions::LENIENT) else {
        assert!(strict.is_err(), "strict accepts what lenient rejects");
        return;
    };
    let Ok(bytes) = encode_deterministic(&first) else {
        return;
    };
    let second = decode(&bytes, DecodeOptions::LENIENT).expect("encoder output decodes");
    if !has_nan(&first) {
        assert_eq!(
            canonical(&first),
            second,
            "decode → encode → decode changed the value"
        );
    }
    let again = encode_deterministic(&second).expect("re-encodes");
    assert_eq!(bytes, again, "deterministic encoding is not a fixed point");
    if strict.is_ok() {
        decode(&bytes, DecodeOptions::default())
            .expect("strict decoder accepts the encoder's output");
    }
});
