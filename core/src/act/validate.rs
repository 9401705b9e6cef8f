//! Validation of metadata per position, on encoded bytes.
//!
//! The rules run on each entry's *encoded* value, so a host that only needs
//! to check metadata it received ([`MetaView`]) never builds `ciborium`
//! values — that is what keeps decode + validate of a 10-key map under a
//! microsecond. [`super::MetaMap::validate`] encodes its values and runs the
//! same rules, so there is one implementation.
//!
//! Reported: a wrong CBOR type, a known `std:` key in the wrong position, an
//! unknown `std:` key, a value that breaks its key's rule (traceparent,
//! SemVer, session-op, localized tags, examples), a credential outside
//! open-session args (warning; error in strict mode), a missing required
//! key. Keys of other namespaces pass untouched.

use super::decode::{Arg, DecodeError, DecodeOptions, Reader, skim_item, skip_trusted, text_of};
use super::keys::{self, CborType, KeySpec, Position, Rule};
use super::localized::{is_language_tag, is_language_tag_bytes};
use super::meta_map::WrongType;
use super::trace;

/// The `std:` namespace prefix.
pub const STD: &str = "std:";

/// Validation switches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ValidateOptions {
    /// Credential keys in per-call metadata become errors, not warnings.
    pub strict: bool,
}

/// How bad a problem is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// What is wrong with one key. Stable codes for vectors and bindings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemCode {
    /// The value has the wrong CBOR type for the key.
    WrongType,
    /// A known `std:` key in a position where it does not belong.
    NotAllowedHere,
    /// A `std:` key the table does not have (or an unknown component key).
    UnknownStdKey,
    /// The type is right but the value is not (bad traceparent, SemVer…).
    InvalidValue,
    /// A credential key outside open-session args.
    CredentialInMetadata,
    /// A required key is absent.
    MissingKey,
}

impl ProblemCode {
    pub const fn as_str(self) -> &'static str {
        match self {
            ProblemCode::WrongType => "WRONG_TYPE",
            ProblemCode::NotAllowedHere => "NOT_ALLOWED_HERE",
            ProblemCode::UnknownStdKey => "UNKNOWN_STD_KEY",
            ProblemCode::InvalidValue => "INVALID_VALUE",
            ProblemCode::CredentialInMetadata => "CREDENTIAL_IN_METADATA",
            ProblemCode::MissingKey => "MISSING_KEY",
        }
    }
}

/// One finding of validation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub key: String,
    pub code: ProblemCode,
    pub severity: Severity,
    pub message: String,
}

impl Problem {
    pub(crate) fn error(key: &str, code: ProblemCode, message: String) -> Problem {
        Problem {
            key: key.to_owned(),
            code,
            severity: Severity::Error,
            message,
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sev = if self.is_error() { "error" } else { "warning" };
        write!(
            f,
            "{sev} {} [{}]: {}",
            self.key,
            self.code.as_str(),
            self.message
        )
    }
}

/// A metadata map as borrowed slices of the bytes it came in: checked for
/// well-formedness exactly as [`super::MetaMap::decode`] checks it, but
/// nothing is copied.
#[derive(Clone, Debug)]
pub struct MetaView<'a> {
    entries: Vec<(&'a str, &'a [u8])>,
}

impl<'a> MetaView<'a> {
    /// Parses a definite-length map with text keys, unique, within limits.
    pub fn parse(bytes: &'a [u8]) -> Result<MetaView<'a>, DecodeError> {
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
        let mut entries: Vec<(&'a str, &'a [u8])> = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let kh = r.head()?;
            let key = match (kh.major, kh.arg) {
                (3, Arg::Value(len)) => {
                    let available = r.remaining();
                    let raw = r.take(len).map_err(|_| DecodeError::LengthBeyondInput {
                        offset: kh.offset,
                        declared: len,
                        available,
                    })?;
                    std::str::from_utf8(raw)
                        .map_err(|_| DecodeError::InvalidUtf8 { offset: kh.offset })?
                }
                (3, Arg::Indefinite) => return Err(DecodeError::Indefinite { offset: kh.offset }),
                _ => return Err(DecodeError::NonTextKey { offset: kh.offset }),
            };
            let start = r.pos();
            skim_item(&mut r, opts, 1)?;
            if entries.iter().any(|(k, _)| *k == key) {
                return Err(DecodeError::DuplicateKey {
                    offset: h.offset,
                    key: format!("{key:?}"),
                });
            }
            entries.push((key, &bytes[start..r.pos()]));
        }
        super::decode::end(&r)?;
        Ok(MetaView { entries })
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The encoded value of `key`.
    pub fn get(&self, key: &str) -> Option<&'a [u8]> {
        self.entries
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| *v)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'a str, &'a [u8])> + '_ {
        self.entries.iter().copied()
    }

    fn typed<T>(
        &self,
        key: &str,
        expected: &'static str,
        f: impl FnOnce(&'a [u8]) -> Option<T>,
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
        self.typed(key, "bool", |v| match v {
            [0xf4] => Some(false),
            [0xf5] => Some(true),
            _ => None,
        })
    }

    pub fn get_uint(&self, key: &str) -> Result<Option<u64>, WrongType> {
        self.typed(key, "uint", |v| match head(v)? {
            (0, Arg::Value(n), _) => Some(n),
            _ => None,
        })
    }

    pub fn get_text(&self, key: &str) -> Result<Option<&'a str>, WrongType> {
        self.typed(key, "string", text_of)
    }

    /// The owning form, with `ciborium` values.
    pub fn to_meta_map(&self) -> Result<super::MetaMap, DecodeError> {
        let mut entries = Vec::with_capacity(self.entries.len());
        for (k, v) in &self.entries {
            entries.push((
                (*k).to_owned(),
                super::decode::decode(v, DecodeOptions::default())?,
            ));
        }
        Ok(super::MetaMap::from_entries(entries))
    }

    /// Every problem of this map in `position`.
    pub fn validate(&self, position: Position, opts: ValidateOptions) -> Vec<Problem> {
        let mut out = Vec::new();
        validate_entries(self.entries.iter().copied(), position, opts, &mut out);
        out
    }
}

