//! The `AgentMeta` model of spec/000: what a capability does to the world,
//! where it is reachable, and what guards it.
//!
//! Declarations arrive as JSON values (from a binding, or a declaration
//! file) and are read field by field with every problem recorded, so a
//! registry build can fail with one aggregate error (SI-4). Host-only hooks —
//! redactors, `retryOn`, host policies — cannot be data: a binding marks them
//! as *declared present* (`true`, or `{"host": true}` for a policy) and keeps
//! the function on its side, keyed by capability index.

pub(crate) mod parse;

pub use parse::{parse_agent_meta, parse_defaults};
// The vocabulary declarations are written in, below both this module and
// the policies it holds (`crate::vocab`); here under their old paths.
pub(crate) use crate::vocab::read;
pub use crate::vocab::{Discovery, Risk, SideEffect, Surface, limits, problem};
pub use problem::{Problem, ProblemCode, RegistryError, Warning, WarningCode};

use serde_json::{Map, Value};

use crate::policy::PolicySpec;

/// The set of surfaces a capability is exposed on. Only a literal `true`
/// in `expose` sets a bit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Exposure(u8);

impl Exposure {
    pub const NONE: Exposure = Exposure(0);

    pub fn with(self, s: Surface) -> Exposure {
        Exposure(self.0 | (1 << s.index()))
    }

    pub fn contains(self, s: Surface) -> bool {
        self.0 & (1 << s.index()) != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn surfaces(self) -> impl Iterator<Item = Surface> {
        Surface::ALL
            .iter()
            .copied()
            .filter(move |s| self.contains(*s))
    }
}

/// `retry`: runtime-managed retries of stage 11.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryConfig {
    /// Additional attempts after the first.
    pub max_attempts: u32,
    /// Base delay, doubled per attempt; `None` = runtime default (250 ms).
    pub backoff_ms: Option<u64>,
    /// A host `retryOn` predicate is attached (the binding holds it).
    pub retry_on: bool,
}

/// `approval`: the static gate.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApprovalConfig {
    pub required: bool,
    /// `approval.type`, e.g. "manager".
    pub kind: Option<String>,
    pub expires_in_ms: Option<u64>,
}

/// `redact`: which host redactors are attached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RedactHooks {
    pub output: bool,
    pub approval_input: bool,
}

/// `adapters`: cosmetic, never governance.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Adapters {
    pub ai_sdk_tool_name: Option<String>,
    pub mcp_tool_name: Option<String>,
    pub mcp_annotations: serde_json::Map<String, serde_json::Value>,
}

/// One capability's declaration, as validated.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentMeta {
    pub description: String,
    pub expose: Exposure,
    pub side_effect: SideEffect,
    pub risk: Risk,
    pub tags: Vec<String>,
    pub timeout_ms: Option<u64>,
    pub retry: Option<RetryConfig>,
    pub idempotent: Option<bool>,
    pub approval: Option<ApprovalConfig>,
    pub redact: RedactHooks,
    pub policies: Vec<PolicySpec>,
    pub adapters: Adapters,
    pub discovery: Discovery,
}

impl AgentMeta {
    /// SI-11: may the runtime retry this capability at all? none/read with
    /// a retry config, or any side effect with both `idempotent: true` and
    /// a retry config.
    pub fn retry_eligible(&self) -> bool {
        match &self.retry {
            None => false,
            Some(r) if r.max_attempts == 0 => false,
            Some(_) => self.safe_to_repeat(),
        }
    }

    /// Whether running the handler again cannot do its work twice: a
    /// read-only capability, or one declared `idempotent: true`.
    pub fn safe_to_repeat(&self) -> bool {
        self.side_effect.is_read_only() || self.idempotent == Some(true)
    }
}

/// Runtime defaults (`defaults` option of the registry).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Defaults {
    pub timeout_ms: u64,
    pub backoff_ms: u64,
    pub approval_expires_in_ms: u64,
}

impl Defaults {
    pub const TIMEOUT_MS: u64 = 30_000;
    pub const BACKOFF_MS: u64 = 250;
    pub const APPROVAL_EXPIRES_IN_MS: u64 = 900_000;
}

impl Default for Defaults {
    fn default() -> Self {
        Defaults {
            timeout_ms: Defaults::TIMEOUT_MS,
            backoff_ms: Defaults::BACKOFF_MS,
            approval_expires_in_ms: Defaults::APPROVAL_EXPIRES_IN_MS,
        }
    }
}

/// MCP annotations from metadata: `readOnlyHint` for none/read,
/// `destructiveHint` for destructive (stated `false` otherwise, since MCP's
/// default is `true`), `idempotentHint` for `idempotent: true` or read-only,
/// `openWorldHint` for external; then the declared overrides on top.
pub fn mcp_annotations(m: &AgentMeta) -> Map<String, Value> {
    let mut out = Map::new();
    let read_only = m.side_effect.is_read_only();
    out.insert("readOnlyHint".into(), read_only.into());
    out.insert(
        "destructiveHint".into(),
        (m.side_effect == SideEffect::Destructive).into(),
    );
    out.insert(
        "idempotentHint".into(),
        (read_only || m.idempotent == Some(true)).into(),
    );
    out.insert(
        "openWorldHint".into(),
        (m.side_effect == SideEffect::External).into(),
    );
    for (k, v) in &m.adapters.mcp_annotations {
        out.insert(k.clone(), v.clone());
    }
    out
}
