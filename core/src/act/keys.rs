//! The normative key table of spec/004, as data: every key, its CBOR type,
//! the positions it may appear in, and what it is for. Validation, the CLI
//! and the bindings' drift tests all read this one table.
//!
//! Where a key appears matters (spec/004): `description` is a component
//! key in the `[std]` table, `std:usage-hints` is its tool-level cousin;
//! `std:username` is an open-session argument here but means nothing inside
//! stored credential material. Positions make that explicit.

use std::fmt;

use crate::error::ErrorKind;

/// Where a metadata map sits. Each key is allowed in a set of positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Position {
    /// The `[std]` table of a manifest / the `act:component` section.
    Component,
    /// `tool-definition.metadata`: what a component says about a tool.
    ToolDefinition,
    /// Per-call metadata of a tool call.
    ToolCall,
    /// Metadata of a list-tools response.
    ListTools,
    /// `content-part.metadata` of a streaming result.
    ContentPart,
    /// Metadata of an open-session request.
    OpenSession,
    /// `open-session.args`: the only place credential keys belong.
    OpenSessionArgs,
    /// Fields of stored credential material. The credential store names
    /// field *types*, not names, so no `std:` key means anything here and
    /// nothing is validated (spec/004, "Same spelling, different things").
    CredentialMaterial,
}

impl Position {
    pub const ALL: [Position; 8] = [
        Position::Component,
        Position::ToolDefinition,
        Position::ToolCall,
        Position::ListTools,
        Position::ContentPart,
        Position::OpenSession,
        Position::OpenSessionArgs,
        Position::CredentialMaterial,
    ];

    /// The CLI spelling (`--position tool-definition`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Position::Component => "component",
            Position::ToolDefinition => "tool-definition",
            Position::ToolCall => "tool-call",
            Position::ListTools => "list-tools",
            Position::ContentPart => "content-part",
            Position::OpenSession => "open-session",
            Position::OpenSessionArgs => "open-session-args",
            Position::CredentialMaterial => "credential-material",
        }
    }

    pub fn parse(s: &str) -> Option<Position> {
        Position::ALL.into_iter().find(|p| p.as_str() == s)
    }

    const fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of positions, as a bit set (the table is `const`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Positions(u16);

impl Positions {
    pub const fn of(list: &[Position]) -> Positions {
        let mut bits = 0;
        let mut i = 0;
        while i < list.len() {
            bits |= list[i].bit();
            i += 1;
        }
        Positions(bits)
    }

    pub const fn contains(self, p: Position) -> bool {
        self.0 & p.bit() != 0
    }

    pub fn iter(self) -> impl Iterator<Item = Position> {
        Position::ALL.into_iter().filter(move |p| self.contains(*p))
    }
}

/// "May appear on any metadata field — a tool call, a list-tools response,
/// a content part, an open-session" (spec/004, cross-cutting).
const CROSS_CUTTING: Positions = Positions::of(&[
    Position::ToolDefinition,
    Position::ToolCall,
    Position::ListTools,
    Position::ContentPart,
    Position::OpenSession,
]);

/// The CBOR type a key's value must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CborType {
    Bool,
    /// Unsigned integer (major type 0).
    Uint,
    Text,
    /// Text, or a map of BCP 47 tag → text.
    LocalizedString,
    /// Array of byte strings, each a CBOR-encoded argument map.
    ArrayOfBstr,
    ArrayOfText,
    Map,
    /// Application-defined (reserved keys).
    Any,
}

impl CborType {
    pub const fn as_str(self) -> &'static str {
        match self {
            CborType::Bool => "bool",
            CborType::Uint => "uint",
            CborType::Text => "string",
            CborType::LocalizedString => "localized-string",
            CborType::ArrayOfBstr => "array of bstr",
            CborType::ArrayOfText => "array of string",
            CborType::Map => "map",
            CborType::Any => "any",
        }
    }
}

impl Rule {
    pub const fn as_str(self) -> &'static str {
        match self {
            Rule::None => "none",
            Rule::NonEmpty => "non-empty",
            Rule::SemVer => "semver",
            Rule::Localized => "localized-string",
            Rule::LanguageTag => "bcp47",
            Rule::Capabilities => "capability-declarations",
            Rule::Examples => "cbor-argument-maps",
            Rule::SessionOp => "open|close",
            Rule::Traceparent => "w3c-traceparent",
            Rule::Tracestate => "w3c-tracestate",
        }
    }
}

