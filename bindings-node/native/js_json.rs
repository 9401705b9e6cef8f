//! JSON text for JavaScript that keeps every integer exact.
//!
//! `JSON.parse` reads every number as a double, so an integer beyond
//! ±(2^53 − 1) that the core holds exactly (and the approval hash binds)
//! would reach the handler, the approver's view and the app rounded:
//! 9007199254740993 read as …992 (issue 14). A value with no such integer —
//! nearly every value — is plain JSON text, parsed as before. A value with
//! one is marked: the text starts with U+0001 (never the start of JSON
//! text), each such integer is the string `"\u0000n<digits>"`, and each
//! string that starts with U+0000 is escaped as `"\u0000s<the string>"`;
//! `parseCoreJson` in src/json.ts turns them back into BigInt and strings.
//! Object keys are never marked. Conversion only: what the value is, is the
//! core's.

use serde_json::{Map, Number, Value};

/// Starts a marked text.
pub const MARKED: char = '\u{1}';

/// The largest integer a JavaScript number holds exactly.
const MAX_SAFE: u64 = (1 << 53) - 1;

fn unsafe_integer(n: &Number) -> bool {
    match (n.as_u64(), n.as_i64()) {
        (Some(u), _) => u > MAX_SAFE,
        (None, Some(i)) => i.unsigned_abs() > MAX_SAFE,
        _ => false,
    }
}

/// Whether `v` holds an integer `JSON.parse` would round. Iterative: the
/// core's values may nest as deep as its limits allow.
fn needs_marking(v: &Value) -> bool {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Number(n) if unsafe_integer(n) => return true,
            Value::Array(a) => stack.extend(a),
            Value::Object(o) => stack.extend(o.values()),
            _ => {}
        }
    }
    false
}

fn marked(v: &Value) -> Value {
    match v {
        Value::Number(n) if unsafe_integer(n) => Value::String(format!("\u{0}n{n}")),
        Value::String(s) if s.starts_with('\u{0}') => Value::String(format!("\u{0}s{s}")),
        Value::Array(a) => Value::Array(a.iter().map(marked).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), marked(v)))
                .collect::<Map<String, Value>>(),
        ),
        other => other.clone(),
    }
}

/// `v` as text for `parseCoreJson`: plain JSON unless it holds an integer
/// beyond ±(2^53 − 1).
pub fn js_text(v: &Value) -> String {
    if !needs_marking(v) {
        return v.to_string();
    }
    format!("{MARKED}{}", marked(v))
}

/// `v` serialized for `parseCoreJson` when only `arbitrary` (the one part
/// of it that holds arbitrary JSON) can hold an integer past 2^53: plain
/// JSON, built without a `Value`, unless it does. The audit record, whose
/// only such part is the audited output, on the hot path of every call
/// with an audit subscriber.
pub fn js_text_if<T: serde::Serialize>(v: &T, arbitrary: Option<&Value>) -> String {
    if arbitrary.is_some_and(needs_marking)
        && let Ok(value) = serde_json::to_value(v)
    {
        return js_text(&value);
    }
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn safe_values_are_plain_json() {
        let v = json!({"a": [1, -9007199254740991_i64, 1.5, "\u{0}x"], "b": null});
        assert_eq!(js_text(&v), v.to_string());
    }

    #[test]
    #[allow(clippy::unwrap_used)]
    fn unsafe_integers_and_nul_strings_are_marked() {
        let v = json!({"n": 9007199254740993_u64, "m": -9007199254740993_i64, "s": "\u{0}x", "f": 1e300});
        let t = js_text(&v);
        assert!(t.starts_with(MARKED));
        let back: Value = serde_json::from_str(&t[1..]).unwrap();
        assert_eq!(back["n"], "\u{0}n9007199254740993");
        assert_eq!(back["m"], "\u{0}n-9007199254740993");
        assert_eq!(back["s"], "\u{0}s\u{0}x");
        assert_eq!(back["f"], 1e300);
    }

    #[test]
    fn a_value_is_marked_only_when_its_arbitrary_part_needs_it() {
        let safe = json!({"n": 9007199254740991_u64});
        let big = json!({"n": 9007199254740993_u64});
        let row = json!({"at": 1_765_000_000_000_u64, "output": big.clone()});
        assert_eq!(js_text_if(&row, None), row.to_string());
        assert_eq!(js_text_if(&row, Some(&safe)), row.to_string());
        assert_eq!(js_text_if(&row, Some(&big)), js_text(&row));
        assert!(js_text_if(&row, Some(&big)).starts_with(MARKED));
    }
}
