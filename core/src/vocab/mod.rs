//! The vocabulary declarations are written in: the wire enums (surfaces,
//! side effects, risk, discovery), the declaration limits, and the
//! problem list and field readers every declaration parser shares. Below
//! both `meta` (a capability's metadata) and `policy` (the policies that
//! metadata holds), so neither reaches up into the other for words.

pub mod problem;
pub(crate) mod read;

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
