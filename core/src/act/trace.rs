//! W3C Trace Context (https://www.w3.org/TR/trace-context-2/): validation of
//! `traceparent` and `tracestate`, and carrying both between HTTP headers,
//! MCP `_meta` and `std:` metadata (spec/004: transport adapters propagate
//! `std:traceparent` / `std:tracestate` to and from those places).
//!
//! An invalid `traceparent` is an error the caller decides about (the W3C
//! rule is to start a new trace); an invalid `tracestate` next to a valid
//! `traceparent` is dropped, as the W3C recommendation says.
//!
//! The `tracestate` grammar is Trace Context Level 2's (the current draft
//! and the `w3c/trace-context` test harness): a key is 1 to 256 of
//! `a-z 0-9 _ - * / @`, starting with a letter or digit; Level 1's
//! `tenant@system` key form with its 241/14 limits is gone. A repeated key
//! is a sender's mistake, not an invalid header: [`validate_tracestate`]
//! (what one may send) reports it, [`sanitize`] (what a receiver keeps)
//! keeps the leftmost entry of each key — the most recent position, since
//! updated entries move to the left — and drops the later ones.

use crate::frame::TraceContext;

/// Most list members a `tracestate` may hold (W3C §3.3.1.1).
pub const MAX_TRACESTATE_MEMBERS: usize = 32;

/// Why a trace header is invalid. Codes are stable for the vectors.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    #[error(
        "traceparent must be version-traceid-parentid-flags (55 characters for version 00), got {0} characters"
    )]
    Length(usize),
    #[error("traceparent field {0} is not lowercase hex of the right length")]
    Field(&'static str),
    #[error("traceparent version ff is forbidden")]
    Version,
    #[error("traceparent {0} is all zeros")]
    ZeroId(&'static str),
    #[error("tracestate has {0} members; at most {MAX_TRACESTATE_MEMBERS} are allowed")]
    TooManyMembers(usize),
    #[error("tracestate member {0:?} is not key=value with a valid key and value")]
    Member(String),
    #[error("tracestate key {0:?} appears twice")]
    DuplicateKey(String),
}

impl TraceError {
    pub const fn code(&self) -> &'static str {
        match self {
            TraceError::Length(_) => "TRACEPARENT_LENGTH",
            TraceError::Field(_) => "TRACEPARENT_FIELD",
            TraceError::Version => "TRACEPARENT_VERSION",
            TraceError::ZeroId(_) => "TRACEPARENT_ZERO_ID",
            TraceError::TooManyMembers(_) => "TRACESTATE_TOO_MANY_MEMBERS",
            TraceError::Member(_) => "TRACESTATE_MEMBER",
            TraceError::DuplicateKey(_) => "TRACESTATE_DUPLICATE_KEY",
        }
    }
}

fn lower_hex(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Validates a `traceparent` header value: lowercase hex fields of 2, 32,
/// 16 and 2 characters; version not `ff`; trace id and parent id not all
/// zeros. A version above `00` may carry more fields after a `-` (W3C
/// forward compatibility); version `00` is exactly 55 characters.
pub fn validate_traceparent(s: &str) -> Result<(), TraceError> {
    if s.len() < 55 || !s.is_ascii() {
        return Err(TraceError::Length(s.len()));
    }
    let (version, trace_id, parent_id, flags) = (&s[0..2], &s[3..35], &s[36..52], &s[53..55]);
    let dashes = [2, 35, 52].iter().all(|i| s.as_bytes()[*i] == b'-');
    if !dashes {
        return Err(TraceError::Length(s.len()));
    }
    if !lower_hex(version) {
        return Err(TraceError::Field("version"));
    }
    if version == "ff" {
        return Err(TraceError::Version);
    }
    if version == "00" && s.len() != 55 {
        return Err(TraceError::Length(s.len()));
    }
    if s.len() > 55 && s.as_bytes()[55] != b'-' {
        return Err(TraceError::Length(s.len()));
    }
    for (name, field) in [
        ("trace-id", trace_id),
        ("parent-id", parent_id),
        ("trace-flags", flags),
    ] {
        if !lower_hex(field) {
            return Err(TraceError::Field(name));
        }
    }
    if trace_id.bytes().all(|b| b == b'0') {
        return Err(TraceError::ZeroId("trace-id"));
    }
    if parent_id.bytes().all(|b| b == b'0') {
        return Err(TraceError::ZeroId("parent-id"));
    }
    Ok(())
}

fn key_char(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'-' | b'*' | b'/' | b'@')
}

/// W3C Level 2 §3.3.1.3.1: `key = ( lcalpha / DIGIT ) 0*255( keychar )`,
/// `keychar` being `a-z 0-9 _ - * / @` (so `@` may appear anywhere after
/// the first character, any number of times).
fn valid_key(k: &str) -> bool {
    let b = k.as_bytes();
    (1..=256).contains(&b.len())
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter().all(|c| key_char(*c))
}

