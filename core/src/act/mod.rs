//! `std:` metadata keys of spec/004 (DESIGN §8) and the approval input hash
//! of DESIGN §5.
//!
//! * [`deterministic`]: RFC 8949 §4.2.1 deterministic CBOR and [`input_hash`].
//! * [`decode`]: the bounded decoder every untrusted byte goes through.
//! * [`diag`]: diagnostic notation for any well-formed item.
//! * [`keys`]: the normative key table, positions and error kinds.
//! * [`meta_map`]: metadata maps, typed getters; [`validate`]: the rules per
//!   position, also on borrowed bytes ([`validate::MetaView`]).
//! * [`localized`]: localized strings and language fallback.
//! * [`trace`]: W3C trace context validation and propagation.
//! * [`capabilities`]: capability declarations, grants and decisions.
//! * [`tool_meta`]: AgentMeta/descriptors ↔ tool-definition metadata, MCP
//!   hints, reserved session tools.
//! * [`forward`]: `std:forward` layers.
//! * [`component`], [`wasm`]: manifests ↔ CBOR ↔ the `act:component` section.
//! * [`json_view`]: CBOR ↔ JSON for people and JSON hosts.

pub mod capabilities;
pub mod component;
pub mod decode;
pub mod deterministic;
pub mod diag;
pub mod forward;
pub mod json_view;
pub mod keys;
pub mod localized;
pub mod meta_map;
pub mod tool_meta;
pub mod trace;
pub mod validate;
pub mod wasm;

pub use decode::{DecodeError, DecodeOptions, MAX_DEPTH, decode};
pub use deterministic::{
    EncodeError, HashError, encode_deterministic, hash_cbor_input, hash_preimage,
    hash_preimage_cbor, input_hash,
};
pub use diag::diagnostic;
pub use keys::{KEYS, Position};
pub use localized::Localized;
pub use meta_map::{MetaMap, Problem, ProblemCode, Severity, ValidateOptions};
pub use trace::{validate_traceparent, validate_tracestate};
pub use validate::MetaView;
