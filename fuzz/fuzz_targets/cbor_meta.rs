//! CBOR metadata maps per position: the owned decoder (`MetaMap`) and the
//! borrowed one (`MetaView`) must agree on every input — both accept or
//! both reject, and report the same problems for each position. An
//! accepted map re-encodes deterministically to bytes that decode to the
//! same map, and its diagnostic and JSON views never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orpc_agent_core::act::{MetaMap, MetaView, Position, ValidateOptions, diagnostic, json_view};

fuzz_target!(|data: &[u8]| {
    let owned = MetaMap::decode(data);
    let view = MetaView::parse(data);
    assert_eq!(
        owned.is_ok(),
        view.is_ok(),
        "MetaMap and MetaView disagree: {owned:?} vs {:?}",
        view.as_ref().err()
    );
    let (Ok(map), Ok(view)) = (owned, view) else {
        return;
    };
    assert_eq!(map.len(), view.len());
    for position in Position::ALL {
        for strict in [false, true] {
            let opts = ValidateOptions { strict };
            // Key, code and severity must agree; the message may name a
            // different first fault in a map (the owned path walks entries
            // in deterministic order, the view in wire order).
            let brief = |p: Vec<orpc_agent_core::act::Problem>| {
                p.into_iter()
                    .map(|p| (p.key, p.code, p.severity))
                    .collect::<Vec<_>>()
            };
            let a = brief(map.validate(position, opts));
            let b = brief(view.validate(position, opts));
            assert_eq!(a, b, "problems differ at {position:?} (strict {strict})");
        }
    }
    if let Ok(bytes) = map.encode() {
        let again = MetaMap::decode(&bytes).expect("re-encoded map decodes");
        assert!(again == map, "re-encoded map differs");
        assert_eq!(again.encode().ok(), Some(bytes), "encoding not idempotent");
    }
    let _ = diagnostic(data);
    let json = json_view::to_json(&map.to_value());
    let _ = json_view::from_json(&json);
});
