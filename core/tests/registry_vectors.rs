//! Runs tests/vectors/registry/*.json: the language-neutral registry-build
//! and inspect() vectors every binding runs too.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::PathBuf;

use orpc_agent_core::{CapabilityDecl, CapabilityRegistry, Surface};
use serde_json::Value;

fn vector_files(suite: &str) -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/vectors")
        .join(suite);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no vectors in {}", dir.display());
    files
}

type Key = (Option<String>, String, String);

fn keys(list: &Value) -> BTreeSet<Key> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["capability"].as_str().map(str::to_owned),
                p["path"].as_str().unwrap().to_owned(),
                p["code"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// `expected` is a subset of `actual`: objects by key, arrays element-wise
/// with equal length, scalars equal.
fn subset(expected: &Value, actual: &Value, path: &str) -> Result<(), String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, v) in e {
                let next = format!("{path}.{k}");
                match a.get(k) {
                    Some(av) => subset(v, av, &next)?,
                    None if v.is_null() => {}
                    None => return Err(format!("{next}: missing")),
                }
            }
            Ok(())
        }
        (Value::Array(e), Value::Array(a)) if e.len() == a.len() => e
            .iter()
            .zip(a)
            .enumerate()
            .try_for_each(|(i, (x, y))| subset(x, y, &format!("{path}[{i}]"))),
        (e, a) if e == a => Ok(()),
        (e, a) => Err(format!("{path}: expected {e}, got {a}")),
    }
}

fn decls(case: &Value) -> Vec<CapabilityDecl> {
    case["capabilities"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(id, meta)| CapabilityDecl::new(id.clone(), meta.clone()))
        .collect()
}

fn run_case(case: &Value) -> Result<(), String> {
    let options = case
        .get("options")
        .cloned()
        .unwrap_or(Value::Object(Default::default()));
    let expect = &case["expect"];
    let built = CapabilityRegistry::build_with_json_options(decls(case), &options);
    if expect["valid"] == false {
        let err = match built {
            Ok(_) => return Err("built, but problems were expected".into()),
            Err(e) => e,
        };
        let actual: BTreeSet<Key> = err
            .problems
            .iter()
            .map(|p| {
                (
                    p.capability.clone(),
                    p.path.clone(),
                    p.code.as_str().to_owned(),
                )
            })
            .collect();
        let expected = keys(&expect["problems"]);
        if actual != expected {
            return Err(format!(
                "problems differ:\n  expected {expected:?}\n  actual   {actual:?}"
            ));
        }
        if err.problems.len() != actual.len() {
            return Err(format!("duplicate problems reported: {:?}", err.problems));
        }
        return Ok(());
    }
    let reg = built.map_err(|e| format!("expected a valid registry: {e}"))?;
    let report = reg.inspect();
    let actual: BTreeSet<Key> = report
        .capabilities
        .iter()
        .flat_map(|c| {
            c.warnings.iter().map(|w| {
                (
                    Some(c.id.clone()),
                    w.path.clone(),
                    w.code.as_str().to_owned(),
                )
            })
        })
        .collect();
    let expected = keys(&expect["warnings"]);
    if actual != expected {
        return Err(format!(
            "warnings differ:\n  expected {expected:?}\n  actual   {actual:?}"
        ));
    }
    if let Some(resolved) = expect.get("resolved").and_then(Value::as_object) {
        for (id, exp) in resolved {
            let c = report
                .capabilities
                .iter()
                .find(|c| &c.id == id)
                .ok_or_else(|| format!("no capability {id}"))?;
            subset(exp, &c.resolved, id)?;
        }
    }
    if let Some(names) = expect.get("toolNames").and_then(Value::as_object) {
        for (id, exp) in names {
            let c = reg
                .resolve(id)
                .ok_or_else(|| format!("no capability {id}"))?;
            let actual = serde_json::json!({"aiSdk": c.ai_sdk_tool_name, "mcp": c.mcp_tool_name});
            subset(exp, &actual, id)?;
            // Every name resolves to the same capability (stage 1).
            for n in [&c.ai_sdk_tool_name, &c.mcp_tool_name] {
                if reg.resolve(n).map(|x| &x.id) != Some(&c.id) {
                    return Err(format!("{n} does not resolve to {id}"));
                }
            }
        }
    }
    if let Some(exposed) = expect.get("exposedOn").and_then(Value::as_object) {
        for (surface, ids) in exposed {
            let s = Surface::parse(surface).ok_or_else(|| format!("bad surface {surface}"))?;
            let actual: Vec<String> = reg.descriptors(s).into_iter().map(|d| d.id).collect();
            let expected: Vec<String> = ids
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_owned())
                .collect();
            if actual != expected {
                return Err(format!(
                    "exposed on {surface}: expected {expected:?}, got {actual:?}"
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn registry_vectors() {
    let mut failures = Vec::new();
    let mut count = 0;
    for file in vector_files("registry") {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(doc["suite"], "registry", "{}", file.display());
        for case in doc["cases"].as_array().unwrap() {
            count += 1;
            if let Err(e) = run_case(case) {
                failures.push(format!(
                    "{} / {}: {e}",
                    file.file_name().unwrap().to_string_lossy(),
                    case["name"].as_str().unwrap_or("?")
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {count} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(count >= 70, "only {count} registry cases");
}