/// W3C §3.3.1.3.2: up to 256 printable ASCII characters except `,` and
/// `=`, spaces allowed inside but not at the end.
fn valid_value(v: &str) -> bool {
    let b = v.as_bytes();
    (1..=256).contains(&b.len())
        && b.iter()
            .all(|c| (0x20..=0x7e).contains(c) && *c != b',' && *c != b'=')
        && b[b.len() - 1] != b' '
}

/// The non-empty members of a `tracestate` as `(key, member)`, in order,
/// each checked against the grammar; at most 32 of them (counted as
/// received, repeated keys included). Keys are not checked for uniqueness.
fn members(s: &str) -> Result<Vec<(&str, &str)>, TraceError> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for raw in s.split(',') {
        let m = raw.trim_matches([' ', '\t']);
        if m.is_empty() {
            continue;
        }
        let Some((k, v)) = m.split_once('=') else {
            return Err(TraceError::Member(m.to_owned()));
        };
        if !valid_key(k) || !valid_value(v) {
            return Err(TraceError::Member(m.to_owned()));
        }
        out.push((k, m));
        if out.len() > MAX_TRACESTATE_MEMBERS {
            return Err(TraceError::TooManyMembers(
                s.split(',')
                    .filter(|m| !m.trim_matches([' ', '\t']).is_empty())
                    .count(),
            ));
        }
    }
    Ok(out)
}

/// Validates a `tracestate` value as a sender must write it: at most 32
/// `key=value` members, comma-separated with optional spaces/tabs, keys
/// unique (W3C: adding an entry MUST NOT repeat a key). Empty members
/// (`a=1,,b=2`) are allowed and ignored, as the W3C grammar permits. A
/// receiver keeps a value with a repeated key: see [`sanitize`].
pub fn validate_tracestate(s: &str) -> Result<(), TraceError> {
    let members = members(s)?;
    for (i, (k, _)) in members.iter().enumerate() {
        if members[..i].iter().any(|(seen, _)| seen == k) {
            return Err(TraceError::DuplicateKey((*k).to_owned()));
        }
    }
    Ok(())
}

/// The `tracestate` a receiver keeps: `None` for a value that breaks the
/// grammar or the 32-member limit (the whole header is dropped, as the
/// harness requires at STRICT_LEVEL=2), or that holds no member; else the
/// value as received, trimmed, unless a key repeats: then only the leftmost
/// entry of each key is kept, the members joined with `,` (W3C: vendors MAY
/// discard duplicate keys; passing them on would make a strict downstream
/// parser drop the whole header).
fn keep_tracestate(s: &str) -> Option<String> {
    let s = s.trim_matches([' ', '\t']);
    let members = members(s).ok()?;
    if members.is_empty() {
        return None;
    }
    let repeated = members
        .iter()
        .enumerate()
        .any(|(i, (k, _))| members[..i].iter().any(|(seen, _)| seen == k));
    if !repeated {
        return Some(s.to_owned());
    }
    let mut kept: Vec<(&str, &str)> = Vec::with_capacity(members.len());
    for (k, m) in members {
        if !kept.iter().any(|(seen, _)| *seen == k) {
            kept.push((k, m));
        }
    }
    Some(kept.iter().map(|(_, m)| *m).collect::<Vec<_>>().join(","))
}

/// Validates a whole trace context: an error in `traceparent` is returned;
/// so is one in `tracestate` (use [`sanitize`] to drop a bad tracestate).
pub fn validate(tc: &TraceContext) -> Result<(), TraceError> {
    validate_traceparent(&tc.traceparent)?;
    if let Some(ts) = &tc.tracestate {
        validate_tracestate(ts)?;
    }
    Ok(())
}

/// Builds a context from raw values: `None` if there is no traceparent, an
/// error if it is invalid; an invalid or empty tracestate is dropped, and
/// one with a repeated key keeps the leftmost entry of each key. Every
/// receiving path (HTTP headers, MCP `_meta`, `std:` metadata, the
/// pipeline's frame) goes through here.
pub fn sanitize(
    traceparent: Option<&str>,
    tracestate: Option<&str>,
) -> Result<Option<TraceContext>, TraceError> {
    let Some(tp) = traceparent else {
        return Ok(None);
    };
    let tp = tp.trim_matches([' ', '\t']);
    validate_traceparent(tp)?;
    let tracestate = tracestate.and_then(keep_tracestate);
    Ok(Some(TraceContext {
        traceparent: tp.to_owned(),
        tracestate,
    }))
}

