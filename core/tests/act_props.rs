#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Property tests: arbitrary metadata maps round-trip through CBOR, the
//! encoding is deterministic, and no byte string makes the decoders panic.

use ciborium::Value as Cbor;
use orpc_agent_core::act::{
    DecodeOptions, MetaMap, MetaView, Position, ValidateOptions, decode, diagnostic,
    encode_deterministic, input_hash,
};
use proptest::prelude::*;

fn leaf() -> impl Strategy<Value = Cbor> {
    prop_oneof![
        any::<bool>().prop_map(Cbor::Bool),
        Just(Cbor::Null),
        any::<u64>().prop_map(|u| Cbor::Integer(u.into())),
        any::<i64>().prop_map(|i| Cbor::Integer(i.into())),
        // Finite floats: NaN never equals itself, so equality would fail
        // for a reason that is not the codec's.
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Cbor::Float),
        any::<f32>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| Cbor::Float(f64::from(f))),
        ".{0,20}".prop_map(Cbor::Text),
        proptest::collection::vec(any::<u8>(), 0..16).prop_map(Cbor::Bytes),
    ]
}

fn value() -> impl Strategy<Value = Cbor> {
    leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Cbor::Array),
            proptest::collection::btree_map("[a-z:]{0,6}", inner.clone(), 0..5)
                .prop_map(|m| Cbor::Map(m.into_iter().map(|(k, v)| (Cbor::Text(k), v)).collect())),
            (0u64..100_000, inner).prop_map(|(t, v)| Cbor::Tag(t, Box::new(v))),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        // Real std: keys, foreign namespaces, and arbitrary text.
        proptest::sample::select(
            orpc_agent_core::act::KEYS
                .iter()
                .map(|k| k.key.to_owned())
                .collect::<Vec<_>>()
        ),
        "(acme|pg|x):[a-z-]{1,10}",
        ".{0,12}",
    ]
}

fn meta_map() -> impl Strategy<Value = MetaMap> {
    proptest::collection::btree_map(key(), value(), 0..12).prop_map(MetaMap::from_entries)
}

proptest! {
    #[test]
    fn metadata_maps_round_trip(m in meta_map()) {
        let bytes = m.encode().unwrap();
        let back = MetaMap::decode(&bytes).unwrap();
        prop_assert_eq!(back.len(), m.len());
        for (k, v) in m.iter() {
            // Same value; nested maps may come back in deterministic order,
            // so compare canonical bytes rather than entry order.
            let got = back.get(k).unwrap();
            prop_assert_eq!(encode_deterministic(got).unwrap(), encode_deterministic(v).unwrap());
            if !matches!(v, Cbor::Map(_)) && !matches!(v, Cbor::Array(_)) && !matches!(v, Cbor::Tag(..)) {
                prop_assert_eq!(got, v);
            }
        }
        // Deterministic: re-encoding the decoded map gives the same bytes.
        prop_assert_eq!(back.encode().unwrap(), bytes.clone());
        // Validation never panics, in any position.
        // Validation never panics, and both paths agree, in every position.
        let view = MetaView::parse(&bytes).unwrap();
        for p in Position::ALL {
            let a = back.validate(p, ValidateOptions { strict: true });
            let b = view.validate(p, ValidateOptions { strict: true });
            let key = |v: Vec<orpc_agent_core::act::Problem>| {
                let mut k: Vec<(String, &'static str)> = v.into_iter().map(|p| (p.key, p.code.as_str())).collect();
                k.sort();
                k
            };
            prop_assert_eq!(key(a), key(b));
        }
        prop_assert!(diagnostic(&bytes).is_ok());
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        // The borrowed view and the owning decoder agree on every input.
        let owned = MetaMap::decode(&bytes).map(|m| m.len()).map_err(|e| e.code());
        let view = MetaView::parse(&bytes).map(|v| v.len()).map_err(|e| e.code());
        prop_assert_eq!(owned, view);
        let _ = decode(&bytes, DecodeOptions::LENIENT);
        let _ = diagnostic(&bytes);
        let _ = orpc_agent_core::act::wasm::sections(&bytes);
    }

    #[test]
    fn key_order_never_changes_the_hash(entries in proptest::collection::btree_map("[a-zé]{0,5}", any::<i32>(), 0..8)) {
        let forward: serde_json::Map<String, serde_json::Value> =
            entries.iter().map(|(k, v)| (k.clone(), (*v).into())).collect();
        let backward: serde_json::Map<String, serde_json::Value> =
            entries.iter().rev().map(|(k, v)| (k.clone(), (*v).into())).collect();
        prop_assert_eq!(
            input_hash("c", &serde_json::Value::Object(forward)).unwrap(),
            input_hash("c", &serde_json::Value::Object(backward)).unwrap()
        );
    }
}
