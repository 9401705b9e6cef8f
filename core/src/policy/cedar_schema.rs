//! The Cedar schema the core generates for a capability (issue 21), so that
//! a Cedar policy is type-checked at registry build, never at first call.
//!
//! It describes exactly the request [`super::cedar::CedarCall`] builds:
//!
//! * entity `Actor` with `roles: Set<String>`, `anonymous: Bool` and
//!   `attributes`: the record the policy entry's `actorAttributes` JSON
//!   Schema describes (an empty record when it gives none, so reading an
//!   attribute nobody declared is a build error);
//! * entity `Capability` with `sideEffect`, `risk`, `discovery: String`
//!   and `tags: Set<String>`;
//! * actions `direct`, `aiSdk`, `mcp`, `workflow` and `test`, each a member
//!   of `invoke`, from `Actor` to `Capability`, with the context
//!   `{surface, input, now?, requestId?, traceparent?, agentId?, sessionId?}`,
//!   `input` typed from the capability's input JSON Schema.
//!
//! A JSON Schema becomes a Cedar type where Cedar has one: strings (and
//! string enums) `String`, integers `Long`, booleans `Bool`, arrays `Set`,
//! objects with `properties` a `Record` (required as `required` says). What
//! Cedar cannot express is left out, so a policy that reads it is refused at
//! build: `null`, an untyped or mixed value, and numbers that need not be
//! integers (`number`: declare whole amounts as `integer`). At run time the
//! input is read through the same type (`cedar_value`), so a policy sees
//! exactly what it was checked against.

use serde_json::{Map, Value, json};

use crate::vocab::Surface;

/// How deep `$ref`s and nesting are followed before a type counts as
/// inexpressible.
const MAX_DEPTH: usize = 32;

/// How many schema nodes one input type may visit: `$ref`s can share
/// subtrees, so a small hostile schema could otherwise ask for an
/// exponential walk. Past it, what is left counts as inexpressible (a
/// policy reading it is refused at build: fail closed).
const MAX_NODES: usize = 10_000;

/// A Cedar type (in Cedar's JSON schema form) and whether the value may be
/// absent even when the JSON Schema requires it.
struct CedarType {
    json: Value,
    always_present: bool,
}

/// The Cedar type of the values `schema` accepts, or `None` when Cedar has
/// none (see the module docs).
pub(crate) fn cedar_type(schema: &Value) -> Option<Value> {
    let mut walk = Walk {
        root: schema,
        nodes_left: MAX_NODES,
    };
    walk.type_of(schema, 0).map(|t| t.json)
}

struct Walk<'a> {
    root: &'a Value,
    nodes_left: usize,
}

impl<'a> Walk<'a> {
    fn type_of(&mut self, schema: &'a Value, depth: usize) -> Option<CedarType> {
        if depth > MAX_DEPTH || self.nodes_left == 0 {
            return None;
        }
        self.nodes_left -= 1;
        let root = self.root;
        let obj = schema.as_object()?;
        if let Some(target) = obj.get("$ref").and_then(Value::as_str) {
            return self.type_of(resolve(target, root)?, depth + 1);
        }
        // `T | null` (as `["T", "null"]` or `anyOf: [T, {type: null}]`) is T,
        // absent when null.
        if let Some(branches) = obj.get("anyOf").or_else(|| obj.get("oneOf")) {
            let branches = branches.as_array()?;
            let kept: Vec<&Value> = branches.iter().filter(|b| !is_null_type(b)).collect();
            let [only] = kept.as_slice() else {
                return None;
            };
            let inner = self.type_of(only, depth + 1)?;
            return Some(CedarType {
                always_present: inner.always_present && kept.len() == branches.len(),
                ..inner
            });
        }
        let (name, nullable) = match obj.get("type") {
            Some(Value::String(t)) => (t.as_str(), false),
            Some(Value::Array(types)) => {
                let kept: Vec<&str> = types
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|t| *t != "null")
                    .collect();
                let [only] = kept.as_slice() else {
                    return None;
                };
                (*only, kept.len() != types.len())
            }
            Some(_) => return None,
            None => return constant_type(obj),
        };
        let primitive = |t: &str| {
            Some(CedarType {
                json: json!({"type": t}),
                always_present: !nullable,
            })
        };
        match name {
            "string" => primitive("String"),
            "boolean" => primitive("Boolean"),
            "integer" => primitive("Long"),
            // A number that need not be whole has no Cedar type: left
            // out, so no policy can read it (declare whole amounts as
            // `integer`).
            "number" => None,
            "array" => {
                let items = self.type_of(obj.get("items")?, depth + 1)?;
                Some(CedarType {
                    json: json!({"type": "Set", "element": items.json}),
                    always_present: !nullable,
                })
            }
            "object" => Some(CedarType {
                json: self.record_type(obj, depth),
                always_present: !nullable,
            }),
            _ => None,
        }
    }

    fn record_type(&mut self, obj: &'a Map<String, Value>, depth: usize) -> Value {
        let required: std::collections::HashSet<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut attributes = Map::new();
        if let Some(properties) = obj.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                let Some(t) = self.type_of(property, depth + 1) else {
                    continue;
                };
                let mut attribute = t.json;
                let present = t.always_present && required.contains(name.as_str());
                if !present {
                    attribute["required"] = Value::Bool(false);
                }
                attributes.insert(name.clone(), attribute);
            }
        }
        json!({"type": "Record", "attributes": attributes})
    }
}

