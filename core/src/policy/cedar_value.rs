//! JSON values as a Cedar policy sees them (issue 21): exactly what the
//! generated schema said it would see, or the call fails closed.
//!
//! With a Cedar type (the capability's input type, the declared actor
//! attributes), a value is read *through* the type: only declared
//! attributes are visible (as the type-check assumed), and a value that
//! does not fit its declared type (a fraction or a number beyond 64 bits
//! where a `Long` was declared, a string where a record was) is an error,
//! so the decision is a failed policy (deny) — never an attribute left out
//! for a `has`-guarded `forbid` to miss.
//!
//! Without a type (no input schema), every value is converted as Cedar's
//! JSON form reads it, and a number that is not a whole 64-bit integer is
//! an error for the same reason. `null` is absent in both cases.

use cedar_policy::RestrictedExpression;
use serde_json::Value;

/// How deep a value is followed; deeper is an error (the input limits
/// already bound nesting at 64, this bounds the actor's attributes too).
const MAX_DEPTH: usize = 64;

/// Not a value this type (or Cedar) can hold: the call fails closed.
#[derive(Debug)]
pub(crate) struct Unrepresentable;

type Converted = Result<Option<RestrictedExpression>, Unrepresentable>;

/// `v` read through the Cedar type `t` (Cedar's JSON schema form); `None`
/// for an absent (`null`) value.
pub(crate) fn typed(v: &Value, t: &Value) -> Converted {
    typed_at(v, t, 0)
}

/// `v` as Cedar's JSON form reads it, with no type to go by.
pub(crate) fn untyped(v: &Value) -> Converted {
    untyped_at(v, 0)
}

/// An object's fields as a Cedar record, read through the record type `t`
/// when there is one (the actor's attributes: read in place, not copied).
pub(crate) fn record(
    map: &serde_json::Map<String, Value>,
    t: Option<&Value>,
) -> Result<RestrictedExpression, Unrepresentable> {
    let mut out = Vec::with_capacity(map.len());
    match t {
        Some(t) => {
            if t.get("type").and_then(Value::as_str) != Some("Record") {
                return Err(Unrepresentable);
            }
            typed_fields(map, t, 0, &mut out)?;
        }
        None => {
            for (k, x) in map {
                if let Some(e) = untyped_at(x, 1)? {
                    out.push((k.clone(), e));
                }
            }
        }
    }
    RestrictedExpression::new_record(out).map_err(|_| Unrepresentable)
}

fn typed_fields(
    map: &serde_json::Map<String, Value>,
    t: &Value,
    depth: usize,
    out: &mut Vec<(String, RestrictedExpression)>,
) -> Result<(), Unrepresentable> {
    if let Some(attributes) = t.get("attributes").and_then(Value::as_object) {
        for (name, at) in attributes {
            if let Some(x) = map.get(name)
                && let Some(e) = typed_at(x, at, depth + 1)?
            {
                out.push((name.clone(), e));
            }
        }
    }
    Ok(())
}

/// A whole number in Cedar's `Long` range: an integer, or a float with no
/// fraction (`250000.0`, as some validators hand over integers).
fn long(v: &Value) -> Option<i64> {
    const RANGE: std::ops::Range<f64> = -9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0;
    v.as_i64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && RANGE.contains(f))
            .map(|f| f as i64)
    })
}

fn typed_at(v: &Value, t: &Value, depth: usize) -> Converted {
    if depth > MAX_DEPTH {
        return Err(Unrepresentable);
    }
    if v.is_null() {
        return Ok(None);
    }
    let e = match (t.get("type").and_then(Value::as_str), v) {
        (Some("String"), Value::String(s)) => RestrictedExpression::new_string(s.clone()),
        (Some("Boolean"), Value::Bool(b)) => RestrictedExpression::new_bool(*b),
        (Some("Long"), Value::Number(_)) => {
            RestrictedExpression::new_long(long(v).ok_or(Unrepresentable)?)
        }
        (Some("Set"), Value::Array(items)) => {
            let element = t.get("element").ok_or(Unrepresentable)?;
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.extend(typed_at(item, element, depth + 1)?);
            }
            RestrictedExpression::new_set(out)
        }
        (Some("Record"), Value::Object(map)) => {
            let mut out = Vec::new();
            typed_fields(map, t, depth, &mut out)?;
            RestrictedExpression::new_record(out).map_err(|_| Unrepresentable)?
        }
        _ => return Err(Unrepresentable),
    };
    Ok(Some(e))
}

fn untyped_at(v: &Value, depth: usize) -> Converted {
    if depth > MAX_DEPTH {
        return Err(Unrepresentable);
    }
    let e = match v {
        Value::Null => return Ok(None),
        Value::Bool(b) => RestrictedExpression::new_bool(*b),
        Value::Number(_) => RestrictedExpression::new_long(long(v).ok_or(Unrepresentable)?),
        Value::String(s) => RestrictedExpression::new_string(s.clone()),
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.extend(untyped_at(item, depth + 1)?);
            }
            RestrictedExpression::new_set(out)
        }
        Value::Object(map) => {
            let mut out = Vec::with_capacity(map.len());
            for (k, x) in map {
                if let Some(e) = untyped_at(x, depth + 1)? {
                    out.push((k.clone(), e));
                }
            }
            RestrictedExpression::new_record(out).map_err(|_| Unrepresentable)?
        }
    };
    Ok(Some(e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn whole_numbers_are_longs_and_others_fail() {
        assert!(untyped(&json!(250_000.0)).unwrap().is_some());
        assert!(untyped(&json!({"a": 5000.5})).is_err());
        assert!(untyped(&json!([1, 2.5])).is_err());
        assert!(untyped(&json!(u64::MAX)).is_err());
        assert!(untyped(&json!({"a": null})).unwrap().is_some());
    }

    #[test]
    fn a_typed_read_sees_only_declared_attributes_of_the_declared_type() {
        let t = json!({"type": "Record", "attributes": {
            "cents": {"type": "Long"}, "tags": {"type": "Set", "element": {"type": "String"}}}});
        // Undeclared attributes are invisible, even those Cedar could not hold.
        assert!(
            typed(&json!({"cents": 5, "ratio": 0.5, "extra": "x"}), &t)
                .unwrap()
                .is_some()
        );
        assert!(typed(&json!({"cents": 5.5}), &t).is_err());
        assert!(typed(&json!({"cents": "5"}), &t).is_err());
        assert!(typed(&json!({"tags": ["a", 1]}), &t).is_err());
        assert!(typed(&json!("not a record"), &t).is_err());
        assert!(typed(&json!({"cents": null}), &t).unwrap().is_some());
    }
}
