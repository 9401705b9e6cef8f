//! Capability declarations (spec/004 `std.capabilities`) and the decision
//! declaration × host grant × request → allowed, or denied with a reason.
//!
//! Three rules hold (spec/004, semantic classes): a class absent from the
//! declaration is denied and no grant widens it; a declaration names a
//! concrete class (`db:*` is rejected — a reader could not tell what the
//! artifact may ask for); a grant narrows, never widens: a request must
//! satisfy the declaration's `allow` list *and* the grant's.

use ciborium::Value as Cbor;

use super::localized::Localized;
use super::meta_map::value_kind;

/// Built-in ids whose parameters the host understands.
pub const WASI_HTTP: &str = "wasi:http";
pub const WASI_FILESYSTEM: &str = "wasi:filesystem";
pub const WASI_SOCKETS: &str = "wasi:sockets";
pub const ACT_CREDENTIALS: &str = "act:credentials";

/// Why a declaration is invalid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DeclarationError {
    #[error("capabilities must be a map keyed by capability id, found {0}")]
    NotAMap(&'static str),
    #[error("capability id {0:?} is not namespace:name")]
    BadId(String),
    #[error("capability {0:?} uses a wildcard; a declaration must name a concrete class")]
    Wildcard(String),
    #[error("capability {0:?} is declared twice")]
    Duplicate(String),
    #[error("capability {id:?}: {what}")]
    BadParameter { id: String, what: String },
}

impl DeclarationError {
    pub const fn code(&self) -> &'static str {
        match self {
            DeclarationError::NotAMap(_) => "NOT_A_MAP",
            DeclarationError::BadId(_) => "BAD_CAPABILITY_ID",
            DeclarationError::Wildcard(_) => "WILDCARD_CLASS",
            DeclarationError::Duplicate(_) => "DUPLICATE_CAPABILITY",
            DeclarationError::BadParameter { .. } => "BAD_PARAMETER",
        }
    }
}

/// One `allow` entry: every field must match the request's parameter of
/// the same name. A text pattern may use `*` for any run of characters.
pub type Constraint = Vec<(String, Cbor)>;

/// One declared capability class.
#[derive(Clone, Debug, PartialEq)]
pub struct Declaration {
    pub id: String,
    pub description: Option<Localized>,
    /// Empty: the class is declared without limits.
    pub allow: Vec<Constraint>,
    /// `wasi:filesystem`: the guest path all mounts live under.
    pub mount_root: Option<String>,
    /// `wasi:filesystem`: guest paths exposed to the component.
    pub mounts: Vec<String>,
}

/// All classes a component declares.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Declarations {
    pub classes: Vec<Declaration>,
}

fn bad(id: &str, what: impl Into<String>) -> DeclarationError {
    DeclarationError::BadParameter {
        id: id.to_owned(),
        what: what.into(),
    }
}

/// `namespace:name`, both non-empty, no wildcard, no whitespace.
fn check_id(id: &str) -> Result<(), DeclarationError> {
    if id.contains('*') {
        return Err(DeclarationError::Wildcard(id.to_owned()));
    }
    match id.split_once(':') {
        Some((ns, name))
            if !ns.is_empty() && !name.is_empty() && !id.chars().any(char::is_whitespace) =>
        {
            Ok(())
        }
        _ => Err(DeclarationError::BadId(id.to_owned())),
    }
}

fn read_allow(id: &str, v: &Cbor) -> Result<Vec<Constraint>, DeclarationError> {
    let items = v.as_array().ok_or_else(|| {
        bad(
            id,
            format!("allow must be an array of tables, found {}", value_kind(v)),
        )
    })?;
    items
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let entries = c
                .as_map()
                .ok_or_else(|| bad(id, format!("allow[{i}] must be a table")))?;
            entries
                .iter()
                .map(|(k, v)| {
                    let k = k
                        .as_text()
                        .ok_or_else(|| bad(id, format!("allow[{i}] has a non-text field name")))?;
                    if matches!(v, Cbor::Array(_) | Cbor::Map(_)) {
                        return Err(bad(id, format!("allow[{i}].{k} must be a scalar")));
                    }
                    Ok((k.to_owned(), v.clone()))
                })
                .collect()
        })
        .collect()
}

