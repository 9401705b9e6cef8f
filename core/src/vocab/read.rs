//! Reading a JSON object field by field while recording every problem, so
//! one pass over a declaration reports all that is wrong with it.

use serde_json::{Map, Value};

use std::fmt::Display;

use super::problem::{FieldPath, ProblemCode, Problems};

/// JSON type name for messages.
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An object being read: remembers which keys were consumed so the unknown
/// ones can be reported at the end.
pub(crate) struct ObjReader<'v> {
    pub obj: &'v Map<String, Value>,
    pub path: String,
    /// Keys read so far; no object we read has more than 16 known keys.
    seen: [&'static str; 16],
    seen_len: usize,
}

impl<'v> ObjReader<'v> {
    /// Starts reading `v` at `path`; records WRONG_TYPE and returns `None`
    /// when `v` is not an object.
    pub fn new(v: &'v Value, path: &str, p: &mut Problems) -> Option<Self> {
        match v {
            Value::Object(obj) => Some(ObjReader {
                obj,
                path: path.to_owned(),
                seen: [""; 16],
                seen_len: 0,
            }),
            other => {
                p.push(
                    path,
                    ProblemCode::WrongType,
                    format!("expected an object, got {}", type_name(other)),
                );
                None
            }
        }
    }

    pub fn field_path<'k>(&'k self, key: &'k str) -> FieldPath<'k> {
        FieldPath(&self.path, key)
    }

    /// The raw value of `key`, marking it known. JSON `null` counts as absent.
    pub fn get(&mut self, key: &'static str) -> Option<&'v Value> {
        if let Some(slot) = self.seen.get_mut(self.seen_len) {
            *slot = key;
            self.seen_len += 1;
        }
        // A linear scan beats hashing here: declaration objects hold a
        // handful of short keys, and most fields asked for are absent.
        match self.obj.iter().find(|(k, _)| k.as_str() == key) {
            None | Some((_, Value::Null)) => None,
            Some((_, v)) => Some(v),
        }
    }

    fn required(&mut self, key: &'static str, p: &mut Problems) -> Option<&'v Value> {
        let v = self.get(key);
        if v.is_none() {
            p.push(
                self.field_path(key),
                ProblemCode::MissingField,
                format!("{key} is required"),
            );
        }
        v
    }

    pub fn str_opt(&mut self, key: &'static str, p: &mut Problems) -> Option<&'v str> {
        let v = self.get(key)?;
        as_str(v, self.field_path(key), p)
    }

    /// A required, non-empty string.
    pub fn str_req(&mut self, key: &'static str, p: &mut Problems) -> Option<&'v str> {
        let v = self.required(key, p)?;
        let s = as_str(v, self.field_path(key), p)?;
        if s.trim().is_empty() {
            p.push(
                self.field_path(key),
                ProblemCode::MissingField,
                format!("{key} must not be empty"),
            );
            return None;
        }
        Some(s)
    }

    pub fn bool_opt(&mut self, key: &'static str, p: &mut Problems) -> Option<bool> {
        let v = self.get(key)?;
        match v {
            Value::Bool(b) => Some(*b),
            other => {
                p.push(
                    self.field_path(key),
                    ProblemCode::WrongType,
                    format!("expected a boolean, got {}", type_name(other)),
                );
                None
            }
        }
    }

    /// An optional integer that must be > 0 and ≤ `max`.
    pub fn positive_opt(&mut self, key: &'static str, max: u64, p: &mut Problems) -> Option<u64> {
        let v = self.get(key)?;
        integer_in(v, self.field_path(key), 1, max, p)
    }

    /// An optional integer in `[min, max]`.
    pub fn int_opt(
        &mut self,
        key: &'static str,
        min: u64,
        max: u64,
        p: &mut Problems,
    ) -> Option<u64> {
        let v = self.get(key)?;
        integer_in(v, self.field_path(key), min, max, p)
    }

    pub fn required_value(&mut self, key: &'static str, p: &mut Problems) -> Option<&'v Value> {
        self.required(key, p)
    }

    /// Reports every key not read through this reader as UNKNOWN_FIELD.
    pub fn finish(self, p: &mut Problems) {
        let seen = &self.seen[..self.seen_len];
        for key in self.obj.keys() {
            if !seen.contains(&key.as_str()) {
                p.push(
                    FieldPath(&self.path, key),
                    ProblemCode::UnknownField,
                    format!("unknown field `{key}`"),
                );
            }
        }
    }
}

pub(crate) fn as_str<'v>(v: &'v Value, path: impl Display, p: &mut Problems) -> Option<&'v str> {
    match v {
        Value::String(s) => Some(s),
        other => {
            p.push(
                path,
                ProblemCode::WrongType,
                format!("expected a string, got {}", type_name(other)),
            );
            None
        }
    }
}

/// An array of strings; wrong items are reported one by one.
pub(crate) fn string_list(v: &Value, path: impl Display, p: &mut Problems) -> Option<Vec<String>> {
    let Value::Array(items) = v else {
        p.push(
            path,
            ProblemCode::WrongType,
            format!("expected an array of strings, got {}", type_name(v)),
        );
        return None;
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        if let Some(s) = as_str(item, format_args!("{path}[{i}]"), p) {
            out.push(s.to_owned());
        }
    }
    Some(out)
}

/// An integer in `[min, max]`. Distinguishes "not a number", "not an
/// integer", "not positive" and "too large" because authors fix each
/// differently.
pub(crate) fn integer_in(
    v: &Value,
    path: impl Display,
    min: u64,
    max: u64,
    p: &mut Problems,
) -> Option<u64> {
    let Value::Number(n) = v else {
        p.push(
            path,
            ProblemCode::WrongType,
            format!("expected an integer, got {}", type_name(v)),
        );
        return None;
    };
    let as_int = n
        .as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
        .or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 1e30)
                .map(|f| f as i128)
        });
    let Some(i) = as_int else {
        p.push(
            path,
            ProblemCode::WrongType,
            format!("expected an integer, got {n}"),
        );
        return None;
    };
    if i < i128::from(min) {
        let code = if min >= 1 && i <= 0 {
            ProblemCode::NonPositive
        } else {
            ProblemCode::OutOfRange
        };
        p.push(path, code, format!("must be at least {min}, got {i}"));
        return None;
    }
    if i > i128::from(max) {
        p.push(
            path,
            ProblemCode::OutOfRange,
            format!("must be at most {max}, got {i}"),
        );
        return None;
    }
    u64::try_from(i).ok()
}

/// A wire enum's value at `path`: a string `parse` knows, or a problem
/// naming what was expected.
pub(crate) fn enum_value<T>(
    v: &Value,
    path: impl std::fmt::Display,
    p: &mut Problems,
    parse: fn(&str) -> Option<T>,
    expected: fn() -> String,
) -> Option<T> {
    let Value::String(s) = v else {
        p.push(
            path,
            ProblemCode::WrongType,
            format!("expected a string, got {}", type_name(v)),
        );
        return None;
    };
    let parsed = parse(s);
    if parsed.is_none() {
        p.push(
            path,
            ProblemCode::UnknownValue,
            format!("unknown value `{s}`; expected one of {}", expected()),
        );
    }
    parsed
}