/// The rules over (key, encoded value) pairs with unique keys.
pub(crate) fn validate_entries<'a, I>(
    entries: I,
    position: Position,
    opts: ValidateOptions,
    out: &mut Vec<Problem>,
) where
    I: Iterator<Item = (&'a str, &'a [u8])> + Clone,
{
    if position == Position::CredentialMaterial {
        return;
    }
    for (key, value) in entries.clone() {
        check_key(key, value, position, opts, out);
    }
    for spec in keys::KEYS
        .iter()
        .filter(|k| k.required && k.positions.contains(position))
    {
        if !entries.clone().any(|(k, _)| k == spec.key) {
            out.push(Problem::error(
                spec.key,
                ProblemCode::MissingKey,
                format!("{} is required", spec.key),
            ));
        }
    }
}

/// True for keys in a namespace other than `std:` (`acme:priority`).
fn is_foreign(key: &str) -> bool {
    !key.starts_with(STD) && key.contains(':')
}

fn check_key(
    key: &str,
    value: &[u8],
    position: Position,
    opts: ValidateOptions,
    out: &mut Vec<Problem>,
) {
    if position == Position::Component {
        // The [std] table is the std namespace: its keys are bare.
        if is_foreign(key) {
            return;
        }
    } else if !key.starts_with(STD) {
        // Foreign namespaces, and plain argument names in open-session args.
        return;
    }
    let Some(spec) = keys::lookup(key) else {
        out.push(Problem::error(
            key,
            ProblemCode::UnknownStdKey,
            format!("{key} is not a key of spec/004"),
        ));
        return;
    };
    if !spec.positions.contains(position) {
        let per_call = matches!(
            position,
            Position::ToolCall
                | Position::ListTools
                | Position::ContentPart
                | Position::OpenSession
        );
        if spec.credential && per_call {
            let message = format!(
                "{key} is a credential; pass it in open-session args, not per-call metadata, where it reaches the agent's context on every call"
            );
            let severity = if opts.strict {
                Severity::Error
            } else {
                Severity::Warning
            };
            out.push(Problem {
                key: key.to_owned(),
                code: ProblemCode::CredentialInMetadata,
                severity,
                message,
            });
        } else {
            let allowed: Vec<&str> = spec.positions.iter().map(Position::as_str).collect();
            out.push(Problem::error(
                key,
                ProblemCode::NotAllowedHere,
                format!(
                    "{key} may not appear in {position} metadata (allowed: {})",
                    allowed.join(", ")
                ),
            ));
            return;
        }
    }
    check_value(spec, value, out);
}

/// A read-only cursor over one encoded value.
fn head(v: &[u8]) -> Option<(u8, Arg, Reader<'_>)> {
    let mut r = Reader::new(v);
    let h = r.head().ok()?;
    Some((h.major, h.arg, r))
}

/// Whether `v` is a definite array whose items all satisfy `pred`; walks
/// the items in place (no allocation).
fn all_items(v: &[u8], mut pred: impl FnMut(&[u8]) -> bool) -> bool {
    let Some((4, Arg::Value(n), mut r)) = head(v) else {
        return false;
    };
    if r.check_items(0, n, 1).is_err() {
        return false;
    }
    for _ in 0..n {
        let start = r.pos();
        if skip_trusted(&mut r).is_err() || !pred(&v[start..r.pos()]) {
            return false;
        }
    }
    true
}