/// HTTP header names (lowercase, as HTTP/2 and HTTP/3 require).
pub const TRACEPARENT_HEADER: &str = "traceparent";
pub const TRACESTATE_HEADER: &str = "tracestate";

/// The headers to send for `tc`.
pub fn to_http_headers(tc: &TraceContext) -> Vec<(&'static str, String)> {
    let mut out = vec![(TRACEPARENT_HEADER, tc.traceparent.clone())];
    if let Some(ts) = &tc.tracestate {
        out.push((TRACESTATE_HEADER, ts.clone()));
    }
    out
}

/// Reads the context from request headers (names case-insensitive).
/// Several `tracestate` headers are joined with `,` (RFC 9110 §5.3); two
/// `traceparent` headers make the context invalid, as W3C requires.
pub fn from_http_headers<'a, I>(headers: I) -> Result<Option<TraceContext>, TraceError>
where
    I: IntoIterator<Item = (&'a str, &'a str)>,
{
    let mut parents: Vec<&str> = Vec::new();
    let mut states: Vec<&str> = Vec::new();
    for (name, value) in headers {
        if name.eq_ignore_ascii_case(TRACEPARENT_HEADER) {
            parents.push(value);
        } else if name.eq_ignore_ascii_case(TRACESTATE_HEADER) {
            states.push(value);
        }
    }
    if parents.len() > 1 {
        return Err(TraceError::Length(parents.iter().map(|p| p.len()).sum()));
    }
    let joined = states.join(",");
    sanitize(
        parents.first().copied(),
        (!states.is_empty()).then_some(joined.as_str()),
    )
}

/// Writes `tc` into an MCP request's `params._meta` object.
pub fn to_mcp_meta(tc: &TraceContext, meta: &mut serde_json::Map<String, serde_json::Value>) {
    meta.insert(TRACEPARENT_HEADER.into(), tc.traceparent.clone().into());
    if let Some(ts) = &tc.tracestate {
        meta.insert(TRACESTATE_HEADER.into(), ts.clone().into());
    }
}

/// Reads the context from an MCP `_meta` object.
pub fn from_mcp_meta(
    meta: &serde_json::Map<String, serde_json::Value>,
) -> Result<Option<TraceContext>, TraceError> {
    let get = |k: &str| meta.get(k).and_then(|v| v.as_str());
    sanitize(get(TRACEPARENT_HEADER), get(TRACESTATE_HEADER))
}

/// The `std:` metadata keys that carry the context (spec/004).
pub const STD_TRACEPARENT: &str = "std:traceparent";
pub const STD_TRACESTATE: &str = "std:tracestate";

/// Writes `tc` into `std:` metadata.
pub fn to_metadata(tc: &TraceContext, meta: &mut super::meta_map::MetaMap) {
    meta.insert(
        STD_TRACEPARENT,
        ciborium::Value::Text(tc.traceparent.clone()),
    );
    match &tc.tracestate {
        Some(ts) => meta.insert(STD_TRACESTATE, ciborium::Value::Text(ts.clone())),
        None => meta.remove(STD_TRACESTATE),
    };
}

