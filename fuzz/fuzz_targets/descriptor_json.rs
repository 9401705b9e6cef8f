//! Descriptor JSON (what a gateway sends to a remote adapter) and the
//! bindings' declaration JSON (`BindingRegistry::build`): any text is parsed
//! or refused with a typed error; an accepted descriptor survives its JSON
//! form; accepted declarations build a registry whose descriptors do.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use orpc_agent_core::approval::MemoryApprovalStore;
use orpc_agent_core::ffi::BindingRegistry;
use orpc_agent_core::{Descriptor, Surface};

fuzz_target!(|text: &str| {
    if let Ok(d) = Descriptor::from_json(text) {
        let again = serde_json::to_string(&d.to_json()).expect("serializes");
        assert_eq!(
            Descriptor::from_json(&again).ok(),
            Some(d),
            "descriptor round trip"
        );
    }
    let Ok(serde_json::Value::Array(parts)) = serde_json::from_str::<serde_json::Value>(text)
    else {
        return;
    };
    // `[decls, options]`, as a binding passes them.
    let decls = parts.first().cloned().unwrap_or_default();
    let options = parts
        .get(1)
        .cloned()
        .unwrap_or_else(|| serde_json::json!({}));
    let store = Arc::new(MemoryApprovalStore::new());
    let Ok(host) = BindingRegistry::build(&decls, &options, store) else {
        return;
    };
    for &surface in Surface::ALL {
        for d in host.registry().descriptors(surface) {
            let again = serde_json::to_string(&d.to_json()).expect("serializes");
            assert_eq!(
                Descriptor::from_json(&again).ok(),
                Some(d),
                "built descriptor round trip"
            );
        }
    }
});
