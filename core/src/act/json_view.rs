//! CBOR ↔ JSON for people and for JSON-speaking hosts.
//!
//! Plain JSON values map one to one (numbers, text, arrays, text-keyed
//! maps). What JSON cannot say gets a one-key wrapper object, so `orpc-agent
//! meta decode` output re-encodes to the same CBOR with `meta encode`:
//!
//! | CBOR | JSON |
//! |---|---|
//! | byte string | `{"$bytes": "<lowercase hex>"}` |
//! | tag *n* | `{"$tag": n, "value": …}` |
//! | NaN, ±infinity | `{"$float": "NaN" \| "Infinity" \| "-Infinity"}` |
//! | integer outside i64/u64 | `{"$int": "<decimal>"}` |
//! | map with a non-text key, or whose only key starts with `$` | `{"$map": [[k, v], …]}` |
//!
//! A float stays a float (`1.0`), an integer an integer (`1`).

use ciborium::Value as Cbor;

/// The CBOR value type the JSON view converts to and from, named so that
/// callers need no direct `ciborium` dependency.
pub type CborValue = Cbor;
use serde_json::{Map, Value as Json};

/// Why JSON does not describe a CBOR value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("at {path}: {what}")]
pub struct JsonViewError {
    pub path: String,
    pub what: String,
}

fn err(path: &str, what: impl Into<String>) -> JsonViewError {
    JsonViewError {
        path: if path.is_empty() {
            "/".into()
        } else {
            path.into()
        },
        what: what.into(),
    }
}

const MARKERS: [&str; 5] = ["$bytes", "$tag", "$float", "$int", "$map"];

/// The JSON view of a CBOR value (see the module table).
pub fn to_json(v: &Cbor) -> Json {
    match v {
        Cbor::Null => Json::Null,
        Cbor::Bool(b) => Json::Bool(*b),
        Cbor::Integer(i) => {
            let i = i128::from(*i);
            if let Ok(u) = u64::try_from(i) {
                u.into()
            } else if let Ok(s) = i64::try_from(i) {
                s.into()
            } else {
                serde_json::json!({ "$int": i.to_string() })
            }
        }
        Cbor::Float(f) => match serde_json::Number::from_f64(*f) {
            Some(n) => Json::Number(n),
            None => {
                let s = if f.is_nan() {
                    "NaN"
                } else if *f > 0.0 {
                    "Infinity"
                } else {
                    "-Infinity"
                };
                serde_json::json!({ "$float": s })
            }
        },
        Cbor::Text(s) => Json::String(s.clone()),
        Cbor::Bytes(b) => serde_json::json!({ "$bytes": hex::encode(b) }),
        Cbor::Tag(t, inner) => serde_json::json!({ "$tag": t, "value": to_json(inner) }),
        Cbor::Array(a) => Json::Array(a.iter().map(to_json).collect()),
        Cbor::Map(entries) => {
            let plain = entries.iter().all(|(k, _)| k.is_text())
                && !(entries.len() == 1
                    && entries[0].0.as_text().is_some_and(|k| k.starts_with('$')));
            if plain {
                let mut m = Map::new();
                for (k, v) in entries {
                    if let Some(k) = k.as_text() {
                        m.insert(k.to_owned(), to_json(v));
                    }
                }
                Json::Object(m)
            } else {
                let pairs: Vec<Json> = entries
                    .iter()
                    .map(|(k, v)| Json::Array(vec![to_json(k), to_json(v)]))
                    .collect();
                serde_json::json!({ "$map": pairs })
            }
        }
        _ => Json::Null,
    }
}

/// The CBOR value a JSON view describes.
pub fn from_json(j: &Json) -> Result<Cbor, JsonViewError> {
    from_json_at(j, "")
}

fn from_json_at(j: &Json, path: &str) -> Result<Cbor, JsonViewError> {
    Ok(match j {
        Json::Null => Cbor::Null,
        Json::Bool(b) => Cbor::Bool(*b),
        Json::Number(n) => {
            if let Some(u) = n.as_u64() {
                Cbor::Integer(u.into())
            } else if let Some(i) = n.as_i64() {
                Cbor::Integer(i.into())
            } else {
                Cbor::Float(n.as_f64().ok_or_else(|| err(path, "number out of range"))?)
            }
        }
        Json::String(s) => Cbor::Text(s.clone()),
        Json::Array(a) => Cbor::Array(
            a.iter()
                .enumerate()
                .map(|(i, x)| from_json_at(x, &format!("{path}/{i}")))
                .collect::<Result<_, _>>()?,
        ),
        Json::Object(m) => {
            if let Some(v) = marker(m, path)? {
                return Ok(v);
            }
            Cbor::Map(
                m.iter()
                    .map(|(k, v)| {
                        Ok((
                            Cbor::Text(k.clone()),
                            from_json_at(v, &format!("{path}/{k}"))?,
                        ))
                    })
                    .collect::<Result<_, JsonViewError>>()?,
            )
        }
    })
}