/// A schema without `type`: a `const` or an `enum` of one primitive kind.
fn constant_type(obj: &Map<String, Value>) -> Option<CedarType> {
    let values: Vec<&Value> = match (obj.get("const"), obj.get("enum")) {
        (Some(c), _) => vec![c],
        (None, Some(Value::Array(items))) => items.iter().collect(),
        _ => return None,
    };
    let kind = |v: &Value| match v {
        Value::String(_) => Some("String"),
        Value::Bool(_) => Some("Boolean"),
        Value::Number(n) if n.is_i64() => Some("Long"),
        _ => None,
    };
    let first = kind(values.first()?)?;
    values
        .iter()
        .all(|v| kind(v) == Some(first))
        .then(|| CedarType {
            json: json!({"type": first}),
            always_present: true,
        })
}

fn is_null_type(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

/// A local `$ref` (`#/$defs/x`, `#/definitions/x`, any JSON Pointer into
/// the root); remote references are not followed.
fn resolve<'a>(target: &str, root: &'a Value) -> Option<&'a Value> {
    let pointer = target.strip_prefix('#')?;
    let decoded = percent_decode(pointer)?;
    root.pointer(&decoded)
}

fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The type of `context.input` a policy is checked against, from the type
/// the input is read through ([`input_type`]): that type (a record for an
/// object; a string input is a `String`, so testing it with `has` is
/// refused, as it would fail at run time), or, for an input read untyped,
/// an empty record, so only a read behind `has` type-checks.
pub(crate) fn checked_input_type(read: Option<&Value>) -> Value {
    read.cloned()
        .unwrap_or_else(|| json!({"type": "Record", "attributes": {}}))
}

/// The Cedar type a capability's input is read through at run time
/// (`cedar_value::typed`): its schema's, when it has one Cedar can express
/// and that is always present; `None` reads it untyped.
pub fn input_type(schema: Option<&Value>) -> Option<Value> {
    schema
        .and_then(|schema| {
            let mut walk = Walk {
                root: schema,
                nodes_left: MAX_NODES,
            };
            walk.type_of(schema, 0)
        })
        .filter(|t| t.always_present)
        .map(|t| t.json)
}