fn absolute(id: &str, what: &str, v: &Cbor) -> Result<String, DeclarationError> {
    match v.as_text() {
        Some(p) if p.starts_with('/') => Ok(p.to_owned()),
        _ => Err(bad(id, format!("{what} must be an absolute guest path"))),
    }
}

impl Declarations {
    /// Reads the `capabilities` map (CBOR, or TOML converted to CBOR).
    pub fn from_cbor(v: &Cbor) -> Result<Declarations, DeclarationError> {
        let entries = v.as_map().ok_or(DeclarationError::NotAMap(value_kind(v)))?;
        let mut classes: Vec<Declaration> = Vec::with_capacity(entries.len());
        for (k, body) in entries {
            let id = k
                .as_text()
                .ok_or(DeclarationError::BadId(format!("{k:?}")))?;
            check_id(id)?;
            if classes.iter().any(|c| c.id == id) {
                return Err(DeclarationError::Duplicate(id.to_owned()));
            }
            let params = body
                .as_map()
                .ok_or_else(|| bad(id, "must be a table (possibly empty)"))?;
            let mut d = Declaration {
                id: id.to_owned(),
                description: None,
                allow: Vec::new(),
                mount_root: None,
                mounts: Vec::new(),
            };
            for (pk, pv) in params {
                let pk = pk
                    .as_text()
                    .ok_or_else(|| bad(id, "parameter names are text"))?;
                match (pk, id) {
                    ("description", _) => {
                        d.description = Some(
                            Localized::from_cbor(pv)
                                .map_err(|e| bad(id, format!("description: {e}")))?,
                        );
                    }
                    ("allow", _) => d.allow = read_allow(id, pv)?,
                    ("mount-root", WASI_FILESYSTEM) => {
                        d.mount_root = Some(absolute(id, "mount-root", pv)?)
                    }
                    ("mounts", WASI_FILESYSTEM) => {
                        let list = pv
                            .as_array()
                            .ok_or_else(|| bad(id, "mounts must be an array of guest paths"))?;
                        d.mounts = list
                            .iter()
                            .map(|m| absolute(id, "each mount", m))
                            .collect::<Result<_, _>>()?;
                    }
                    (other, _) => return Err(bad(id, format!("unknown parameter {other:?}"))),
                }
            }
            if let Some(root) = &d.mount_root {
                let under = |m: &String| {
                    m == root || m.starts_with(&format!("{}/", root.trim_end_matches('/')))
                };
                if let Some(m) = d.mounts.iter().find(|m| !under(m)) {
                    return Err(bad(
                        id,
                        format!("mount {m:?} is outside mount-root {root:?}"),
                    ));
                }
            }
            classes.push(d);
        }
        Ok(Declarations { classes })
    }

    pub fn get(&self, id: &str) -> Option<&Declaration> {
        self.classes.iter().find(|c| c.id == id)
    }
}

/// What the host operator granted for one class. `allow: None` grants the
/// class as declared; a list narrows it further.
#[derive(Clone, Debug, PartialEq)]
pub struct Grant {
    pub id: String,
    pub allow: Option<Vec<Constraint>>,
}