/// A wrapper object, if `m` is one.
fn marker(m: &Map<String, Json>, path: &str) -> Result<Option<Cbor>, JsonViewError> {
    let is = |k: &str| m.contains_key(k);
    if is("$tag") {
        let t = m["$tag"]
            .as_u64()
            .ok_or_else(|| err(path, "$tag must be an unsigned integer"))?;
        if m.len() != 2 || !is("value") {
            return Err(err(
                path,
                "a $tag object has exactly the keys $tag and value",
            ));
        }
        return Ok(Some(Cbor::Tag(
            t,
            Box::new(from_json_at(&m["value"], &format!("{path}/value"))?),
        )));
    }
    if m.len() != 1 {
        return Ok(None);
    }
    let Some((k, v)) = m.iter().next() else {
        return Ok(None);
    };
    if !MARKERS.contains(&k.as_str()) {
        return Ok(None);
    }
    let text = || {
        v.as_str()
            .ok_or_else(|| err(path, format!("{k} takes a string")))
    };
    Ok(Some(match k.as_str() {
        "$bytes" => Cbor::Bytes(
            hex::decode(text()?).map_err(|e| err(path, format!("$bytes is not hex: {e}")))?,
        ),
        "$float" => Cbor::Float(match text()? {
            "NaN" => f64::NAN,
            "Infinity" => f64::INFINITY,
            "-Infinity" => f64::NEG_INFINITY,
            other => {
                return Err(err(
                    path,
                    format!("$float must be NaN, Infinity or -Infinity, not {other:?}"),
                ));
            }
        }),
        "$int" => {
            let i: i128 = text()?
                .parse()
                .map_err(|_| err(path, "$int is not a decimal integer"))?;
            Cbor::Integer(
                ciborium::value::Integer::try_from(i)
                    .map_err(|_| err(path, "$int is beyond 64 bits"))?,
            )
        }
        _ => {
            let pairs = v
                .as_array()
                .ok_or_else(|| err(path, "$map takes an array of [key, value] pairs"))?;
            let mut out = Vec::with_capacity(pairs.len());
            for (i, p) in pairs.iter().enumerate() {
                match p.as_array().map(Vec::as_slice) {
                    Some([k, v]) => out.push((
                        from_json_at(k, &format!("{path}/$map/{i}/0"))?,
                        from_json_at(v, &format!("{path}/$map/{i}/1"))?,
                    )),
                    _ => {
                        return Err(err(
                            path,
                            format!("$map entry {i} is not a [key, value] pair"),
                        ));
                    }
                }
            }
            Cbor::Map(out)
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_what_json_cannot_say() {
        let v = Cbor::Map(vec![
            (Cbor::Text("b".into()), Cbor::Bytes(vec![1, 2])),
            (
                Cbor::Text("t".into()),
                Cbor::Tag(1, Box::new(Cbor::Float(1.5))),
            ),
            (Cbor::Text("n".into()), Cbor::Float(f64::NEG_INFINITY)),
            (
                Cbor::Text("i".into()),
                Cbor::Integer(ciborium::value::Integer::try_from(-(1i128 << 64)).unwrap()),
            ),
            (
                Cbor::Text("m".into()),
                Cbor::Map(vec![(Cbor::Integer(1.into()), Cbor::Null)]),
            ),
            (
                Cbor::Text("d".into()),
                Cbor::Map(vec![(Cbor::Text("$bytes".into()), Cbor::Text("x".into()))]),
            ),
            (Cbor::Text("f".into()), Cbor::Float(1.0)),
        ]);
        let j = to_json(&v);
        assert_eq!(j["b"], serde_json::json!({"$bytes": "0102"}));
        assert_eq!(from_json(&j).unwrap(), v);
        let text = serde_json::to_string(&j).unwrap();
        assert_eq!(from_json(&serde_json::from_str(&text).unwrap()).unwrap(), v);
        assert!(from_json(&serde_json::json!({"$bytes": "zz"})).is_err());
    }
}
