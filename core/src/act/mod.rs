//! `std:` metadata keys (spec/004): key table, CBOR codec, positions, manifests, wasm sections, input hash. (Being built: issue 3.)