/// Which table of spec/004 a key comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    Component,
    ToolDefinition,
    CrossCutting,
    ContentPart,
    Authentication,
    Bridges,
}

/// One row of the key table.
#[derive(Clone, Copy, Debug)]
pub struct KeySpec {
    pub key: &'static str,
    pub ty: CborType,
    pub positions: Positions,
    pub section: Section,
    pub purpose: &'static str,
    /// A credential: allowed only in open-session args.
    pub credential: bool,
    /// Reserved for future use (`std:on-behalf-of`).
    pub reserved: bool,
    /// Required in its position (component `name`, `version`).
    pub required: bool,
    /// The value rule beyond the CBOR type.
    pub rule: Rule,
}

/// What a value must satisfy beyond its CBOR type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    None,
    /// Non-empty text.
    NonEmpty,
    /// A SemVer 2.0 version.
    SemVer,
    /// A localized string: text, or BCP 47 tag → text.
    Localized,
    /// A BCP 47 language tag.
    LanguageTag,
    /// Capability declarations (see `act::capabilities`).
    Capabilities,
    /// Each byte string is a CBOR argument map.
    Examples,
    /// `"open"` or `"close"`.
    SessionOp,
    /// A W3C traceparent.
    Traceparent,
    /// A W3C tracestate.
    Tracestate,
}

const fn key(
    key: &'static str,
    ty: CborType,
    positions: Positions,
    section: Section,
    purpose: &'static str,
) -> KeySpec {
    KeySpec {
        key,
        ty,
        positions,
        section,
        purpose,
        credential: false,
        reserved: false,
        required: false,
        rule: Rule::None,
    }
}

const COMPONENT: Positions = Positions::of(&[Position::Component]);
const TOOL_DEF: Positions = Positions::of(&[Position::ToolDefinition]);
const CONTENT: Positions = Positions::of(&[Position::ContentPart]);
const SESSION_ARGS: Positions = Positions::of(&[Position::OpenSessionArgs]);
/// `std:forward` travels with requests that pass through bridges.
const FORWARDED: Positions = Positions::of(&[
    Position::ToolCall,
    Position::ListTools,
    Position::OpenSession,
]);

