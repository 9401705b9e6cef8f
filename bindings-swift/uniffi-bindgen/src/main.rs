//! `uniffi-bindgen-swift` at exactly the uniffi version the Swift binding
//! links, built only when the bindings are regenerated (`make test-swift`).
fn main() {
    uniffi::uniffi_bindgen_swift();
}
