//! Declaration files: capabilities declared as data, for the CLI and for
//! hosts that keep metadata outside code.
//!
//! JSON: `{"capabilities": {"<id>": {<AgentMeta data fields>}}, "defaults": {…}, "policies": […]}`
//! TOML: `[capabilities."<id>"]` tables, plus optional `[defaults]` and `[[policies]]`.
//!
//! Syntax errors carry a line and column. Duplicate keys are an error in
//! both formats (JSON parsers usually keep the last one silently, which
//! would hide a second declaration of the same capability).

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::registry::{CapabilityDecl, RegistryOptions};

/// The file formats a declaration may be written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Json,
    Toml,
}

impl Format {
    /// By extension: `.toml` is TOML, anything else JSON.
    pub fn from_path(path: &str) -> Format {
        if path.to_ascii_lowercase().ends_with(".toml") {
            Format::Toml
        } else {
            Format::Json
        }
    }
}

/// A declaration file that cannot be read as one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", location(*.line, *.column))]
pub struct DeclarationError {
    /// 1-based; `None` when the problem is not at one place.
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

fn location(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!("{l}:{c}: "),
        (Some(l), None) => format!("{l}: "),
        _ => String::new(),
    }
}

/// A parsed declaration file: the capabilities in file order, and the
/// runtime options as JSON (validated with the capabilities at build).
#[derive(Clone, Debug, PartialEq)]
pub struct Declarations {
    pub capabilities: Vec<CapabilityDecl>,
    pub options: Value,
}

impl Declarations {
    /// Parses the text of a declaration file.
    pub fn parse(text: &str, format: Format) -> Result<Declarations, DeclarationError> {
        let root = match format {
            Format::Json => parse_json_strict(text)?,
            Format::Toml => parse_toml(text)?,
        };
        Declarations::from_value(root)
    }

    /// From an already-parsed JSON value.
    pub fn from_value(root: Value) -> Result<Declarations, DeclarationError> {
        let Value::Object(mut root) = root else {
            return Err(whole_file("the top level must be an object"));
        };
        let caps = match root.remove("capabilities") {
            None => {
                return Err(whole_file(
                    "missing `capabilities`: expected `{\"capabilities\": {\"<id>\": {…}}}`",
                ));
            }
            Some(Value::Object(c)) => c,
            Some(_) => {
                return Err(whole_file(
                    "`capabilities` must be an object keyed by capability id",
                ));
            }
        };
        let mut options = Map::new();
        for key in ["defaults", "policies", "approverMustDiffer"] {
            if let Some(v) = root.remove(key) {
                options.insert(key.to_owned(), v);
            }
        }
        if let Some(unknown) = root.keys().next() {
            return Err(whole_file(&format!(
                "unknown top-level field `{unknown}`; expected capabilities, defaults, policies, approverMustDiffer"
            )));
        }
        let capabilities = caps
            .into_iter()
            .map(|(id, meta)| {
                let input_schema = meta.get("inputSchema").cloned();
                let output_schema = meta.get("outputSchema").cloned();
                let meta = match meta {
                    Value::Object(mut m) => {
                        m.remove("inputSchema");
                        m.remove("outputSchema");
                        Value::Object(m)
                    }
                    other => other,
                };
                CapabilityDecl {
                    id,
                    meta,
                    validate_input: input_schema.is_some(),
                    validate_output: output_schema.is_some(),
                    input_schema,
                    output_schema,
                    // A file declares hooks its host registers later.
                    host_hooks: None,
                    validated_input_schema: Default::default(),
                }
            })
            .collect();
        Ok(Declarations {
            capabilities,
            options: Value::Object(options),
        })
    }

    /// Reads each policy's `cedarFile` (a Cedar policy-set file, a relative
    /// path inside `base`, the declaration file's directory: no `..`, not
    /// absolute) into its `cedar` text, so
    /// policies can be reviewed as `.cedar` files. Line and column of a
    /// problem in one are the file's. A file that cannot be read, is larger
    /// than [`MAX_POLICY_FILE_BYTES`], or sits beside a `cedar` text is an
    /// error naming the policy.
    /// Returns where each text came from, to name the file in a problem.
    pub fn read_policy_files(
        &mut self,
        base: &std::path::Path,
    ) -> Result<Vec<PolicyFile>, DeclarationError> {
        let mut lists: Vec<(Option<String>, String, &mut Value)> = Vec::new();
        for decl in &mut self.capabilities {
            if let Some(list) = decl.meta.get_mut("policies") {
                let at = format!("capabilities.{}.policies", decl.id);
                lists.push((Some(decl.id.clone()), at, list));
            }
        }
        if let Some(list) = self.options.get_mut("policies") {
            lists.push((None, "policies".to_owned(), list));
        }
        let mut read = Vec::new();
        for (capability, at, list) in lists {
            let Some(items) = list.as_array_mut() else {
                continue; // the registry reports a policy list of the wrong type
            };
            for (i, policy) in items.iter_mut().enumerate() {
                let Some(policy) = policy.as_object_mut() else {
                    continue;
                };
                let Some(file) = policy.get("cedarFile") else {
                    continue;
                };
                let place = format!("{at}[{i}].cedarFile");
                let Some(file) = file.as_str() else {
                    return Err(whole_file(&format!(
                        "{place}: expected the path of a .cedar file"
                    )));
                };
                if policy.contains_key("cedar") {
                    return Err(whole_file(&format!(
                        "{place}: a policy gives its Cedar text in `cedar` or in `cedarFile`, not both"
                    )));
                }
                // Inside the declaration's directory: a file checked in CI
                // (`orpc-agent check` on a pull request) names no other.
                let relative = std::path::Path::new(file);
                if relative.is_absolute()
                    || relative.components().any(|c| {
                        !matches!(
                            c,
                            std::path::Component::Normal(_) | std::path::Component::CurDir
                        )
                    })
                {
                    return Err(whole_file(&format!(
                        "{place}: `{file}` must be a relative path inside the declaration file's directory"
                    )));
                }
                let path = base.join(relative);
                let text = read_bounded(&path).map_err(|e| {
                    whole_file(&format!("{place}: cannot read {}: {e}", path.display()))
                })?;
                policy.remove("cedarFile");
                policy.insert("cedar".to_owned(), Value::String(text));
                read.push(PolicyFile {
                    capability: capability.clone(),
                    path: format!("policies[{i}].cedar"),
                    file: path,
                });
            }
        }
        Ok(read)
    }