/// Every key of spec/004, in spec order.
pub const KEYS: &[KeySpec] = &[
    KeySpec {
        required: true,
        ..KeySpec {
            rule: Rule::NonEmpty,
            ..key(
                "name",
                CborType::Text,
                COMPONENT,
                Section::Component,
                "Component name",
            )
        }
    },
    KeySpec {
        required: true,
        ..KeySpec {
            rule: Rule::SemVer,
            ..key(
                "version",
                CborType::Text,
                COMPONENT,
                Section::Component,
                "SemVer",
            )
        }
    },
    KeySpec {
        rule: Rule::Localized,
        ..key(
            "description",
            CborType::LocalizedString,
            COMPONENT,
            Section::Component,
            "Human-readable description",
        )
    },
    KeySpec {
        rule: Rule::LanguageTag,
        ..key(
            "default-language",
            CborType::Text,
            COMPONENT,
            Section::Component,
            "BCP 47 tag, used when a localized-string::plain carries no language",
        )
    },
    KeySpec {
        rule: Rule::Capabilities,
        ..key(
            "capabilities",
            CborType::Map,
            COMPONENT,
            Section::Component,
            "Capability declarations, keyed by capability id",
        )
    },
    key(
        "std:read-only",
        CborType::Bool,
        TOOL_DEF,
        Section::ToolDefinition,
        "Does not modify state. Drives MCP readOnlyHint",
    ),
    key(
        "std:idempotent",
        CborType::Bool,
        TOOL_DEF,
        Section::ToolDefinition,
        "Same arguments, same effect. Drives MCP idempotentHint",
    ),
    key(
        "std:destructive",
        CborType::Bool,
        TOOL_DEF,
        Section::ToolDefinition,
        "May irreversibly modify state. Drives MCP destructiveHint",
    ),
    key(
        "std:timeout-ms",
        CborType::Uint,
        TOOL_DEF,
        Section::ToolDefinition,
        "Suggested timeout; the host may override",
    ),
    KeySpec {
        rule: Rule::Localized,
        ..key(
            "std:usage-hints",
            CborType::LocalizedString,
            TOOL_DEF,
            Section::ToolDefinition,
            "When to use this tool, for an agent",
        )
    },
    KeySpec {
        rule: Rule::Localized,
        ..key(
            "std:anti-usage-hints",
            CborType::LocalizedString,
            TOOL_DEF,
            Section::ToolDefinition,
            "When not to use it",
        )
    },
    KeySpec {
        rule: Rule::Examples,
        ..key(
            "std:examples",
            CborType::ArrayOfBstr,
            TOOL_DEF,
            Section::ToolDefinition,
            "Example calls, as CBOR-encoded argument maps",
        )
    },
    key(
        "std:tags",
        CborType::ArrayOfText,
        TOOL_DEF,
        Section::ToolDefinition,
        "Categorisation",
    ),
    KeySpec {
        rule: Rule::SessionOp,
        ..key(
            "std:session-op",
            CborType::Text,
            TOOL_DEF,
            Section::ToolDefinition,
            "\"open\" / \"close\" — marks a tool synthesised by a transport adapter as a session lifecycle operation",
        )
    },
    key(
        "std:session-id",
        CborType::Text,
        CROSS_CUTTING,
        Section::CrossCutting,
        "Session issued by session-provider",
    ),
    KeySpec {
        rule: Rule::Traceparent,
        ..key(
            "std:traceparent",
            CborType::Text,
            CROSS_CUTTING,
            Section::CrossCutting,
            "W3C Trace Context traceparent",
        )
    },
    KeySpec {
        rule: Rule::Tracestate,
        ..key(
            "std:tracestate",
            CborType::Text,
            CROSS_CUTTING,
            Section::CrossCutting,
            "W3C Trace Context tracestate",
        )
    },
    key(
        "std:request-id",
        CborType::Text,
        CROSS_CUTTING,
        Section::CrossCutting,
        "Correlation id for logging",
    ),
    key(
        "std:progress-token",
        CborType::Text,
        CROSS_CUTTING,
        Section::CrossCutting,
        "MCP-compatible progress token",
    ),
    key(
        "std:agent-id",
        CborType::Text,
        CROSS_CUTTING,
        Section::CrossCutting,
        "Identifies the calling agent; informational, format implementation-defined",
    ),
    KeySpec {
        reserved: true,
        ..key(
            "std:on-behalf-of",
            CborType::Any,
            CROSS_CUTTING,
            Section::CrossCutting,
            "Reserved for future use; application-defined semantics, not to rely on across implementations",
        )
    },
    key(
        "std:progress",
        CborType::Uint,
        CONTENT,
        Section::ContentPart,
        "Units completed so far",
    ),
    key(
        "std:progress-total",
        CborType::Uint,
        CONTENT,
        Section::ContentPart,
        "Total units, if known",
    ),
    KeySpec {
        credential: true,
        ..key(
            "std:api-key",
            CborType::Text,
            SESSION_ARGS,
            Section::Authentication,
            "API key for the external service",
        )
    },
    KeySpec {
        credential: true,
        ..key(
            "std:bearer-token",
            CborType::Text,
            SESSION_ARGS,
            Section::Authentication,
            "OAuth2/OIDC access token, or a generic bearer token",
        )
    },
    KeySpec {
        credential: true,
        ..key(
            "std:username",
            CborType::Text,
            SESSION_ARGS,
            Section::Authentication,
            "Basic auth",
        )
    },
    KeySpec {
        credential: true,
        ..key(
            "std:password",
            CborType::Text,
            SESSION_ARGS,
            Section::Authentication,
            "Basic auth",
        )
    },
    key(
        "std:forward",
        CborType::Map,
        FORWARDED,
        Section::Bridges,
        "Opaque metadata blob passed to the next component in a chain; each bridge level unwraps one layer",
    ),
];

/// The row for `key`, if the table has one. A `match` (compiled to a
/// length switch and a comparison) rather than a scan: it runs once per key
/// of every map validated. `lookup_matches_table` keeps it in step.
pub fn lookup(key: &str) -> Option<&'static KeySpec> {
    let i = match key {
        "name" => 0,
        "version" => 1,
        "description" => 2,
        "default-language" => 3,
        "capabilities" => 4,
        "std:read-only" => 5,
        "std:idempotent" => 6,
        "std:destructive" => 7,
        "std:timeout-ms" => 8,
        "std:usage-hints" => 9,
        "std:anti-usage-hints" => 10,
        "std:examples" => 11,
        "std:tags" => 12,
        "std:session-op" => 13,
        "std:session-id" => 14,
        "std:traceparent" => 15,
        "std:tracestate" => 16,
        "std:request-id" => 17,
        "std:progress-token" => 18,
        "std:agent-id" => 19,
        "std:on-behalf-of" => 20,
        "std:progress" => 21,
        "std:progress-total" => 22,
        "std:api-key" => 23,
        "std:bearer-token" => 24,
        "std:username" => 25,
        "std:password" => 26,
        "std:forward" => 27,
        _ => return None,
    };
    KEYS.get(i)
}

