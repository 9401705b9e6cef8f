//! The `check` and `inspect` commands as a user runs them: exit codes,
//! every problem listed, file/line/column on parse errors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_orpc-agent"))
}

fn repo(path: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path)
        .to_string_lossy()
        .into_owned()
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn temp_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("orpc-agent-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn six_problems_are_all_reported() {
    let o = run(&["check", &repo("examples/declarations/broken.toml")]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    for needle in [
        "orders.search: description: description is required [MISSING_FIELD]",
        "orders.refund: expose.chat: unknown surface `chat`",
        "[UNKNOWN_SURFACE]",
        "orders.refund: sideEffect: unknown value `payment`",
        "[UNKNOWN_VALUE]",
        "orders.cancel: timeoutMs: must be at least 1, got 0 [NON_POSITIVE]",
        "orders.cancel: retry: retry on a `destructive` capability requires `idempotent: true` [RETRY_NOT_IDEMPOTENT]",
        "orders.lookup: adapters.mcp.toolName: mcp tool name `orders_search` is already taken by capability `orders.search` [TOOL_NAME_COLLISION]",
        "6 problems",
    ] {
        assert!(err.contains(needle), "missing {needle:?} in:\n{err}");
    }
}

#[test]
fn valid_file_checks_clean_and_inspects() {
    let file = repo("examples/declarations/orders.json");
    let o = run(&["check", &file]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("5 capabilities valid, 2 warnings"));

    let o = run(&["inspect", &file]);
    assert_eq!(o.status.code(), Some(0));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("orders.cancel"));
    assert!(table.contains("required (human-confirmation)"));
    assert!(table.contains("[EXPOSE_EMPTY]"));

    let o = run(&["inspect", &file, "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["valid"], true);
    assert_eq!(v["capabilities"].as_array().unwrap().len(), 5);
    let refund = &v["capabilities"][1];
    assert_eq!(refund["id"], "orders.refund");
    assert_eq!(refund["toolNames"]["mcp"], "orders.refund");
    assert_eq!(refund["toolNames"]["aiSdk"], "orders_refund");
    assert_eq!(refund["resolved"]["timeoutMs"], 15000);
    assert_eq!(v["capabilities"][0]["resolved"]["timeoutMs"], 10000);
}

#[test]
fn inspect_of_an_invalid_file_reports_and_exits_1() {
    let o = run(&[
        "inspect",
        &repo("examples/declarations/broken.toml"),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["valid"], false);
    assert_eq!(v["problems"].as_array().unwrap().len(), 6);
}

#[test]
fn parse_errors_name_file_line_and_column() {
    let json = temp_file(
        "bad.json",
        "{\"capabilities\": {\n  \"a\": {\"risk\": }\n}}",
    );
    let o = run(&["check", &json]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(&format!("{json}:2:")), "{}", stderr(&o));

    let toml = temp_file("bad.toml", "[capabilities.a]\nrisk = \"low\nx = 1\n");
    let o = run(&["check", &toml]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(&format!("{toml}:2:")), "{}", stderr(&o));

    let dup = temp_file("dup.json", "{\"capabilities\": {\"a\": {}, \n\"a\": {}}}");
    let o = run(&["check", &dup]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("duplicate key `a`"), "{}", stderr(&o));
}

#[test]
fn wrong_types_unknown_fields_and_values_are_problems() {
    let f = temp_file(
        "types.json",
        r#"{"capabilities": {"a": {"description": 3, "expose": {"mcp": "yes"}, "sideEffect": "delete",
            "risk": "low", "retries": 2, "timeoutMs": "30s"}}}"#,
    );
    let o = run(&["check", &f]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    for needle in [
        "a: description: expected a string, got a number [WRONG_TYPE]",
        "a: expose.mcp: expected a boolean, got a string [WRONG_TYPE]",
        "a: sideEffect: unknown value `delete`",
        "a: retries: unknown field `retries` [UNKNOWN_FIELD]",
        "a: timeoutMs: expected an integer, got a string [WRONG_TYPE]",
        "5 problems",
    ] {
        assert!(err.contains(needle), "missing {needle:?} in:\n{err}");
    }
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        vec![],
        vec!["check"],
        vec!["check", "a.json", "b.json"],
        vec!["inspect", "x.json", "--yaml"],
        vec!["frobnicate"],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(!stderr(&o).is_empty(), "{args:?}");
    }
    let o = run(&["check", "/nonexistent/decl.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot read /nonexistent/decl.json"));
    let o = run(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn structural_errors_exit_2() {
    for text in [
        "[]",
        "{}",
        "{\"capabilities\": []}",
        "{\"capabilities\": {}, \"extra\": 1}",
    ] {
        let f = temp_file("structure.json", text);
        let o = run(&["check", &f]);
        assert_eq!(o.status.code(), Some(2), "{text}: {}", stderr(&o));
    }
}

#[test]
fn binary_garbage_is_an_error_not_a_panic() {
    let dir = std::env::temp_dir().join(format!("orpc-agent-cli-bin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("garbage.json");
    std::fs::write(&p, [0xff, 0xfe, 0x00, 0x7b]).unwrap();
    let o = run(&["check", &p.to_string_lossy()]);
    assert_eq!(o.status.code(), Some(2));
}
