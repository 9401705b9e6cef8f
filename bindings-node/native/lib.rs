//! Node-API glue of `@orpc-agent/core`.
//!
//! The TypeScript façade (`src/`) drives the core's sans-I/O pipeline
//! (`orpc_agent_core::pipeline::Invocation`) with **synchronous** calls into
//! this module: the handler's promise is awaited by Node, never by Rust
//! (DESIGN §4). Nothing here decides governance; it converts values, keeps
//! registries and in-flight invocations in slabs, and maps errors.
//!
//! Hot-path shape (DESIGN §4's table): napi-derive *free functions* with
//! integer and float arguments (~0.12 µs a crossing; class methods cost
//! twice that), registries and invocations addressed by integer handles
//! into slabs owned here (no JS object per invocation), and step kinds as
//! small integers packed with the one number the host needs next (see
//! [`invoke`]). Payloads stay in JavaScript (`Payload::Host`) unless the
//! core asks for them.
//!
//! Slabs are thread-local: each Node thread (main or worker) has its own
//! registries, and no call here re-enters JavaScript, so a `RefCell` borrow
//! can never be taken twice.
//!
//! Panics: every export is `#[napi(catch_unwind)]`, which turns a panic into
//! a thrown JS error. Without it a panic aborts the whole Node process —
//! napi-derive does not catch by default (checked: `panic_for_test` killed
//! Node with "failed to initiate panic"). `test/robustness.test.js` keeps
//! it that way.

// `unsafe` only in raw.rs and raw_values.rs (raw Node-API for the hot path).
#![deny(unsafe_code)]

mod act;
mod agent_tools;
mod approvals;
mod errors;
mod gateway;
mod invoke;
mod js_json;
mod mcp;
mod postgres;
#[allow(unsafe_code)]
mod raw;
#[allow(unsafe_code)]
mod raw_values;
mod registry;
mod slab;
mod start;
mod step;
mod telemetry;

use napi_derive::napi;

pub use act::*;
pub use agent_tools::*;
pub use approvals::*;
pub use errors::*;
pub use gateway::*;
pub use invoke::*;
pub use mcp::*;
pub use postgres::*;
pub use raw::*;
pub use registry::*;
pub use start::*;
pub use step::*;
pub use telemetry::*;

/// Panics on purpose: lets the test suite check that a Rust panic becomes a
/// thrown JavaScript error instead of aborting the process.
#[napi(catch_unwind)]
#[allow(clippy::panic)]
pub fn panic_for_test() {
    panic!("deliberate panic from orpc-agent-node");
}
