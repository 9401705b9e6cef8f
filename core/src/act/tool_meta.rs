//! Tool-definition metadata ↔ AgentMeta and portable descriptors, tool hints
//! → MCP annotations, and the reserved session tools.
//!
//! The mapping (DESIGN §8): sideEffect none/read → `std:read-only`,
//! destructive → `std:destructive`, `idempotent` → `std:idempotent`,
//! `timeoutMs` → `std:timeout-ms`, `tags` → `std:tags`, `description` →
//! `std:usage-hints`. The way back never *infers* a side effect the hints do
//! not state (AgentMeta's rule): only read-only → read and destructive →
//! destructive are derivable.

use ciborium::Value as Cbor;
use serde_json::{Map, Value as Json};

use super::json_view;
use super::keys::Position;
use super::localized::Localized;
use super::meta_map::{MetaMap, Problem, ValidateOptions};
use crate::descriptor::{Descriptor, mcp_annotations};
use crate::meta::{AgentMeta, SideEffect};

/// The typed view of a tool-definition metadata map.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolHints {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub timeout_ms: Option<u64>,
    pub usage_hints: Option<Localized>,
    pub anti_usage_hints: Option<Localized>,
    pub tags: Vec<String>,
    /// Example calls, each an argument map.
    pub examples: Vec<MetaMap>,
    pub session_op: Option<SessionOp>,
}

/// `std:session-op`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionOp {
    Open,
    Close,
}

impl SessionOp {
    pub const fn as_str(self) -> &'static str {
        match self {
            SessionOp::Open => "open",
            SessionOp::Close => "close",
        }
    }

    pub fn parse(s: &str) -> Option<SessionOp> {
        match s {
            "open" => Some(SessionOp::Open),
            "close" => Some(SessionOp::Close),
            _ => None,
        }
    }
}

impl ToolHints {
    /// What a capability's metadata says as tool hints.
    pub fn from_agent_meta(m: &AgentMeta) -> ToolHints {
        ToolHints {
            read_only: Some(m.side_effect.is_read_only()),
            destructive: Some(m.side_effect == SideEffect::Destructive),
            idempotent: m.idempotent,
            timeout_ms: m.timeout_ms,
            usage_hints: Some(Localized::Plain(m.description.clone())),
            anti_usage_hints: None,
            tags: m.tags.clone(),
            examples: Vec::new(),
            session_op: None,
        }
    }

    /// The same from a descriptor (its timeout is the resolved one).
    pub fn from_descriptor(d: &Descriptor) -> ToolHints {
        ToolHints {
            read_only: Some(d.side_effect.is_read_only()),
            destructive: Some(d.side_effect == SideEffect::Destructive),
            idempotent: Some(d.idempotent),
            timeout_ms: Some(d.timeout_ms),
            usage_hints: Some(Localized::Plain(d.description.clone())),
            tags: d.tags.clone(),
            ..ToolHints::default()
        }
    }

    /// Validates `m` as tool-definition metadata and reads it. Foreign keys
    /// are ignored here (they stay in the map); any error aborts.
    pub fn from_meta_map(m: &MetaMap) -> Result<ToolHints, Vec<Problem>> {
        let problems: Vec<Problem> = m
            .validate(Position::ToolDefinition, ValidateOptions { strict: true })
            .into_iter()
            .filter(Problem::is_error)
            .collect();
        if !problems.is_empty() {
            return Err(problems);
        }
        // Validation guarantees every type below, so getters cannot fail;
        // `ok().flatten()` keeps this total anyway.
        Ok(ToolHints {
            read_only: m.get_bool("std:read-only").ok().flatten(),
            destructive: m.get_bool("std:destructive").ok().flatten(),
            idempotent: m.get_bool("std:idempotent").ok().flatten(),
            timeout_ms: m.get_uint("std:timeout-ms").ok().flatten(),
            usage_hints: m.get_localized("std:usage-hints").ok().flatten(),
            anti_usage_hints: m.get_localized("std:anti-usage-hints").ok().flatten(),
            tags: m
                .get_text_array("std:tags")
                .ok()
                .flatten()
                .map(|t| t.into_iter().map(str::to_owned).collect())
                .unwrap_or_default(),
            examples: m
                .get_examples("std:examples")
                .ok()
                .flatten()
                .unwrap_or_default(),
            session_op: m
                .get_text("std:session-op")
                .ok()
                .flatten()
                .and_then(SessionOp::parse),
        })
    }