/// The whole schema for one capability, in Cedar's JSON schema form.
/// `input`: the Cedar type of its input (`None`: the context has no typed
/// `input`); `actor_attributes`: the Cedar type of the actor's attributes.
pub(crate) fn schema_json(input: Option<&Value>, actor_attributes: Option<&Value>) -> Value {
    let string = || json!({"type": "String"});
    let optional_string = || json!({"type": "String", "required": false});
    let mut context = Map::new();
    context.insert("surface".into(), string());
    if let Some(input) = input {
        context.insert("input".into(), input.clone());
    }
    for key in ["requestId", "traceparent", "agentId", "sessionId"] {
        context.insert(key.into(), optional_string());
    }
    // Always there for a set that reads it: a call without a clock fails
    // such a set (closed) rather than leaving `now` out.
    context.insert(
        "now".into(),
        json!({"type": "Extension", "name": "datetime"}),
    );
    let applies_to = json!({
        "principalTypes": ["Actor"],
        "resourceTypes": ["Capability"],
        "context": {"type": "Record", "attributes": context},
    });
    let mut actions = Map::new();
    actions.insert("invoke".into(), json!({}));
    for surface in Surface::ALL {
        actions.insert(
            surface.as_str().into(),
            json!({"memberOf": [{"id": "invoke"}], "appliesTo": applies_to}),
        );
    }
    let attributes = actor_attributes
        .cloned()
        .unwrap_or_else(|| json!({"type": "Record", "attributes": {}}));
    json!({"": {
        "entityTypes": {
            "Actor": {"shape": {"type": "Record", "attributes": {
                "roles": {"type": "Set", "element": string()},
                "anonymous": {"type": "Boolean"},
                "attributes": attributes,
            }}},
            "Capability": {"shape": {"type": "Record", "attributes": {
                "sideEffect": string(),
                "risk": string(),
                "discovery": string(),
                "tags": {"type": "Set", "element": string()},
            }}},
        },
        "actions": actions,
    }})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_schema_types_become_cedar_types() {
        let schema = json!({
            "type": "object",
            "required": ["cents", "note", "tags", "when", "ratio", "maybe"],
            "properties": {
                "cents": {"type": "integer"},
                "note": {"type": "string", "maxLength": 10},
                "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
                "when": {"$ref": "#/$defs/when"},
                "ratio": {"type": "number"},
                "maybe": {"type": ["boolean", "null"]},
                "anything": {},
                "mixed": {"enum": ["a", 1]}
            },
            "$defs": {"when": {"type": "object", "properties": {"hour": {"type": "integer"}}}}
        });
        assert_eq!(
            cedar_type(&schema).unwrap(),
            json!({"type": "Record", "attributes": {
                "cents": {"type": "Long"},
                "note": {"type": "String"},
                "tags": {"type": "Set", "element": {"type": "String"}},
                "when": {"type": "Record", "attributes": {
                    "hour": {"type": "Long", "required": false}
                }},
                "maybe": {"type": "Boolean", "required": false}
            }})
        );
    }

    #[test]
    fn the_input_type_is_the_schema_s_when_always_present() {
        let object = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert_eq!(
            checked_input_type(input_type(Some(&object)).as_ref())["type"],
            "Record"
        );
        assert_eq!(
            checked_input_type(input_type(Some(&json!({"type": "string"}))).as_ref()),
            json!({"type": "String"})
        );
        let empty = json!({"type": "Record", "attributes": {}});
        for schema in [
            json!({"type": "number"}),
            json!({"type": ["object", "null"]}),
            json!({}),
        ] {
            assert_eq!(input_type(Some(&schema)), None, "{schema}");
        }
        assert_eq!(checked_input_type(None), empty);
    }

    #[test]
    fn what_cedar_cannot_express_is_none() {
        for schema in [
            json!({}),
            json!({"type": "null"}),
            json!({"type": ["string", "integer"]}),
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
            json!({"$ref": "https://example.com/x"}),
            json!({"type": "array"}),
        ] {
            assert_eq!(cedar_type(&schema), None, "{schema}");
        }
        // A reference cycle ends at the depth bound.
        let cycle = json!({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}});
        assert_eq!(cedar_type(&cycle), None);
    }

    #[test]
    fn shared_references_cannot_ask_for_an_exponential_walk() {
        // Each level refers to the next twice: 2^30 paths, cut at the budget.
        let mut defs = Map::new();
        for i in 0..30 {
            let next = json!({"$ref": format!("#/$defs/d{}", i + 1)});
            defs.insert(
                format!("d{i}"),
                json!({"type": "object", "properties": {"a": next, "b": next}}),
            );
        }
        defs.insert("d30".into(), json!({"type": "integer"}));
        let schema = json!({"$ref": "#/$defs/d0", "$defs": defs});
        let t = cedar_type(&schema).expect("the top is still a record");
        assert_eq!(t["type"], "Record");
    }
}