/// One `std:` error kind with its meaning (spec/004, "Error kinds").
#[derive(Clone, Copy, Debug)]
pub struct ErrorKindSpec {
    pub kind: ErrorKind,
    pub meaning: &'static str,
}

/// The error kinds of spec/004, in spec order; the spellings come from
/// [`ErrorKind`] so there is one list.
pub const ERROR_KINDS: [ErrorKindSpec; 7] = [
    ErrorKindSpec {
        kind: ErrorKind::NotFound,
        meaning: "The named tool does not exist",
    },
    ErrorKindSpec {
        kind: ErrorKind::InvalidArgs,
        meaning: "Arguments or metadata failed schema validation",
    },
    ErrorKindSpec {
        kind: ErrorKind::Timeout,
        meaning: "Exceeded the declared or host-configured timeout",
    },
    ErrorKindSpec {
        kind: ErrorKind::CapabilityDenied,
        meaning: "The component used a capability that was not granted",
    },
    ErrorKindSpec {
        kind: ErrorKind::SessionNotFound,
        meaning: "A call referenced a session id the component does not recognise",
    },
    ErrorKindSpec {
        kind: ErrorKind::CredentialRequired,
        meaning: "A credential the component needs is absent from its profile",
    },
    ErrorKindSpec {
        kind: ErrorKind::Internal,
        meaning: "An unrecoverable error inside the component",
    },
];

/// The built-in capability identifiers of spec/004.
pub const CAPABILITY_IDS: [(&str, &str); 4] = [
    ("wasi:http", "Outbound HTTP"),
    (
        "wasi:filesystem",
        "Filesystem access, plus the guest-path topology (mount-root, mounts)",
    ),
    ("wasi:sockets", "Outbound TCP and UDP"),
    (
        "act:credentials",
        "The host credential store. A bare table; undeclared means denied",
    ),
];

/// The table as JSON, for `orpc-agent` and the bindings' drift tests.
pub fn table_json() -> serde_json::Value {
    let keys: Vec<serde_json::Value> = KEYS
        .iter()
        .map(|k| {
            serde_json::json!({
                "key": k.key,
                "type": k.ty.as_str(),
                "positions": k.positions.iter().map(Position::as_str).collect::<Vec<_>>(),
                "purpose": k.purpose,
                "credential": k.credential,
                "reserved": k.reserved,
                "required": k.required,
                "rule": k.rule.as_str(),
            })
        })
        .collect();
    let kinds: Vec<serde_json::Value> = ERROR_KINDS
        .iter()
        .map(|k| serde_json::json!({"kind": k.kind.as_str(), "meaning": k.meaning}))
        .collect();
    serde_json::json!({ "keys": keys, "errorKinds": kinds })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_complete_and_unique() {
        assert_eq!(KEYS.len(), 28);
        for (i, k) in KEYS.iter().enumerate() {
            assert!(
                KEYS[i + 1..].iter().all(|o| o.key != k.key),
                "duplicate {}",
                k.key
            );
            assert!(
                k.positions.iter().next().is_some(),
                "{} has no position",
                k.key
            );
            assert!(
                !k.positions.contains(Position::CredentialMaterial),
                "{}",
                k.key
            );
        }
        assert!(lookup("std:api-key").unwrap().credential);
        assert!(lookup("std:on-behalf-of").unwrap().reserved);
        assert!(
            lookup("std:session-id")
                .unwrap()
                .positions
                .contains(Position::ContentPart)
        );
        assert!(
            !lookup("std:read-only")
                .unwrap()
                .positions
                .contains(Position::ToolCall)
        );
        assert!(lookup("std:nope").is_none());
    }

    #[test]
    fn lookup_matches_table() {
        for k in KEYS {
            assert_eq!(lookup(k.key).map(|f| f.key), Some(k.key));
        }
    }

    #[test]
    fn error_kinds_match_the_core() {
        let ours: Vec<ErrorKind> = ERROR_KINDS.iter().map(|k| k.kind).collect();
        assert_eq!(ours, ErrorKind::ALL.to_vec());
    }

    #[test]
    fn positions_parse() {
        for p in Position::ALL {
            assert_eq!(Position::parse(p.as_str()), Some(p));
        }
        assert_eq!(Position::parse("tool"), None);
    }
}
