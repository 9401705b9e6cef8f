//! A metadata map: text keys → `ciborium` values, decoded from and encoded
//! to CBOR, with typed getters and validation per [`Position`].
//!
//! Validation reports *every* problem, each naming its key, with a stable
//! code. `std:` keys are checked against the key table; keys of other
//! namespaces (`acme:priority`) pass through untouched — they are kept,
//! re-encoded as they came, and never looked at.

use ciborium::Value as Cbor;

use super::decode::{
    Arg, DecodeError, DecodeOptions, Reader, decode, decode_item, end, find_duplicate, read_text,
};
use super::deterministic::{EncodeError, write_deterministic, write_head};
use super::keys::Position;
use super::localized::Localized;
pub use super::validate::{Problem, ProblemCode, STD, Severity, ValidateOptions};
use super::validate::{major_name, validate_entries};

/// A decoded metadata map. Keys are unique; order is as received (the
/// encoder sorts, so order never changes bytes).
#[derive(Clone, Debug, Default)]
pub struct MetaMap {
    entries: Vec<(String, Cbor)>,
}

/// Two maps are equal when they mean the same: same deterministic encoding,
/// whatever order their entries (and nested maps' entries) arrived in.
impl PartialEq for MetaMap {
    fn eq(&self, other: &MetaMap) -> bool {
        match (self.encode(), other.encode()) {
            (Ok(a), Ok(b)) => a == b,
            _ => self.entries == other.entries,
        }
    }
}

/// A typed getter found a value of the wrong type.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("metadata key {key} should be {expected}")]
pub struct WrongType {
    pub key: String,
    pub expected: &'static str,
}

impl MetaMap {
    pub fn new() -> MetaMap {
        MetaMap::default()
    }

    /// A map from entries; a repeated key keeps its last value.
    pub fn from_entries<I: IntoIterator<Item = (String, Cbor)>>(entries: I) -> MetaMap {
        let mut m = MetaMap::new();
        for (k, v) in entries {
            m.insert(k, v);
        }
        m
    }

