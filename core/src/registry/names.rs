//! Tool names per adapter.
//!
//! The rule, the same for both adapters: the capability id with every
//! character outside `[A-Za-z0-9_-]` replaced by `_` (so `orders.search`
//! becomes `orders_search`). `adapters.<adapter>.toolName` overrides it and is
//! used verbatim. Either way the name must be one the protocol accepts:
//!
//! - MCP: 1–128 characters of `[A-Za-z0-9_.-]`;
//! - AI SDK (OpenAI-compatible function names): `^[a-zA-Z0-9_-]{1,64}$`.

/// The two adapters that name tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Adapter {
    AiSdk,
    Mcp,
}

impl Adapter {
    pub const ALL: [Adapter; 2] = [Adapter::AiSdk, Adapter::Mcp];

    pub const fn as_str(self) -> &'static str {
        match self {
            Adapter::AiSdk => "aiSdk",
            Adapter::Mcp => "mcp",
        }
    }

    pub const fn max_len(self) -> usize {
        match self {
            Adapter::AiSdk => 64,
            Adapter::Mcp => 128,
        }
    }

    fn allows(self, c: char) -> bool {
        c.is_ascii_alphanumeric() || c == '_' || c == '-' || (self == Adapter::Mcp && c == '.')
    }

    /// Why the protocol would reject `name`, if it would.
    pub fn reject_reason(self, name: &str) -> Option<String> {
        if name.is_empty() {
            return Some("tool names must not be empty".into());
        }
        if let Some(bad) = name.chars().find(|c| !self.allows(*c)) {
            let allowed = match self {
                Adapter::AiSdk => "[A-Za-z0-9_-]",
                Adapter::Mcp => "[A-Za-z0-9_.-]",
            };
            return Some(format!(
                "{} tool names may only hold {allowed}; `{name}` holds {bad:?}",
                self.as_str()
            ));
        }
        // Every allowed character is ASCII: bytes are characters.
        let len = name.len();
        if len > self.max_len() {
            return Some(format!(
                "{} tool names are at most {} characters; `{name}` has {len}",
                self.as_str(),
                self.max_len()
            ));
        }
        None
    }
}

/// The default tool name of a capability id (documented rule above).
pub fn derive_tool_name(id: &str) -> String {
    let mut name = String::with_capacity(id.len());
    name.extend(id.chars().map(|c| {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            c
        } else {
            '_'
        }
    }));
    name
}

/// Why a capability id is unacceptable, if it is: ids are non-empty, at most
/// 256 characters, without whitespace or control characters.
pub fn id_reject_reason(id: &str) -> Option<String> {
    if id.is_empty() {
        return Some("capability ids must not be empty".into());
    }
    // Bytes bound characters from above: count characters only when needed.
    if id.len() > crate::meta::limits::MAX_ID_LEN
        && id.chars().count() > crate::meta::limits::MAX_ID_LEN
    {
        return Some(format!(
            "capability ids are at most {} characters",
            crate::meta::limits::MAX_ID_LEN
        ));
    }
    if let Some(bad) = id.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Some(format!("capability ids may not hold {bad:?}"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivation_and_protocol_rules() {
        assert_eq!(derive_tool_name("orders.search"), "orders_search");
        assert_eq!(derive_tool_name("a/b:c-d_e"), "a_b_c-d_e");
        assert!(Adapter::Mcp.reject_reason("orders.search").is_none());
        assert!(Adapter::AiSdk.reject_reason("orders.search").is_some());
        assert!(Adapter::AiSdk.reject_reason(&"a".repeat(64)).is_none());
        assert!(Adapter::AiSdk.reject_reason(&"a".repeat(65)).is_some());
        assert!(Adapter::Mcp.reject_reason(&"a".repeat(128)).is_none());
        assert!(Adapter::Mcp.reject_reason(&"a".repeat(129)).is_some());
        assert!(Adapter::Mcp.reject_reason("").is_some());
        assert!(Adapter::Mcp.reject_reason("é").is_some());
        assert!(id_reject_reason("a b").is_some());
        assert!(id_reject_reason("").is_some());
        assert!(id_reject_reason("orders.search").is_none());
    }
}