/// The content bytes of a definite text string (already UTF-8-checked by
/// the parse that produced `v`).
fn text_bytes(v: &[u8]) -> Option<&[u8]> {
    let (3, Arg::Value(n), mut r) = head(v)? else {
        return None;
    };
    r.take(n).ok()
}

fn major(v: &[u8]) -> Option<u8> {
    v.first().map(|b| b >> 5)
}

/// A short name of an encoded value's type, for messages.
fn kind(v: &[u8]) -> &'static str {
    match v.first() {
        Some(0xf4 | 0xf5) => "bool",
        Some(0xf6) => "null",
        Some(0xf9..=0xfb) => "float",
        Some(b) => major_name(b >> 5),
        None => "nothing",
    }
}

pub(crate) fn major_name(major: u8) -> &'static str {
    [
        "unsigned integer",
        "negative integer",
        "byte string",
        "text string",
        "array",
        "map",
        "tag",
        "simple value",
    ][usize::from(major & 7)]
}

fn check_value(spec: &KeySpec, value: &[u8], out: &mut Vec<Problem>) {
    let key = spec.key;
    let type_ok = match spec.ty {
        CborType::Bool => matches!(value, [0xf4] | [0xf5]),
        CborType::Uint => major(value) == Some(0),
        CborType::Text => major(value) == Some(3),
        CborType::LocalizedString => matches!(major(value), Some(3 | 5)),
        CborType::ArrayOfBstr => all_items(value, |i| major(i) == Some(2)),
        CborType::ArrayOfText => all_items(value, |i| major(i) == Some(3)),
        CborType::Map => major(value) == Some(5),
        CborType::Any => true,
    };
    if !type_ok {
        out.push(Problem::error(
            key,
            ProblemCode::WrongType,
            format!("{key} must be {}, found {}", spec.ty.as_str(), kind(value)),
        ));
        return;
    }
    if let Err(why) = check_semantics(spec.rule, value) {
        out.push(Problem::error(
            key,
            ProblemCode::InvalidValue,
            format!("{key}: {why}"),
        ));
    }
}

/// A localized string, checked on its bytes: text, or a non-empty map of
/// well-formed BCP 47 tags (unique, case-insensitively) to text.
pub(crate) fn check_localized(value: &[u8]) -> Result<(), String> {
    if major(value) == Some(3) {
        return Ok(());
    }
    let Some((5, Arg::Value(n), mut r)) = head(value) else {
        return Err("expected text or a map of language tag to text".into());
    };
    if n == 0 {
        return Err("a localized map needs at least one language".into());
    }
    // Tags seen so far; a localized map with more than 32 languages is
    // checked for case-insensitive duplicates among its first 32 only (the
    // decoder already rejected exact duplicates).
    let mut seen: [&[u8]; 32] = [&[]; 32];
    for i in 0..n {
        let k = r.pos();
        skip_trusted(&mut r).map_err(|e| e.to_string())?;
        let m = r.pos();
        skip_trusted(&mut r).map_err(|e| e.to_string())?;
        let tag = text_bytes(&value[k..m]).ok_or("language tags are text")?;
        let shown = || String::from_utf8_lossy(tag).into_owned();
        if !is_language_tag_bytes(tag) {
            return Err(format!(
                "language tag {:?} is not a well-formed BCP 47 tag",
                shown()
            ));
        }
        if major(&value[m..r.pos()]) != Some(3) {
            return Err(format!(
                "the text for language {:?} is not a string",
                shown()
            ));
        }
        let upto = (i as usize).min(seen.len());
        if seen[..upto].iter().any(|t| t.eq_ignore_ascii_case(tag)) {
            return Err(format!("language tag {:?} appears twice", shown()));
        }
        if let Some(slot) = seen.get_mut(i as usize) {
            *slot = tag;
        }
    }
    Ok(())
}

/// An example argument map: one definite map with text keys, unique,
/// within the limits — checked in place.
fn check_arg_map(bytes: &[u8]) -> Result<(), DecodeError> {
    let mut r = Reader::new(bytes);
    let h = r.head()?;
    match (h.major, h.arg) {
        (5, Arg::Value(_)) => {}
        (5, Arg::Indefinite) => return Err(DecodeError::Indefinite { offset: h.offset }),
        (m, _) => {
            return Err(DecodeError::NotAMap {
                offset: h.offset,
                found: major_name(m),
            });
        }
    }
    // Whole-item check first (lengths, UTF-8, nesting, duplicates)…
    let mut all = Reader::new(bytes);
    skim_item(&mut all, DecodeOptions::default(), 0)?;
    super::decode::end(&all)?;
    // …then that every key is text.
    let Arg::Value(n) = h.arg else { return Ok(()) };
    for _ in 0..n {
        let k = r.head()?;
        if k.major != 3 {
            return Err(DecodeError::NonTextKey { offset: k.offset });
        }
        let Arg::Value(len) = k.arg else {
            return Err(DecodeError::Indefinite { offset: k.offset });
        };
        r.take(len)?;
        skip_trusted(&mut r)?;
    }
    Ok(())
}

