//! `std:` metadata keys of spec/004 (DESIGN §8) and the approval input hash
//! of DESIGN §5.
//!
//! * [`deterministic`]: RFC 8949 §4.2.1 deterministic CBOR and [`input_hash`].
//! * [`decode`]: the bounded decoder every untrusted byte goes through.
//! * [`diag`]: diagnostic notation for any well-formed item.

pub mod decode;
pub mod deterministic;
pub mod diag;

pub use decode::{DecodeError, DecodeOptions, MAX_DEPTH, decode};
pub use deterministic::{
    EncodeError, HashError, encode_deterministic, hash_cbor_input, hash_preimage,
    hash_preimage_cbor, input_hash,
};
pub use diag::diagnostic;