    /// The options as typed values, with problems for the registry error.
    pub fn registry_options(&self) -> Result<RegistryOptions, crate::meta::RegistryError> {
        RegistryOptions::from_json(&self.options)
    }
}

/// A policy whose Cedar text came from a file: the capability and problem
/// path a registry problem in it carries, and the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyFile {
    pub capability: Option<String>,
    pub path: String,
    pub file: std::path::PathBuf,
}

/// The largest Cedar policy-set file a declaration may name.
pub const MAX_POLICY_FILE_BYTES: u64 = 1 << 20;

fn read_bounded(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_POLICY_FILE_BYTES + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_POLICY_FILE_BYTES {
        return Err(std::io::Error::other(format!(
            "larger than {MAX_POLICY_FILE_BYTES} bytes"
        )));
    }
    Ok(text)
}

fn whole_file(message: &str) -> DeclarationError {
    DeclarationError {
        line: None,
        column: None,
        message: message.to_owned(),
    }
}

/// Maximum nesting accepted in a declaration file.
pub const MAX_DEPTH: usize = 64;

/// JSON → `Value`, rejecting duplicate object keys and nesting deeper than
/// [`MAX_DEPTH`], with the line and column of the first error.
pub fn parse_json_strict(text: &str) -> Result<Value, DeclarationError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let v = de
        .deserialize_any(StrictVisitor { depth: 0 })
        .and_then(|v| de.end().map(|()| v))
        .map_err(|e| DeclarationError {
            line: Some(e.line()),
            column: Some(e.column()),
            message: strip_location(&e.to_string()),
        })?;
    Ok(v)
}

/// serde_json appends " at line L column C"; we report it separately.
fn strip_location(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_owned(),
        None => msg.to_owned(),
    }
}

struct StrictVisitor {
    depth: usize,
}

struct StrictSeed {
    depth: usize,
}

impl<'de> de::DeserializeSeed<'de> for StrictSeed {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(StrictVisitor { depth: self.depth })
    }
}

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        if self.depth >= MAX_DEPTH {
            return Err(de::Error::custom(format!(
                "nesting deeper than {MAX_DEPTH}"
            )));
        }
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(StrictSeed {
            depth: self.depth + 1,
        })? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        if self.depth >= MAX_DEPTH {
            return Err(de::Error::custom(format!(
                "nesting deeper than {MAX_DEPTH}"
            )));
        }
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(de::Error::custom(format!("duplicate key `{key}`")));
            }
            let v = map.next_value_seed(StrictSeed {
                depth: self.depth + 1,
            })?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

fn parse_toml(text: &str) -> Result<Value, DeclarationError> {
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        let (line, column) = e
            .span()
            .map(|s| line_col(text, s.start))
            .map_or((None, None), |(l, c)| (Some(l), Some(c)));
        DeclarationError {
            line,
            column,
            message: e.message().to_owned(),
        }
    })?;
    Ok(toml_to_json(toml::Value::Table(table)))
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// TOML → JSON data model (datetimes become their string form).
pub fn toml_to_json(v: toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => i.into(),
        toml::Value::Float(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => Value::Array(a.into_iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => {
            Value::Object(t.into_iter().map(|(k, v)| (k, toml_to_json(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_duplicate_keys_and_locations() {
        let e = parse_json_strict("{\"a\": 1,\n \"a\": 2}").err();
        let e = e.unwrap_or_else(|| unreachable!());
        assert!(e.message.contains("duplicate key `a`"), "{e}");
        assert_eq!(e.line, Some(2));
        let e = parse_json_strict("{\"a\": }")
            .err()
            .unwrap_or_else(|| unreachable!());
        assert_eq!((e.line, e.column), (Some(1), Some(7)));
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert!(parse_json_strict(&deep).is_err());
    }

    #[test]
    fn toml_locations() {
        let e = Declarations::parse("[capabilities.a]\ndescription = \n", Format::Toml)
            .err()
            .unwrap_or_else(|| unreachable!());
        assert_eq!(e.line, Some(2), "{e}");
    }

    #[test]
    fn structure_errors() {
        for text in [
            "[]",
            "{}",
            "{\"capabilities\": []}",
            "{\"capabilities\": {}, \"x\": 1}",
        ] {
            assert!(Declarations::parse(text, Format::Json).is_err(), "{text}");
        }
        let d = Declarations::parse(
            "{\"capabilities\": {\"a\": {\"description\": \"d\"}}, \"defaults\": {\"timeoutMs\": 5}}",
            Format::Json,
        )
        .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(d.capabilities.len(), 1);
        assert_eq!(d.options["defaults"]["timeoutMs"], 5);
    }
}