/// Value rules beyond the CBOR type.
fn check_semantics(rule: Rule, value: &[u8]) -> Result<(), String> {
    let text = || text_of(value);
    match rule {
        Rule::Localized => check_localized(value),
        Rule::SessionOp => match text_bytes(value) {
            Some(b"open" | b"close") => Ok(()),
            other => Err(format!(
                "must be \"open\" or \"close\", found {:?}",
                other.map(String::from_utf8_lossy)
            )),
        },
        Rule::Traceparent => text()
            .map_or(Ok(()), trace::validate_traceparent)
            .map_err(|e| e.to_string()),
        Rule::Tracestate => text()
            .map_or(Ok(()), trace::validate_tracestate)
            .map_err(|e| e.to_string()),
        Rule::Examples => {
            let mut i = 0;
            let mut problem = None;
            all_items(value, |item| {
                let checked = match head(item) {
                    Some((2, Arg::Value(n), mut r)) => r
                        .take(n)
                        .map_err(|e| e.to_string())
                        .and_then(|b| check_arg_map(b).map_err(|e| e.to_string())),
                    _ => Err("not a definite byte string".into()),
                };
                if let Err(e) = checked {
                    problem.get_or_insert(format!("example {i} is not a CBOR argument map: {e}"));
                }
                i += 1;
                true
            });
            problem.map_or(Ok(()), Err)
        }
        Rule::SemVer => match text() {
            Some(v) => semver::Version::parse(v)
                .map(|_| ())
                .map_err(|e| format!("{v:?} is not SemVer: {e}")),
            None => Ok(()),
        },
        Rule::NonEmpty => match text() {
            Some(n) if n.trim().is_empty() => Err("must not be empty".into()),
            _ => Ok(()),
        },
        Rule::LanguageTag => match text() {
            Some(t) if !is_language_tag(t) => Err(format!("{t:?} is not a BCP 47 language tag")),
            _ => Ok(()),
        },
        Rule::Capabilities => {
            let v = super::decode::decode(value, DecodeOptions::default())
                .map_err(|e| e.to_string())?;
            super::capabilities::Declarations::from_cbor(&v)
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
        Rule::None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_reads_on_the_view() {
        let m = super::super::MetaMap::from_entries([
            ("std:read-only".to_owned(), ciborium::Value::Bool(true)),
            (
                "std:timeout-ms".to_owned(),
                ciborium::Value::Integer(70_000.into()),
            ),
            (
                "std:session-op".to_owned(),
                ciborium::Value::Text("open".into()),
            ),
        ]);
        let bytes = m.encode().unwrap();
        let v = MetaView::parse(&bytes).unwrap();
        assert_eq!(v.get_bool("std:read-only").unwrap(), Some(true));
        assert_eq!(v.get_uint("std:timeout-ms").unwrap(), Some(70_000));
        assert_eq!(v.get_text("std:session-op").unwrap(), Some("open"));
        assert_eq!(
            v.get_uint("std:session-op").unwrap_err().key,
            "std:session-op"
        );
        assert_eq!(v.get_bool("absent").unwrap(), None);
        assert_eq!(v.to_meta_map().unwrap(), m);
    }

    #[test]
    fn view_matches_decoder_on_errors() {
        for hex in [
            "a2616101616102",
            "a10102",
            "bf6161f5ff",
            "a1616181",
            "83010203",
            "a0a0",
            "a16161f7",
        ] {
            let b: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            let a = MetaView::parse(&b).unwrap_err().code();
            let m = super::super::MetaMap::decode(&b).unwrap_err().code();
            assert_eq!(a, m, "{hex}");
        }
    }

    #[test]
    fn nested_duplicates_are_found_without_decoding() {
        // {"a": {"k": 1, "k": 2}} and the same with a non-shortest second "k".
        for hex in [
            "a16161a2616b01616b02",
            "a16161a2616b01786b6b02",
            "a16161a2786b6b01616b02",
        ] {
            let b: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            let b = if hex.contains("786b6b") {
                // 0x78 0x01 0x6b: "k" with a one-byte length head.
                let fixed = hex.replace("786b6b", "78016b");
                (0..fixed.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&fixed[i..i + 2], 16).unwrap())
                    .collect()
            } else {
                b
            };
            assert_eq!(
                MetaView::parse(&b).unwrap_err().code(),
                "DUPLICATE_KEY",
                "{hex}"
            );
        }
    }
}