impl Grant {
    /// Reads the host's grants as a map keyed by class id, in the same
    /// shape a declaration has: `{}` grants the class as declared, `{allow:
    /// [...]}` narrows it (an empty list admits nothing). Ids follow the
    /// declaration's rules (no wildcard: a grant names what it grants).
    pub fn list_from_cbor(v: &Cbor) -> Result<Vec<Grant>, DeclarationError> {
        let entries = v.as_map().ok_or(DeclarationError::NotAMap(value_kind(v)))?;
        let mut grants: Vec<Grant> = Vec::with_capacity(entries.len());
        for (k, body) in entries {
            let id = k
                .as_text()
                .ok_or(DeclarationError::BadId(format!("{k:?}")))?;
            check_id(id)?;
            if grants.iter().any(|g| g.id == id) {
                return Err(DeclarationError::Duplicate(id.to_owned()));
            }
            let params = body
                .as_map()
                .ok_or_else(|| bad(id, "a grant must be a table (possibly empty)"))?;
            let mut allow = None;
            for (pk, pv) in params {
                match pk.as_text() {
                    Some("allow") => allow = Some(read_allow(id, pv)?),
                    Some(other) => {
                        return Err(bad(id, format!("unknown grant parameter {other:?}")));
                    }
                    None => return Err(bad(id, "parameter names are text")),
                }
            }
            grants.push(Grant {
                id: id.to_owned(),
                allow,
            });
        }
        Ok(grants)
    }
}

/// One use of a capability: the class and the parameters of the action
/// (e.g. `key = "test_users"` for `db:drop`).
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub id: String,
    pub params: Vec<(String, Cbor)>,
}

/// Why a request was denied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Denial {
    /// The component never declared the class.
    Undeclared,
    /// Declared, but the host did not grant it.
    NotGranted,
    /// Outside every `allow` entry of the declaration.
    OutsideDeclaration,
    /// Outside every `allow` entry of the grant.
    OutsideGrant,
}

impl Denial {
    pub const fn code(&self) -> &'static str {
        match self {
            Denial::Undeclared => "UNDECLARED",
            Denial::NotGranted => "NOT_GRANTED",
            Denial::OutsideDeclaration => "OUTSIDE_DECLARATION",
            Denial::OutsideGrant => "OUTSIDE_GRANT",
        }
    }
}

/// The outcome of [`decide`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Allowed,
    Denied { reason: Denial, message: String },
}

/// `*` matches any run of characters; everything else literally.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

fn satisfies(c: &Constraint, params: &[(String, Cbor)]) -> bool {
    c.iter().all(|(field, pattern)| {
        let Some((_, value)) = params.iter().find(|(k, _)| k == field) else {
            return false;
        };
        match (pattern, value) {
            (Cbor::Text(p), Cbor::Text(v)) => glob_match(p, v),
            (p, v) => p == v,
        }
    })
}

fn within(list: &[Constraint], params: &[(String, Cbor)]) -> bool {
    list.is_empty() || list.iter().any(|c| satisfies(c, params))
}