    /// The tool-definition metadata map. Absent hints are left out.
    pub fn to_meta_map(&self) -> MetaMap {
        let mut m = MetaMap::new();
        let mut put_bool = |k: &str, v: Option<bool>| {
            if let Some(b) = v {
                m.insert(k, Cbor::Bool(b));
            }
        };
        put_bool("std:read-only", self.read_only);
        put_bool("std:destructive", self.destructive);
        put_bool("std:idempotent", self.idempotent);
        if let Some(t) = self.timeout_ms {
            m.insert("std:timeout-ms", Cbor::Integer(t.into()));
        }
        if let Some(u) = &self.usage_hints {
            m.insert("std:usage-hints", u.to_cbor());
        }
        if let Some(u) = &self.anti_usage_hints {
            m.insert("std:anti-usage-hints", u.to_cbor());
        }
        if !self.tags.is_empty() {
            m.insert(
                "std:tags",
                Cbor::Array(self.tags.iter().map(|t| Cbor::Text(t.clone())).collect()),
            );
        }
        if !self.examples.is_empty() {
            // An example that fails to encode (a duplicate key) is left out
            // rather than written non-deterministically.
            let ex = self
                .examples
                .iter()
                .filter_map(|e| e.encode().ok())
                .map(Cbor::Bytes)
                .collect();
            m.insert("std:examples", Cbor::Array(ex));
        }
        if let Some(op) = self.session_op {
            m.insert("std:session-op", Cbor::Text(op.as_str().into()));
        }
        m
    }

    /// The side effect the hints state, if they state one.
    pub fn side_effect(&self) -> Option<SideEffect> {
        if self.destructive == Some(true) {
            Some(SideEffect::Destructive)
        } else if self.read_only == Some(true) {
            Some(SideEffect::Read)
        } else {
            None
        }
    }

    /// Writes the hints back into `m`: idempotent, timeout, tags and
    /// description always; the side effect only where the hints state it.
    pub fn apply_to(&self, m: &mut AgentMeta) {
        if let Some(se) = self.side_effect() {
            // none and read both travel as read-only; keep `none` if declared.
            if !(se == SideEffect::Read && m.side_effect.is_read_only()) {
                m.side_effect = se;
            }
        }
        if self.idempotent.is_some() {
            m.idempotent = self.idempotent;
        }
        if self.timeout_ms.is_some() {
            m.timeout_ms = self.timeout_ms;
        }
        if !self.tags.is_empty() {
            m.tags = self.tags.clone();
        }
        if let Some(u) = &self.usage_hints {
            m.description = u.resolve(None, None).text.to_owned();
        }
    }

    /// MCP annotations for a tool known only by its hints (a component's
    /// tool, not a registered capability — those use
    /// [`crate::descriptor::mcp_annotations`]). Same rules: the
    /// idempotent hint also holds for read-only tools, and the destructive
    /// hint is stated `false` for read-only tools since MCP defaults to true.
    pub fn mcp_annotations(&self) -> Map<String, Json> {
        let mut out = Map::new();
        let read_only = self.read_only == Some(true);
        if let Some(r) = self.read_only {
            out.insert("readOnlyHint".into(), r.into());
        }
        if let Some(d) = self.destructive.or(read_only.then_some(false)) {
            out.insert("destructiveHint".into(), d.into());
        }
        if let Some(i) = self
            .idempotent
            .map(|i| i || read_only)
            .or(read_only.then_some(true))
        {
            out.insert("idempotentHint".into(), i.into());
        }
        out
    }
}

