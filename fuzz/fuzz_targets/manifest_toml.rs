//! TOML manifests: the `[std]` table of any text is read or refused with a
//! typed error; an accepted manifest's metadata survives CBOR (to_cbor →
//! from_cbor) and the manifest form (to_manifest → from_manifest).
#![no_main]

use libfuzzer_sys::fuzz_target;
use orpc_agent_core::act::component::ComponentMeta;

fuzz_target!(|text: &str| {
    let Ok(meta) = ComponentMeta::from_manifest(text, "fuzz.toml") else {
        return;
    };
    let cbor = meta.to_cbor().expect("validated metadata encodes");
    let back = ComponentMeta::from_cbor(&cbor).expect("its CBOR reads back");
    assert_eq!(
        back.to_cbor().ok(),
        Some(cbor.clone()),
        "CBOR round trip changed it"
    );
    if let Ok(manifest) = meta.to_manifest() {
        let again = ComponentMeta::from_manifest(&manifest, "again.toml")
            .expect("a written manifest reads back");
        assert_eq!(
            again.to_cbor().ok(),
            Some(cbor),
            "manifest round trip changed it"
        );
    }
});