    /// Decodes a metadata map: a definite-length CBOR map with text keys,
    /// no duplicates, nesting within [`super::decode::MAX_DEPTH`].
    pub fn decode(bytes: &[u8]) -> Result<MetaMap, DecodeError> {
        let opts = DecodeOptions::default();
        let mut r = Reader::new(bytes);
        let h = r.head()?;
        let n = match (h.major, h.arg) {
            (5, Arg::Value(n)) => n,
            (5, Arg::Indefinite) => return Err(DecodeError::Indefinite { offset: h.offset }),
            (m, _) => {
                return Err(DecodeError::NotAMap {
                    offset: h.offset,
                    found: major_name(m),
                });
            }
        };
        r.check_items(h.offset, n, 2)?;
        let mut entries = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let kh = r.head()?;
            if kh.major != 3 {
                return Err(DecodeError::NonTextKey { offset: kh.offset });
            }
            let k = read_text(&mut r, kh, opts)?;
            let v = decode_item(&mut r, opts, 1)?;
            entries.push((k, v));
        }
        end(&r)?;
        if let Some(k) = find_duplicate(&entries, |e| &e.0) {
            return Err(DecodeError::DuplicateKey {
                offset: h.offset,
                key: format!("{k:?}"),
            });
        }
        Ok(MetaMap { entries })
    }

    /// Reads a map value (e.g. `std:forward`, an example) as a metadata map.
    pub fn from_value(v: &Cbor) -> Result<MetaMap, DecodeError> {
        let Cbor::Map(entries) = v else {
            return Err(DecodeError::NotAMap {
                offset: 0,
                found: value_kind(v),
            });
        };
        let mut out = Vec::with_capacity(entries.len());
        for (k, v) in entries {
            let Cbor::Text(k) = k else {
                return Err(DecodeError::NonTextKey { offset: 0 });
            };
            out.push((k.clone(), v.clone()));
        }
        if let Some(k) = find_duplicate(&out, |e| &e.0) {
            return Err(DecodeError::DuplicateKey {
                offset: 0,
                key: format!("{k:?}"),
            });
        }
        Ok(MetaMap { entries: out })
    }

    /// Deterministic CBOR (RFC 8949 §4.2.1).
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let mut sorted: Vec<&(String, Cbor)> = self.entries.iter().collect();
        sorted.sort_unstable_by(|a, b| a.0.len().cmp(&b.0.len()).then_with(|| a.0.cmp(&b.0)));
        let mut buf = Vec::with_capacity(64);
        write_head(&mut buf, 5, sorted.len() as u64);
        for (k, v) in sorted {
            write_head(&mut buf, 3, k.len() as u64);
            buf.extend_from_slice(k.as_bytes());
            write_deterministic(&mut buf, v, 1)?;
        }
        Ok(buf)
    }

    pub fn to_value(&self) -> Cbor {
        Cbor::Map(
            self.entries
                .iter()
                .map(|(k, v)| (Cbor::Text(k.clone()), v.clone()))
                .collect(),
        )
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &Cbor)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub fn get(&self, key: &str) -> Option<&Cbor> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Sets `key`, replacing an earlier value; returns the old one.
    pub fn insert(&mut self, key: impl Into<String>, value: Cbor) -> Option<Cbor> {
        let key = key.into();
        match self.entries.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => Some(std::mem::replace(&mut slot.1, value)),
            None => {
                self.entries.push((key, value));
                None
            }
        }
    }

    pub fn remove(&mut self, key: &str) -> Option<Cbor> {
        let i = self.entries.iter().position(|(k, _)| k == key)?;
        Some(self.entries.remove(i).1)
    }

    fn typed<'a, T>(
        &'a self,
        key: &str,
        expected: &'static str,
        f: impl FnOnce(&'a Cbor) -> Option<T>,
    ) -> Result<Option<T>, WrongType> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => f(v).map(Some).ok_or_else(|| WrongType {
                key: key.to_owned(),
                expected,
            }),
        }
    }

    pub fn get_bool(&self, key: &str) -> Result<Option<bool>, WrongType> {
        self.typed(key, "bool", Cbor::as_bool)
    }

    pub fn get_uint(&self, key: &str) -> Result<Option<u64>, WrongType> {
        self.typed(key, "uint", |v| {
            v.as_integer().and_then(|i| u64::try_from(i).ok())
        })
    }

    pub fn get_text(&self, key: &str) -> Result<Option<&str>, WrongType> {
        self.typed(key, "string", |v| v.as_text())
    }

    pub fn get_text_array(&self, key: &str) -> Result<Option<Vec<&str>>, WrongType> {
        self.typed(key, "array of string", |v| {
            v.as_array()?.iter().map(Cbor::as_text).collect()
        })
    }

    pub fn get_localized(&self, key: &str) -> Result<Option<Localized>, WrongType> {
        self.typed(key, "localized-string", |v| Localized::from_cbor(v).ok())
    }

    /// `std:examples`: each byte string decoded as a CBOR argument map.
    pub fn get_examples(&self, key: &str) -> Result<Option<Vec<MetaMap>>, WrongType> {
        self.typed(key, "array of bstr, each a CBOR map", |v| {
            v.as_array()?
                .iter()
                .map(|b| MetaMap::decode(b.as_bytes()?).ok())
                .collect()
        })
    }

    /// Checks the map for `position` with the rules of [`super::validate`]
    /// (run on each value's deterministic encoding). A value that cannot be
    /// encoded (a nested duplicate key, nesting past the limit) is reported
    /// as an invalid value of its key.
    pub fn validate(&self, position: Position, opts: ValidateOptions) -> Vec<Problem> {
        let mut out = Vec::new();
        let mut encoded: Vec<(&str, Vec<u8>)> = Vec::with_capacity(self.entries.len());
        for (k, v) in &self.entries {
            let mut buf = Vec::new();
            if write_deterministic(&mut buf, v, 1).is_err() {
                // No deterministic form (a nested map whose keys collide once
                // written canonically, as 1.0 in half and single precision
                // do): validated as plainly written, as `MetaView` validates
                // the bytes as they came. The keys' and values' rules read
                // types and contents, never the encoding, so both give the
                // same problems (the fuzz target `cbor_meta` compares them);
                // `encode` still refuses such a map.
                buf.clear();
                if let Err(e) = ciborium::ser::into_writer(v, &mut buf) {
                    out.push(Problem::error(
                        k,
                        ProblemCode::InvalidValue,
                        format!("{k}: {e}"),
                    ));
                    continue;
                }
            }
            encoded.push((k, buf));
        }
        validate_entries(
            encoded.iter().map(|(k, v)| (*k, v.as_slice())),
            position,
            opts,
            &mut out,
        );
        out
    }
}