/// Key of the descriptor's `std:` tool-definition map inside its CBOR form.
const DESCRIPTOR_METADATA: &str = "metadata";

/// Why CBOR is not a descriptor.
#[derive(Debug, thiserror::Error)]
pub enum DescriptorCborError {
    #[error(transparent)]
    Decode(#[from] super::decode::DecodeError),
    #[error("descriptor CBOR: {0}")]
    Shape(String),
    #[error("descriptor metadata: {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Metadata(Vec<Problem>),
}

/// A descriptor as CBOR: its JSON fields (DESIGN §7) as a CBOR map, plus
/// `metadata`, the `std:` tool-definition map derived from them, so a
/// reader that knows only spec/004 can still present the tool.
pub fn descriptor_to_cbor(d: &Descriptor) -> Result<Vec<u8>, super::deterministic::EncodeError> {
    let mut m =
        MetaMap::from_value(&json_view::from_json(&d.to_json()).unwrap_or(Cbor::Map(vec![])))
            .unwrap_or_default();
    m.insert(
        DESCRIPTOR_METADATA,
        ToolHints::from_descriptor(d).to_meta_map().to_value(),
    );
    m.encode()
}

/// Reads a descriptor from CBOR, checking that its `std:` metadata is valid
/// and agrees with its fields.
pub fn descriptor_from_cbor(bytes: &[u8]) -> Result<Descriptor, DescriptorCborError> {
    let mut m = MetaMap::decode(bytes)?;
    let meta = m.remove(DESCRIPTOR_METADATA);
    let d: Descriptor = serde_json::from_value(json_view::to_json(&m.to_value()))
        .map_err(|e| DescriptorCborError::Shape(e.to_string()))?;
    if let Some(meta) = meta {
        let meta = MetaMap::from_value(&meta)?;
        let hints = ToolHints::from_meta_map(&meta).map_err(DescriptorCborError::Metadata)?;
        let expected = ToolHints::from_descriptor(&d);
        let agree = hints.read_only == expected.read_only
            && hints.destructive == expected.destructive
            && hints.idempotent == expected.idempotent
            && hints.timeout_ms == expected.timeout_ms;
        if !agree {
            return Err(DescriptorCborError::Shape(
                "std: metadata disagrees with the descriptor's fields".into(),
            ));
        }
    }
    Ok(d)
}

/// The reserved session tool names (spec/004, "Reserved tool names").
pub const OPEN_SESSION: &str = "open_session";
pub const CLOSE_SESSION: &str = "close_session";
/// What the host appends to its own session tool on a collision.
pub const RESERVED_SUFFIX: &str = "__act";

/// The names the host uses for its synthesised session tools.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionTools {
    pub open: String,
    pub close: String,
    /// One message per renamed tool.
    pub warnings: Vec<String>,
}

/// Picks the names of the synthesised `open_session` / `close_session`
/// tools of a session-provider component. A component tool with the same
/// name keeps its name; the host's own gets `__act` appended (again, until
/// it is free) and a warning says so.
pub fn session_tool_names<S: AsRef<str>>(component_tools: &[S]) -> SessionTools {
    let taken = |n: &str| component_tools.iter().any(|t| t.as_ref() == n);
    let mut warnings = Vec::new();
    let mut pick = |base: &str| {
        let mut name = base.to_owned();
        while taken(&name) {
            name.push_str(RESERVED_SUFFIX);
        }
        if name != base {
            warnings.push(format!(
                "the component defines a tool named {base:?}, which is reserved for session-provider components; the host's session tool is {name:?}"
            ));
        }
        name
    };
    let open = pick(OPEN_SESSION);
    let close = pick(CLOSE_SESSION);
    SessionTools {
        open,
        close,
        warnings,
    }
}

