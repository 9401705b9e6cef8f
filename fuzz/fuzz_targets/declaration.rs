//! Declaration files (JSON and TOML, `core/src/declaration.rs`): any text
//! parses or fails with a positioned error; parsed declarations build a
//! registry or fail with the aggregate error; a registry answers inspect()
//! and gives descriptors for every surface that survive their JSON form.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orpc_agent_core::{CapabilityRegistry, Declarations, Descriptor, Format, Surface};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let format = if selector & 1 == 0 {
        Format::Json
    } else {
        Format::Toml
    };
    let Ok(decls) = Declarations::parse(text, format) else {
        return;
    };
    let Ok(registry) =
        CapabilityRegistry::build_with_json_options(decls.capabilities, &decls.options)
    else {
        return;
    };
    let _ = registry.inspect();
    for &surface in Surface::ALL {
        for d in registry.descriptors(surface) {
            let text = serde_json::to_string(&d.to_json()).expect("descriptor JSON");
            let back = Descriptor::from_json(&text).expect("descriptor reads back");
            assert_eq!(back, d, "descriptor JSON round trip");
        }
    }
});