/// Declaration × grant × request. Both `allow` lists must admit the
/// request, so a grant broader than the declaration changes nothing.
pub fn decide(declarations: &Declarations, grants: &[Grant], request: &Request) -> Decision {
    let deny = |reason: Denial, message: String| Decision::Denied { reason, message };
    let Some(decl) = declarations.get(&request.id) else {
        return deny(
            Denial::Undeclared,
            format!("{} is not declared by the component", request.id),
        );
    };
    let Some(grant) = grants.iter().find(|g| g.id == request.id) else {
        return deny(
            Denial::NotGranted,
            format!("{} is declared but not granted by the host", request.id),
        );
    };
    if !within(&decl.allow, &request.params) {
        return deny(
            Denial::OutsideDeclaration,
            format!("the request is outside what {} declares", request.id),
        );
    }
    if let Some(allow) = &grant.allow {
        // An explicitly empty grant list admits nothing.
        if allow.is_empty() || !allow.iter().any(|c| satisfies(c, &request.params)) {
            return deny(
                Denial::OutsideGrant,
                format!(
                    "the request is outside what the host granted for {}",
                    request.id
                ),
            );
        }
    }
    Decision::Allowed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Cbor {
        Cbor::Text(s.into())
    }

    fn map(entries: Vec<(&str, Cbor)>) -> Cbor {
        Cbor::Map(entries.into_iter().map(|(k, v)| (t(k), v)).collect())
    }

    fn decls() -> Declarations {
        Declarations::from_cbor(&map(vec![
            ("wasi:http", map(vec![])),
            (
                "db:drop",
                map(vec![
                    ("description", t("Destructive operations (DROP, TRUNCATE).")),
                    ("allow", Cbor::Array(vec![map(vec![("key", t("test_*"))])])),
                ]),
            ),
            ("db:ddl", map(vec![])),
        ]))
        .unwrap()
    }

    fn req(id: &str, key: &str) -> Request {
        Request {
            id: id.into(),
            params: vec![("key".into(), t(key))],
        }
    }

    fn reason(d: Decision) -> &'static str {
        match d {
            Decision::Allowed => "ALLOWED",
            Decision::Denied { reason, .. } => reason.code(),
        }
    }

    #[test]
    fn wildcards_and_bad_ids_are_rejected() {
        let e = Declarations::from_cbor(&map(vec![("db:*", map(vec![]))])).unwrap_err();
        assert_eq!(e.code(), "WILDCARD_CLASS");
        assert_eq!(
            Declarations::from_cbor(&map(vec![("db", map(vec![]))]))
                .unwrap_err()
                .code(),
            "BAD_CAPABILITY_ID"
        );
        let fs = map(vec![
            ("mount-root", t("/data")),
            ("mounts", Cbor::Array(vec![t("/etc")])),
        ]);
        assert_eq!(
            Declarations::from_cbor(&map(vec![("wasi:filesystem", fs)]))
                .unwrap_err()
                .code(),
            "BAD_PARAMETER"
        );
        let fs = map(vec![
            ("mount-root", t("/data")),
            ("mounts", Cbor::Array(vec![t("/data/in")])),
        ]);
        let d = Declarations::from_cbor(&map(vec![("wasi:filesystem", fs)])).unwrap();
        assert_eq!(d.classes[0].mounts, ["/data/in"]);
        let e = Declarations::from_cbor(&map(vec![(
            "wasi:http",
            map(vec![("mounts", Cbor::Array(vec![]))]),
        )]));
        assert_eq!(e.unwrap_err().code(), "BAD_PARAMETER");
    }

    #[test]
    fn declaration_grant_request() {
        let d = decls();
        let all = |id: &str| Grant {
            id: id.into(),
            allow: None,
        };
        assert_eq!(
            reason(decide(&d, &[all("db:drop")], &req("db:drop", "test_users"))),
            "ALLOWED"
        );
        assert_eq!(
            reason(decide(&d, &[all("db:drop")], &req("db:drop", "prod_users"))),
            "OUTSIDE_DECLARATION"
        );
        // A grant broader than the declaration does not widen it.
        let broad = Grant {
            id: "db:drop".into(),
            allow: Some(vec![vec![("key".into(), t("*"))]]),
        };
        assert_eq!(
            reason(decide(&d, &[broad], &req("db:drop", "prod_users"))),
            "OUTSIDE_DECLARATION"
        );
        let narrow = Grant {
            id: "db:drop".into(),
            allow: Some(vec![vec![("key".into(), t("test_a*"))]]),
        };
        assert_eq!(
            reason(decide(
                &d,
                std::slice::from_ref(&narrow),
                &req("db:drop", "test_b")
            )),
            "OUTSIDE_GRANT"
        );
        assert_eq!(
            reason(decide(&d, &[narrow], &req("db:drop", "test_abc"))),
            "ALLOWED"
        );
        assert_eq!(
            reason(decide(&d, &[all("db:ddl")], &req("db:drop", "test_x"))),
            "NOT_GRANTED"
        );
        // Granting an undeclared class does not make it usable.
        assert_eq!(
            reason(decide(&d, &[all("db:admin")], &req("db:admin", "x"))),
            "UNDECLARED"
        );
    }

    #[test]
    fn globs() {
        assert!(glob_match("test_*", "test_"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a*b*c", "axxbyyc"));
        assert!(!glob_match("a*b*c", "acb"));
        assert!(!glob_match("ab*ba", "aba"));
        assert!(glob_match("exact", "exact") && !glob_match("exact", "exactly"));
    }
}