/// A short name of a value's CBOR type, for messages.
pub fn value_kind(v: &Cbor) -> &'static str {
    match v {
        Cbor::Integer(_) => "integer",
        Cbor::Bytes(_) => "byte string",
        Cbor::Float(_) => "float",
        Cbor::Text(_) => "text string",
        Cbor::Bool(_) => "bool",
        Cbor::Null => "null",
        Cbor::Tag(..) => "tag",
        Cbor::Array(_) => "array",
        Cbor::Map(_) => "map",
        _ => "value",
    }
}

/// Decodes bytes as any CBOR value under the metadata limits.
pub fn decode_value(bytes: &[u8]) -> Result<Cbor, DecodeError> {
    decode(bytes, DecodeOptions::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Cbor {
        Cbor::Text(s.into())
    }

    fn codes(m: &MetaMap, p: Position, strict: bool) -> Vec<(String, &'static str, bool)> {
        m.validate(p, ValidateOptions { strict })
            .into_iter()
            .map(|p| {
                let e = p.is_error();
                (p.key, p.code.as_str(), e)
            })
            .collect()
    }

    #[test]
    fn positions_matter() {
        let mut m = MetaMap::new();
        m.insert("std:read-only", Cbor::Bool(true));
        m.insert("acme:priority", Cbor::Integer(3.into()));
        m.insert("std:request-id", t("r1"));
        assert!(codes(&m, Position::ToolDefinition, false).is_empty());
        assert_eq!(
            codes(&m, Position::ToolCall, false),
            [("std:read-only".into(), "NOT_ALLOWED_HERE", true)]
        );
        m.insert("std:bogus", Cbor::Null);
        m.insert("std:timeout-ms", Cbor::Integer((-1).into()));
        m.insert("std:api-key", t("k"));
        let got = codes(&m, Position::ToolDefinition, false);
        assert!(got.contains(&("std:bogus".into(), "UNKNOWN_STD_KEY", true)));
        assert!(got.contains(&("std:timeout-ms".into(), "WRONG_TYPE", true)));
        assert!(got.contains(&("std:api-key".into(), "NOT_ALLOWED_HERE", true)));
    }

    #[test]
    fn credentials_warn_per_call_and_fail_strict() {
        let m = MetaMap::from_entries([("std:bearer-token".to_owned(), t("x"))]);
        assert_eq!(
            codes(&m, Position::ToolCall, false),
            [("std:bearer-token".into(), "CREDENTIAL_IN_METADATA", false)]
        );
        assert_eq!(
            codes(&m, Position::ToolCall, true),
            [("std:bearer-token".into(), "CREDENTIAL_IN_METADATA", true)]
        );
        assert!(codes(&m, Position::OpenSessionArgs, true).is_empty());
        // Inside stored credential material the same names mean nothing.
        let m = MetaMap::from_entries([("std:username".to_owned(), Cbor::Integer(1.into()))]);
        assert!(codes(&m, Position::CredentialMaterial, true).is_empty());
    }

    #[test]
    fn decode_encode_and_getters() {
        let m = MetaMap::from_entries([
            ("std:tags".to_owned(), Cbor::Array(vec![t("a"), t("b")])),
            ("std:timeout-ms".to_owned(), Cbor::Integer(5000.into())),
            ("acme:x".to_owned(), Cbor::Tag(32, Box::new(t("http://x")))),
        ]);
        let bytes = m.encode().unwrap();
        let back = MetaMap::decode(&bytes).unwrap();
        assert_eq!(back.get_uint("std:timeout-ms").unwrap(), Some(5000));
        assert_eq!(
            back.get_text_array("std:tags").unwrap(),
            Some(vec!["a", "b"])
        );
        assert_eq!(back.get("acme:x"), m.get("acme:x"));
        assert_eq!(back.get_bool("std:tags").unwrap_err().key, "std:tags");
        assert_eq!(back.encode().unwrap(), bytes);
        assert_eq!(
            MetaMap::decode(&[0xa1, 0x01, 0x02]).unwrap_err().code(),
            "NON_TEXT_KEY"
        );
        assert_eq!(MetaMap::decode(&[0x80]).unwrap_err().code(), "NOT_A_MAP");
        assert_eq!(
            MetaMap::decode(&[0xbf, 0xff]).unwrap_err().code(),
            "INDEFINITE_LENGTH"
        );
    }
}