/// The tool-definition metadata of a synthesised session tool.
pub fn session_tool_metadata(op: SessionOp) -> MetaMap {
    let hints = ToolHints {
        read_only: Some(false),
        destructive: Some(false),
        idempotent: Some(op == SessionOp::Close),
        session_op: Some(op),
        usage_hints: Some(Localized::Plain(match op {
            SessionOp::Open => {
                "Open a session; pass credentials here, never in per-call metadata.".into()
            }
            SessionOp::Close => "Close a session opened with the open-session tool.".into(),
        })),
        ..ToolHints::default()
    };
    hints.to_meta_map()
}

/// The MCP annotations of a registered capability: the descriptor module's
/// rules, reused so the two cannot drift.
pub fn capability_mcp_annotations(m: &AgentMeta) -> Map<String, Json> {
    mcp_annotations(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(side_effect: &str, extra: Json) -> AgentMeta {
        let mut v = serde_json::json!({
            "description": "Refund an order",
            "expose": {"mcp": true},
            "sideEffect": side_effect,
            "risk": "high",
        });
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        crate::meta::parse_agent_meta("orders.refund", &v).unwrap()
    }

    #[test]
    fn agent_meta_both_ways() {
        let m = meta(
            "destructive",
            serde_json::json!({"idempotent": true, "timeoutMs": 5000, "tags": ["billing"]}),
        );
        let hints = ToolHints::from_agent_meta(&m);
        let map = hints.to_meta_map();
        assert_eq!(map.get_bool("std:destructive").unwrap(), Some(true));
        assert_eq!(map.get_bool("std:read-only").unwrap(), Some(false));
        assert_eq!(map.get_uint("std:timeout-ms").unwrap(), Some(5000));
        assert!(
            map.validate(Position::ToolDefinition, ValidateOptions::default())
                .is_empty()
        );
        let back =
            ToolHints::from_meta_map(&MetaMap::decode(&map.encode().unwrap()).unwrap()).unwrap();
        assert_eq!(back, hints);
        let mut target = meta("write", serde_json::json!({}));
        back.apply_to(&mut target);
        assert_eq!(target.side_effect, SideEffect::Destructive);
        assert_eq!(
            (target.idempotent, target.timeout_ms),
            (Some(true), Some(5000))
        );
        assert_eq!(target.tags, ["billing"]);
        // Hints that state no side effect change none.
        let mut w = meta("external", serde_json::json!({}));
        ToolHints {
            read_only: Some(false),
            destructive: Some(false),
            ..ToolHints::default()
        }
        .apply_to(&mut w);
        assert_eq!(w.side_effect, SideEffect::External);
    }

    #[test]
    fn hints_to_mcp_agree_with_descriptor_rules() {
        for se in ["none", "read", "write", "destructive"] {
            for idem in [Json::Bool(true), Json::Bool(false)] {
                let m = meta(se, serde_json::json!({"idempotent": idem}));
                let ours = ToolHints::from_agent_meta(&m).mcp_annotations();
                let theirs = capability_mcp_annotations(&m);
                for k in ["readOnlyHint", "destructiveHint", "idempotentHint"] {
                    assert_eq!(ours.get(k), theirs.get(k), "{se} {idem} {k}");
                }
            }
        }
    }

    #[test]
    fn session_tools_are_suffixed_on_collision() {
        let s = session_tool_names(&["search", "close_session"]);
        assert_eq!(s.open, "open_session");
        assert_eq!(s.close, "close_session__act");
        assert_eq!(s.warnings.len(), 1);
        let s = session_tool_names(&["open_session", "open_session__act"]);
        assert_eq!(s.open, "open_session__act__act");
        assert!(session_tool_names::<&str>(&[]).warnings.is_empty());
        let m = session_tool_metadata(SessionOp::Open);
        assert_eq!(m.get_text("std:session-op").unwrap(), Some("open"));
        assert!(
            m.validate(Position::ToolDefinition, ValidateOptions::default())
                .is_empty()
        );
    }
}
