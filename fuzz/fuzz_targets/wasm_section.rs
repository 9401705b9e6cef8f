//! The wasm custom-section reader and writer: any bytes are read or
//! refused with a typed error; writing `act:component` into a readable
//! binary then reading it gives the same data back, and every other
//! section is unchanged, byte for byte and in order.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use orpc_agent_core::act::component::ComponentMeta;
use orpc_agent_core::act::wasm::{read_component_section, sections, write_component_section};

const SECTION_NAME: &str = "act:component";

#[derive(Arbitrary, Debug)]
struct Case<'a> {
    module: &'a [u8],
    data: &'a [u8],
    /// Prefix the module with a valid preamble, so the fuzzer reaches the
    /// section walker more often.
    preamble: bool,
}

/// Every section except `act:component`, as raw bytes.
fn others(bytes: &[u8]) -> Vec<Vec<u8>> {
    let (_, secs) = sections(bytes).expect("readable");
    secs.iter()
        .filter(|s| !matches!(s.custom(), Ok(Some((SECTION_NAME, _)))))
        .map(|s| s.raw.to_vec())
        .collect()
}

fuzz_target!(|case: Case<'_>| {
    let mut module = Vec::new();
    if case.preamble {
        module.extend_from_slice(b"\0asm\x01\0\0\0");
    }
    module.extend_from_slice(case.module);
    let _ = ComponentMeta::from_wasm(&module);
    let Ok(_) = read_component_section(&module) else {
        return;
    };
    let written = write_component_section(&module, case.data).expect("readable binary is writable");
    assert_eq!(
        read_component_section(&written).expect("written binary reads"),
        Some(case.data),
        "write then read gave other data"
    );
    assert_eq!(&written[..8], &module[..8], "preamble changed");
    assert_eq!(others(&written), others(&module), "other sections changed");
    // Writing again replaces in place: same length as writing once.
    let twice = write_component_section(&written, case.data).expect("rewrite");
    assert_eq!(twice, written, "rewriting the same data is not idempotent");
});
