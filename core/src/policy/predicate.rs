//! Argument predicates over the validated input: `<json-pointer> <op> <json>`.
//!
//! Examples: `/amount > 1000`, `/currency == "EUR"`, `/country in ["FR","DE"]`,
//! `/coupon exists`. The pointer is RFC 6901 (`""` is the whole input).
//! Ordering operators compare numbers only; `==`/`!=` compare JSON values
//! with numbers compared by value (`1 == 1.0`). A pointer that resolves to
//! nothing makes every operator false except `!exists`.

use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    Exists,
    NotExists,
}

impl Op {
    fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "==" => Op::Eq,
            "!=" => Op::Ne,
            "<" => Op::Lt,
            "<=" => Op::Le,
            ">" => Op::Gt,
            ">=" => Op::Ge,
            "in" => Op::In,
            "exists" => Op::Exists,
            "!exists" => Op::NotExists,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Predicate {
    pub pointer: String,
    pub op: Op,
    pub value: Value,
    /// The source text, for audit records and messages.
    pub source: String,
}

const MAX_PREDICATE_LEN: usize = 4096;

impl Predicate {
    /// Parses `<pointer> <op> [<json>]`; the error says what is wrong.
    pub fn parse(src: &str) -> Result<Predicate, String> {
        if src.len() > MAX_PREDICATE_LEN {
            return Err(format!("predicate longer than {MAX_PREDICATE_LEN} bytes"));
        }
        let s = src.trim();
        let (pointer, rest) = s.split_once(char::is_whitespace).ok_or_else(|| {
            format!("`{src}`: expected `<json-pointer> <op> <json value>`, e.g. `/amount > 1000`")
        })?;
        if !pointer.is_empty() && !pointer.starts_with('/') {
            return Err(format!(
                "`{src}`: the pointer must start with `/` (RFC 6901), got `{pointer}`"
            ));
        }
        let rest = rest.trim_start();
        let (op_s, value_s) = rest
            .split_once(char::is_whitespace)
            .map(|(a, b)| (a, b.trim()))
            .unwrap_or((rest, ""));
        let op = Op::parse(op_s).ok_or_else(|| {
            format!("`{src}`: unknown operator `{op_s}`; expected ==, !=, <, <=, >, >=, in, exists, !exists")
        })?;
        let value = match op {
            Op::Exists | Op::NotExists => {
                if !value_s.is_empty() {
                    return Err(format!("`{src}`: `{op_s}` takes no value"));
                }
                Value::Null
            }
            _ => serde_json::from_str::<Value>(value_s)
                .map_err(|e| format!("`{src}`: the value is not JSON: {e}"))?,
        };
        match op {
            Op::Lt | Op::Le | Op::Gt | Op::Ge if !value.is_number() => {
                return Err(format!("`{src}`: `{op_s}` compares numbers only"));
            }
            Op::In if !value.is_array() => {
                return Err(format!("`{src}`: `in` takes a JSON array"));
            }
            _ => {}
        }
        Ok(Predicate {
            pointer: pointer.to_owned(),
            op,
            value,
            source: src.to_owned(),
        })
    }

    /// Evaluates against the validated input.
    pub fn eval(&self, input: &Value) -> bool {
        let found = input.pointer(&self.pointer);
        match (self.op, found) {
            (Op::NotExists, found) => found.is_none(),
            (_, None) => false,
            (Op::Exists, Some(_)) => true,
            (Op::Eq, Some(v)) => json_eq(v, &self.value),
            (Op::Ne, Some(v)) => !json_eq(v, &self.value),
            (Op::In, Some(v)) => self
                .value
                .as_array()
                .is_some_and(|a| a.iter().any(|x| json_eq(v, x))),
            (op, Some(v)) => match (v.as_f64(), self.value.as_f64()) {
                (Some(a), Some(b)) => match op {
                    Op::Lt => a < b,
                    Op::Le => a <= b,
                    Op::Gt => a > b,
                    Op::Ge => a >= b,
                    _ => false,
                },
                _ => false,
            },
        }
    }
}

/// JSON equality with numbers compared by value.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(i), Some(j)) => i == j,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(s: &str) -> Predicate {
        Predicate::parse(s).unwrap_or_else(|e| unreachable!("{e}"))
    }

    #[test]
    fn comparisons() {
        let input = json!({"amount": 1500, "currency": "EUR", "items": [{"sku": "a"}]});
        assert!(p("/amount > 1000").eval(&input));
        assert!(!p("/amount > 1500").eval(&input));
        assert!(p("/amount >= 1500.0").eval(&input));
        assert!(p("/amount == 1500.0").eval(&input));
        assert!(p("/currency == \"EUR\"").eval(&input));
        assert!(p("/currency in [\"EUR\", \"USD\"]").eval(&input));
        assert!(p("/items/0/sku exists").eval(&input));
        assert!(p("/coupon !exists").eval(&input));
        assert!(!p("/coupon == 1").eval(&input));
        assert!(!p("/coupon != 1").eval(&input));
        assert!(!p("/currency > 1").eval(&input));
    }

    #[test]
    fn parse_errors_name_the_problem() {
        for (src, needle) in [
            ("amount > 1", "must start with `/`"),
            ("/amount ~ 1", "unknown operator"),
            ("/amount > \"x\"", "numbers only"),
            ("/amount in 3", "JSON array"),
            ("/amount == {", "not JSON"),
            ("/amount", "expected"),
            ("/a exists 1", "takes no value"),
        ] {
            let e = Predicate::parse(src).err().unwrap_or_default();
            assert!(e.contains(needle), "{src}: {e}");
        }
    }
}
