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
pub mod problem;
pub(crate) mod read;

pub use parse::{parse_agent_meta, parse_defaults};
pub use problem::{Problem, ProblemCode, RegistryError, Warning, WarningCode};

use crate::policy::PolicySpec;

macro_rules! wire_enum {
    ($(#[$m:meta])* $name:ident { $($variant:ident => $wire:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub const fn as_str(self) -> &'static str {
                match self { $($name::$variant => $wire),+ }
            }

            pub fn parse(s: &str) -> Option<$name> {
                match s { $($wire => Some($name::$variant),)+ _ => None }
            }

            /// The accepted spellings, for error messages.
            pub fn expected() -> String {
                [$($wire),+].join(", ")
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                $name::parse(&s).ok_or_else(|| {
                    serde::de::Error::custom(format!(
                        "unknown value `{s}`; expected one of {}",
                        $name::expected()
                    ))
                })
            }
        }
    };
}
pub(crate) use wire_enum;

wire_enum! {
    /// Where an invocation comes from. Exposure is per surface (SI-1).
    Surface {
        Direct => "direct",
        AiSdk => "aiSdk",
        Mcp => "mcp",
        Workflow => "workflow",
        Test => "test",
    }
}

impl Surface {
    /// Stable small integer, for bindings that pass surfaces as numbers.
    pub const fn index(self) -> u8 {
        self as u8
    }

    pub fn from_index(i: u8) -> Option<Surface> {
        Surface::ALL.get(usize::from(i)).copied()
    }

    /// Whether a gated call repeated on this surface finds its earlier
    /// request (issue 18): MCP, whose clients send only `{name,
    /// arguments}` and call a tool again after an approval (or while they
    /// wait for one). Calling again with the same arguments then runs the
    /// approved request once, or gets the pending one back, instead of
    /// opening another. Elsewhere the host names the request it resumes
    /// (direct, workflow, test) or keeps its own request per tool call
    /// (the AI SDK adapters).
    pub const fn repeated_calls_find_their_request(self) -> bool {
        matches!(self, Surface::Mcp)
    }

    /// Whether an approval request made on this surface must belong to a
    /// named caller (an actor id or a session id): the AI SDK surface, where
    /// an agent framework's tool call is approved in one turn and run in the
    /// next, and the adapter (or a gateway) finds the request again by its
    /// caller. Two anonymous callers there could not be told apart, so a
    /// gated call that names no caller is refused (CREDENTIAL_REQUIRED)
    /// before any request is stored. Elsewhere a request is found by its id
    /// (direct, workflow, test) or by the MCP session.
    pub const fn approvals_need_a_caller(self) -> bool {
        matches!(self, Surface::AiSdk)
    }
}

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

wire_enum! {
    /// What a capability does to the world. Never inferred.
    SideEffect {
        None => "none",
        Read => "read",
        Write => "write",
        Destructive => "destructive",
        External => "external",
    }
}

wire_enum! {
    /// Sensitivity, independent of the side effect. Drives nothing by itself.
    Risk {
        Low => "low",
        Medium => "medium",
        High => "high",
        Critical => "critical",
    }
}

wire_enum! {
    /// How a capability is presented to models.
    Discovery {
        Discoverable => "discoverable",
        Contextual => "contextual",
    }
}

impl SideEffect {
    /// none/read: retry-eligible without further declaration (SI-11).
    pub fn is_read_only(self) -> bool {
        matches!(self, SideEffect::None | SideEffect::Read)
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
            Some(_) => self.side_effect.is_read_only() || self.idempotent == Some(true),
        }
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

/// Limits on declarations, documented in docs/decisions.md.
pub mod limits {
    /// Largest `timeoutMs`: JS timers fire at once past 2^31-1 ms.
    pub const MAX_TIMEOUT_MS: u64 = 2_147_483_647;
    /// Largest `expiresInMs`: one year.
    pub const MAX_EXPIRES_IN_MS: u64 = 31_536_000_000;
    /// Largest `retry.maxAttempts`.
    pub const MAX_RETRY_ATTEMPTS: u64 = 100;
    /// Largest `retry.backoffMs`: one hour.
    pub const MAX_BACKOFF_MS: u64 = 3_600_000;
    /// Longest capability id.
    pub const MAX_ID_LEN: usize = 256;
    /// Description length past which inspect() warns.
    pub const DESCRIPTION_WARN_CHARS: usize = 300;
}
