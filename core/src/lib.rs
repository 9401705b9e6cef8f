//! # orpc-agent-core
//!
//! The one place every governance decision of orpc-agent lives: capability
//! metadata and its validation, the registry, the invocation pipeline (a
//! sans-I/O state machine the bindings drive), policies, approvals, redaction
//! order, audit, and the `std:` CBOR metadata keys. Bindings (Node, Python,
//! Swift) only convert values and run host code when the core asks.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod act;
pub mod agent_tools;
pub mod approval;
pub mod clock;
pub mod declaration;
pub mod descriptor;
pub mod error;
pub mod ffi;
pub mod frame;
pub mod gateway;
pub mod limits;
pub mod mcp;
pub mod meta;
pub mod orpc_error;
pub mod pipeline;
pub mod policy;
pub mod registry;
pub mod telemetry;
pub mod vocab;
pub mod wire_schema;

pub use declaration::{DeclarationError, Declarations, Format};
pub use descriptor::Descriptor;
pub use error::{CapabilityError, ErrorCode, ErrorKind, all_error_codes};
pub use frame::{Actor, Frame, TraceContext};
pub use meta::{
    AgentMeta, Defaults, Discovery, Exposure, Problem, ProblemCode, RegistryError, Risk,
    SideEffect, Surface, Warning, WarningCode,
};
pub use pipeline::{Answer, Invocation, InvokeOptions, Outcome, Payload, Stage, Step, StepKind};
pub use registry::{
    Adapter, Capability, CapabilityDecl, CapabilityRegistry, InspectReport, RegistryOptions,
    ValidatedInputSchema,
};
