//! Component metadata: the `[std]` table of an `act.toml` manifest ↔ its
//! CBOR form ↔ the `act:component` custom section of a `.wasm` file.
//!
//! The CBOR form is the `[std]` table as a CBOR map, deterministically
//! encoded; validation is the key table's `component` position (`name`
//! required and non-empty, `version` required SemVer, `description` a
//! localized string, `default-language` BCP 47, `capabilities` valid
//! declarations). Other manifest tables are not ours and are ignored.

use ciborium::Value as Cbor;

use super::capabilities::Declarations;
use super::decode::DecodeError;
use super::keys::Position;
use super::localized::Localized;
use super::meta_map::{MetaMap, Problem, ValidateOptions};
use super::wasm::{self, WasmError};

/// Why component metadata could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ComponentError {
    #[error("{file}: not valid TOML: {message}")]
    Toml { file: String, message: String },
    #[error("{0}: the manifest has no [std] table")]
    NoStdTable(String),
    #[error("{file}: {what}")]
    Unrepresentable { file: String, what: String },
    #[error("invalid component metadata: {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<Problem>),
    #[error("act:component section: {0}")]
    Decode(#[from] DecodeError),
    #[error(transparent)]
    Wasm(#[from] WasmError),
    #[error("the binary has no act:component section")]
    NoSection,
    #[error("could not encode: {0}")]
    Encode(#[from] super::deterministic::EncodeError),
}

impl ComponentError {
    pub fn code(&self) -> &'static str {
        match self {
            ComponentError::Toml { .. } => "MANIFEST_TOML",
            ComponentError::NoStdTable(_) => "MANIFEST_NO_STD",
            ComponentError::Unrepresentable { .. } => "UNREPRESENTABLE",
            ComponentError::Invalid(_) => "INVALID_METADATA",
            ComponentError::Decode(e) => e.code(),
            ComponentError::Wasm(e) => e.code(),
            ComponentError::NoSection => "NO_SECTION",
            ComponentError::Encode(_) => "ENCODE",
        }
    }
}

/// Validated component metadata. Equality is the map's: every other field
/// is read from it.
#[derive(Clone, Debug)]
pub struct ComponentMeta {
    pub name: String,
    pub version: semver::Version,
    pub description: Option<Localized>,
    pub default_language: Option<String>,
    pub capabilities: Declarations,
    /// The whole map, foreign keys included, as it will be written.
    pub map: MetaMap,
}

impl PartialEq for ComponentMeta {
    fn eq(&self, other: &ComponentMeta) -> bool {
        self.map == other.map
    }
}

impl ComponentMeta {
    /// Validates a `[std]` map (every problem at once) and reads it.
    pub fn from_map(map: MetaMap) -> Result<ComponentMeta, ComponentError> {
        let problems: Vec<Problem> = map
            .validate(Position::Component, ValidateOptions { strict: true })
            .into_iter()
            .collect();
        if problems.iter().any(Problem::is_error) {
            return Err(ComponentError::Invalid(problems));
        }
        let text = |k: &str| map.get_text(k).ok().flatten().map(str::to_owned);
        let version = text("version").and_then(|v| semver::Version::parse(&v).ok());
        let (Some(name), Some(version)) = (text("name"), version) else {
            // Unreachable after validation; kept total.
            return Err(ComponentError::Invalid(problems));
        };
        let capabilities = match map.get("capabilities") {
            Some(c) => Declarations::from_cbor(c).unwrap_or_default(),
            None => Declarations::default(),
        };
        Ok(ComponentMeta {
            name,
            version,
            description: map.get_localized("description").ok().flatten(),
            default_language: text("default-language"),
            capabilities,
            map,
        })
    }

    /// Reads the CBOR form.
    pub fn from_cbor(bytes: &[u8]) -> Result<ComponentMeta, ComponentError> {
        ComponentMeta::from_map(MetaMap::decode(bytes)?)
    }

    /// The CBOR form (deterministic).
    pub fn to_cbor(&self) -> Result<Vec<u8>, ComponentError> {
        Ok(self.map.encode()?)
    }

    /// Reads the `[std]` table of a manifest. `file` names it in errors.
    pub fn from_manifest(text: &str, file: &str) -> Result<ComponentMeta, ComponentError> {
        let table: toml::Table =
            text.parse()
                .map_err(|e: toml::de::Error| ComponentError::Toml {
                    file: file.into(),
                    message: e.to_string(),
                })?;
        let Some(toml::Value::Table(std)) = table.get("std") else {
            return Err(ComponentError::NoStdTable(file.into()));
        };
        let map = MetaMap::from_entries(std.iter().map(|(k, v)| (k.clone(), toml_to_cbor(v))));
        ComponentMeta::from_map(map)
    }

    /// The manifest text (`[std]` table only) for this metadata.
    pub fn to_manifest(&self) -> Result<String, ComponentError> {
        let mut std = toml::Table::new();
        for (k, v) in self.map.iter() {
            std.insert(k.to_owned(), cbor_to_toml(v, k)?);
        }
        let mut root = toml::Table::new();
        root.insert("std".into(), toml::Value::Table(std));
        toml::to_string(&root).map_err(|e| ComponentError::Unrepresentable {
            file: "manifest".into(),
            what: e.to_string(),
        })
    }

    /// Reads the metadata embedded in a `.wasm` binary.
    pub fn from_wasm(bytes: &[u8]) -> Result<ComponentMeta, ComponentError> {
        let data = wasm::read_component_section(bytes)?.ok_or(ComponentError::NoSection)?;
        ComponentMeta::from_cbor(data)
    }

    /// `bytes` with this metadata as its `act:component` section.
    pub fn embed(&self, bytes: &[u8]) -> Result<Vec<u8>, ComponentError> {
        Ok(wasm::write_component_section(bytes, &self.to_cbor()?)?)
    }
}

/// TOML → CBOR: datetimes become tag 0 (RFC 3339 text), as RFC 8949 §3.4.1.
pub fn toml_to_cbor(v: &toml::Value) -> Cbor {
    match v {
        toml::Value::String(s) => Cbor::Text(s.clone()),
        toml::Value::Integer(i) => Cbor::Integer((*i).into()),
        toml::Value::Float(f) => Cbor::Float(*f),
        toml::Value::Boolean(b) => Cbor::Bool(*b),
        toml::Value::Datetime(d) => Cbor::Tag(0, Box::new(Cbor::Text(d.to_string()))),
        toml::Value::Array(a) => Cbor::Array(a.iter().map(toml_to_cbor).collect()),
        toml::Value::Table(t) => Cbor::Map(
            t.iter()
                .map(|(k, v)| (Cbor::Text(k.clone()), toml_to_cbor(v)))
                .collect(),
        ),
    }
}

/// CBOR → TOML, for what TOML can say (no null, no byte strings, text keys).
pub fn cbor_to_toml(v: &Cbor, at: &str) -> Result<toml::Value, ComponentError> {
    let no = |what: &str| ComponentError::Unrepresentable {
        file: "manifest".into(),
        what: format!("{at}: {what} has no TOML form"),
    };
    Ok(match v {
        Cbor::Text(s) => toml::Value::String(s.clone()),
        Cbor::Integer(i) => {
            toml::Value::Integer(i64::try_from(*i).map_err(|_| no("an integer beyond i64"))?)
        }
        Cbor::Float(f) => toml::Value::Float(*f),
        Cbor::Bool(b) => toml::Value::Boolean(*b),
        Cbor::Tag(0, inner) => match inner
            .as_text()
            .and_then(|t| t.parse::<toml::value::Datetime>().ok())
        {
            Some(d) => toml::Value::Datetime(d),
            None => return Err(no("a tag-0 value that is not a TOML datetime")),
        },
        Cbor::Array(a) => toml::Value::Array(
            a.iter()
                .map(|x| cbor_to_toml(x, at))
                .collect::<Result<_, _>>()?,
        ),
        Cbor::Map(m) => {
            let mut t = toml::Table::new();
            for (k, x) in m {
                let k = k.as_text().ok_or_else(|| no("a non-text key"))?;
                t.insert(k.to_owned(), cbor_to_toml(x, &format!("{at}.{k}"))?);
            }
            toml::Value::Table(t)
        }
        Cbor::Null => return Err(no("null")),
        Cbor::Bytes(_) => return Err(no("a byte string")),
        _ => return Err(no("this value")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = r#"
[package]
ignored = true

[std]
name = "pg-tools"
version = "1.2.0-beta.1"
default-language = "en"
"acme:team" = "data"

[std.description]
en = "Postgres tools"
de = "Postgres-Werkzeuge"

[std.capabilities."wasi:http"]

[std.capabilities."db:drop"]
description = "Destructive operations (DROP, TRUNCATE)."

[[std.capabilities."db:drop".allow]]
key = "test_*"
"#;

    #[test]
    fn manifest_cbor_wasm_round_trip() {
        let c = ComponentMeta::from_manifest(MANIFEST, "act.toml").unwrap();
        assert_eq!(c.name, "pg-tools");
        assert_eq!(c.version.to_string(), "1.2.0-beta.1");
        assert_eq!(c.capabilities.classes.len(), 2);
        assert_eq!(
            c.description
                .as_ref()
                .unwrap()
                .resolve(Some("de"), None)
                .text,
            "Postgres-Werkzeuge"
        );
        let cbor = c.to_cbor().unwrap();
        assert_eq!(ComponentMeta::from_cbor(&cbor).unwrap(), c);
        let wasm = c.embed(&crate::act::wasm::tests_support::module()).unwrap();
        assert_eq!(ComponentMeta::from_wasm(&wasm).unwrap(), c);
        let again = ComponentMeta::from_manifest(&c.to_manifest().unwrap(), "x").unwrap();
        assert_eq!(again, c);
    }

    #[test]
    fn manifest_errors_name_the_problem() {
        let e = ComponentMeta::from_manifest("[std]\nversion = \"1\"\n", "act.toml").unwrap_err();
        let ComponentError::Invalid(p) = &e else {
            panic!("{e}")
        };
        let keys: Vec<(&str, &str)> = p
            .iter()
            .map(|p| (p.key.as_str(), p.code.as_str()))
            .collect();
        assert!(keys.contains(&("version", "INVALID_VALUE")), "{keys:?}");
        assert!(keys.contains(&("name", "MISSING_KEY")), "{keys:?}");
        let e = ComponentMeta::from_manifest(
            "[std]\nname='x'\nversion='1.0.0'\n[std.capabilities.'db:*']\n",
            "a.toml",
        );
        assert!(e.unwrap_err().to_string().contains("db:*"));
        assert_eq!(
            ComponentMeta::from_manifest("[other]\n", "a.toml")
                .unwrap_err()
                .code(),
            "MANIFEST_NO_STD"
        );
        assert_eq!(
            ComponentMeta::from_manifest("[std\n", "a.toml")
                .unwrap_err()
                .code(),
            "MANIFEST_TOML"
        );
        let e =
            ComponentMeta::from_manifest("[std]\nname='x'\nversion='1.0.0'\nnmae='y'\n", "a.toml")
                .unwrap_err();
        assert!(e.to_string().contains("nmae"));
    }
}