/// Reads the context from `std:` metadata (non-text values count as absent).
pub fn from_metadata(meta: &super::meta_map::MetaMap) -> Result<Option<TraceContext>, TraceError> {
    let get = |k: &str| meta.get(k).and_then(|v| v.as_text());
    sanitize(get(STD_TRACEPARENT), get(STD_TRACESTATE))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TP: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn traceparent_rules() {
        assert!(validate_traceparent(TP).is_ok());
        let code = |s: &str| validate_traceparent(s).unwrap_err().code();
        assert_eq!(code(&TP.replace("00-4b", "ff-4b")), "TRACEPARENT_VERSION");
        assert_eq!(code(&TP.to_uppercase()), "TRACEPARENT_FIELD");
        assert_eq!(
            code("00-00000000000000000000000000000000-00f067aa0ba902b7-01"),
            "TRACEPARENT_ZERO_ID"
        );
        assert_eq!(
            code("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"),
            "TRACEPARENT_ZERO_ID"
        );
        assert_eq!(code(&TP[..54]), "TRACEPARENT_LENGTH");
        assert_eq!(code(&format!("{TP}-x")), "TRACEPARENT_LENGTH");
        assert_eq!(
            code("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g"),
            "TRACEPARENT_FIELD"
        );
        // A future version may append fields.
        assert!(validate_traceparent(&format!("{}-what-ever", TP.replacen("00", "01", 1))).is_ok());
    }

    #[test]
    fn tracestate_rules() {
        assert!(validate_tracestate("congo=t61rcWkgMzE, rojo=00f067aa0ba902b7").is_ok());
        assert!(validate_tracestate("tenant@vendor=x,,a=1 ").is_ok());
        let code = |s: &str| validate_tracestate(s).unwrap_err().code();
        assert_eq!(code("Upper=1"), "TRACESTATE_MEMBER");
        assert_eq!(code("a=1,a=2"), "TRACESTATE_DUPLICATE_KEY");
        assert_eq!(code("a=b=c"), "TRACESTATE_MEMBER");
        let many: Vec<String> = (0..33).map(|i| format!("k{i}=v")).collect();
        assert_eq!(code(&many.join(",")), "TRACESTATE_TOO_MANY_MEMBERS");
        assert!(validate_tracestate(&many[..32].join(",")).is_ok());
    }

    #[test]
    fn tracestate_keys_follow_the_level_2_grammar() {
        let ok = |k: &str| validate_tracestate(&format!("{k}=1")).is_ok();
        for k in [
            "foo@",
            "foo@@bar",
            "foo@bar@baz",
            "1special",
            &"z".repeat(256),
            &format!("{}@{}", "t".repeat(241), "v".repeat(14)),
            &format!("{}@v", "t".repeat(242)),
            &format!("t@{}", "v".repeat(15)),
        ] {
            assert!(ok(k), "{k:?} is a key");
        }
        for k in ["@foo", "foo.bar", "FOO", "foo ", "", "_a", &"z".repeat(257)] {
            assert!(!ok(k), "{k:?} is not a key");
        }
    }

    #[test]
    fn a_receiver_keeps_the_leftmost_entry_of_a_repeated_key() {
        let kept = |ts: &str| sanitize(Some(TP), Some(ts)).unwrap().unwrap().tracestate;
        assert_eq!(kept("foo=1,foo=2").as_deref(), Some("foo=1"));
        assert_eq!(kept("foo=1,foo=1").as_deref(), Some("foo=1"));
        assert_eq!(
            kept(" a=1 , b=2,\ta=3,, c=4 ").as_deref(),
            Some("a=1,b=2,c=4")
        );
        // No repeat: the value is kept as received (trimmed), OWS and all.
        assert_eq!(kept(" a=1 ,, b=2 ").as_deref(), Some("a=1 ,, b=2"));
        // No member at all: nothing to keep.
        assert_eq!(kept(" , ,\t"), None);
        // Repeats still count against the 32 members.
        let many = vec!["a=1"; 33].join(",");
        assert_eq!(kept(&many), None);
        // Two headers with the same key (joined by from_http_headers).
        let joined = from_http_headers([
            ("traceparent", TP),
            ("tracestate", "foo=1"),
            ("tracestate", "foo=2"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(joined.tracestate.as_deref(), Some("foo=1"));
        let tc = kept("foo=1,bar=2,foo=3").map(|ts| TraceContext {
            traceparent: TP.into(),
            tracestate: Some(ts),
        });
        let tc = tc.unwrap();
        assert!(validate(&tc).is_ok(), "what is kept may be sent");
        let mut meta = serde_json::Map::new();
        meta.insert("traceparent".into(), TP.into());
        meta.insert("tracestate".into(), "foo=1,bar=2,foo=3".into());
        assert_eq!(from_mcp_meta(&meta).unwrap(), Some(tc));
    }

    #[test]
    fn carried_through_headers_and_mcp_meta() {
        let tc = TraceContext {
            traceparent: TP.into(),
            tracestate: Some("a=1".into()),
        };
        let headers = to_http_headers(&tc);
        let back = from_http_headers(headers.iter().map(|(k, v)| (*k, v.as_str()))).unwrap();
        assert_eq!(back, Some(tc.clone()));
        let split = [
            ("TraceParent", TP),
            ("tracestate", "a=1"),
            ("TRACESTATE", "b=2"),
        ];
        assert_eq!(
            from_http_headers(split)
                .unwrap()
                .unwrap()
                .tracestate
                .as_deref(),
            Some("a=1,b=2")
        );
        let bad_state = [("traceparent", TP), ("tracestate", "A=1")];
        assert_eq!(
            from_http_headers(bad_state).unwrap().unwrap().tracestate,
            None
        );
        assert_eq!(from_http_headers([("x", "y")]).unwrap(), None);
        assert!(from_http_headers([("traceparent", TP), ("traceparent", TP)]).is_err());
        let mut meta = serde_json::Map::new();
        to_mcp_meta(&tc, &mut meta);
        assert_eq!(meta["traceparent"], TP);
        assert_eq!(from_mcp_meta(&meta).unwrap(), Some(tc.clone()));
        let mut std_meta = crate::act::MetaMap::new();
        to_metadata(&tc, &mut std_meta);
        assert_eq!(from_metadata(&std_meta).unwrap(), Some(tc));
        assert!(
            std_meta
                .validate(crate::act::Position::ToolCall, Default::default())
                .is_empty()
        );
    }
}
