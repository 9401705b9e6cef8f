//! docs/cedar.md runs as written: every block marked `file=NAME` is written
//! to a scratch directory, and every `$ orpc-agent …` line of a `console`
//! block is run there and must print exactly the lines that follow it
//! (standard output, then standard error).
//!
//! `ORPC_AGENT_PRINT_RECIPES=1` prints what each command printed instead of
//! failing, for writing the page.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

struct Block {
    info: String,
    body: String,
}

fn blocks(markdown: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.strip_prefix("```") else {
            continue;
        };
        let mut body = String::new();
        for inner in lines.by_ref() {
            if inner == "```" {
                break;
            }
            body.push_str(inner);
            body.push('\n');
        }
        out.push(Block {
            info: info.trim().to_owned(),
            body,
        });
    }
    out
}

/// `$ orpc-agent args…` lines and the output each one expects.
fn commands(console: &str) -> Vec<(Vec<String>, String)> {
    let mut out: Vec<(Vec<String>, String)> = Vec::new();
    for line in console.lines() {
        if let Some(cmd) = line.strip_prefix("$ ") {
            let words: Vec<String> = cmd.split_whitespace().map(str::to_owned).collect();
            assert_eq!(words[0], "orpc-agent", "only orpc-agent runs: {line}");
            out.push((words[1..].to_vec(), String::new()));
        } else {
            let last = out.last_mut().expect("output before any command");
            last.1.push_str(line);
            last.1.push('\n');
        }
    }
    out
}

fn run(dir: &Path, args: &[String]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_orpc-agent"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let mut text = String::from_utf8(o.stdout).unwrap();
    text.push_str(&String::from_utf8(o.stderr).unwrap());
    text
}

#[test]
fn the_cedar_page_runs_as_written() {
    let page = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/cedar.md");
    let markdown = std::fs::read_to_string(&page).unwrap();
    let dir = std::env::temp_dir().join(format!("orpc-agent-cedar-recipes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let print = std::env::var_os("ORPC_AGENT_PRINT_RECIPES").is_some();
    let (mut files, mut ran, mut failures) = (0, 0, Vec::new());
    for block in blocks(&markdown) {
        if let Some(name) = block
            .info
            .split_whitespace()
            .find_map(|w| w.strip_prefix("file="))
        {
            std::fs::write(dir.join(name), &block.body).unwrap();
            files += 1;
        } else if block.info == "console" {
            for (args, expected) in commands(&block.body) {
                let actual = run(&dir, &args);
                ran += 1;
                if print {
                    println!("$ orpc-agent {}\n{actual}", args.join(" "));
                } else if actual != expected {
                    failures.push(format!(
                        "$ orpc-agent {}\nexpected:\n{expected}actual:\n{actual}",
                        args.join(" ")
                    ));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        files >= 10 && ran >= 9,
        "the page lost its recipes: {files} files, {ran} commands"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `policy eval` says what is wrong in the library's words: usage and
/// unreadable files exit 2, a policy with problems exits 1.
#[test]
fn policy_eval_errors_are_clear() {
    let dir = std::env::temp_dir().join(format!("orpc-agent-cedar-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    write("ok.cedar", "permit (principal, action, resource);");
    write("bad.cedar", "permit (principal, action resource);");
    write(
        "req.json",
        r#"{"capability": {"id": "a", "sideEffect": "read", "risk": "low"}, "frame": {"surface": "mcp"}}"#,
    );
    write(
        "named.json",
        r#"{"capability": "a", "frame": {"surface": "mcp"}}"#,
    );
    write("broken.json", "{\"capability\": \n  nope}");
    write(
        "surface.json",
        r#"{"capability": {"id": "a", "sideEffect": "read", "risk": "low"}, "frame": {"surface": "toString"}}"#,
    );
    let eval = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_orpc-agent"))
            .arg("policy")
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8(o.stdout).unwrap(),
            String::from_utf8(o.stderr).unwrap(),
        )
    };

    let (code, out, _) = eval(&["eval", "ok.cedar", "req.json"]);
    assert_eq!(
        (code, out.as_str()),
        (Some(0), "decision: allow\ndetermining policies: policy0\n")
    );
    let (code, _, err) = eval(&["eval", "bad.cedar", "req.json"]);
    assert_eq!(code, Some(1));
    assert!(
        err.starts_with("bad.cedar: Cedar, line 1, column "),
        "{err}"
    );
    let (code, _, err) = eval(&["eval", "ok.cedar", "broken.json"]);
    assert_eq!(code, Some(2));
    assert_eq!(err, "broken.json:2:4: error: expected ident\n");
    let (code, _, err) = eval(&["eval", "ok.cedar", "named.json"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("give --declarations FILE"), "{err}");
    let (code, _, err) = eval(&["eval", "ok.cedar", "surface.json"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("`frame`"), "{err}");
    for usage in [
        &["eval", "ok.cedar"][..],
        &["eval", "ok.cedar", "req.json", "--nope"],
        &["nope"],
        &[],
    ] {
        assert_eq!(eval(usage).0, Some(2), "{usage:?}");
    }
    let (code, _, err) = eval(&["eval", "missing.cedar", "req.json"]);
    assert_eq!(code, Some(2));
    assert!(
        err.starts_with("orpc-agent: cannot read missing.cedar"),
        "{err}"
    );

    // A declaration's `cedarFile`: unreadable, beside a `cedar`, or with a
    // problem (named by its file, line and column).
    let check = |file: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_orpc-agent"))
            .args(["check", file])
            .current_dir(&dir)
            .output()
            .unwrap();
        (o.status.code(), String::from_utf8(o.stderr).unwrap())
    };
    let cap = r#""description": "d", "expose": {"mcp": true}, "sideEffect": "read", "risk": "low""#;
    let with_policy =
        |policy: &str| format!(r#"{{"capabilities": {{"a": {{{cap}, "policies": [{policy}]}}}}}}"#);
    write(
        "nofile.json",
        &with_policy(r#"{"cedarFile": "nope.cedar"}"#),
    );
    let (code, err) = check("nofile.json");
    assert_eq!(code, Some(2));
    assert!(
        err.starts_with("nofile.json: error: capabilities.a.policies[0].cedarFile: cannot read "),
        "{err}"
    );
    for outside in ["../x.cedar", "/etc/passwd", "a/../../x.cedar"] {
        write(
            "outside.json",
            &with_policy(&format!(r#"{{"cedarFile": "{outside}"}}"#)),
        );
        let (code, err) = check("outside.json");
        assert_eq!(code, Some(2), "{outside}");
        assert!(
            err.contains("must be a relative path inside the declaration file's directory"),
            "{err}"
        );
    }
    write(
        "both.json",
        &with_policy(
            r#"{"cedar": "permit (principal, action, resource);", "cedarFile": "ok.cedar"}"#,
        ),
    );
    let (code, err) = check("both.json");
    assert_eq!(code, Some(2));
    assert!(err.contains("`cedar` or in `cedarFile`, not both"), "{err}");
    write(
        "bad-file.json",
        &with_policy(r#"{"cedarFile": "bad.cedar"}"#),
    );
    let (code, err) = check("bad-file.json");
    assert_eq!(code, Some(1));
    assert!(
        err.starts_with("bad-file.json: a: policies[0].cedar: bad.cedar, line 1, column "),
        "{err}"
    );
    // `policy eval` over declarations that have problems: exit 1, listed.
    write(
        "named-a.json",
        r#"{"capability": "a", "frame": {"surface": "mcp"}}"#,
    );
    let (code, _, err) = eval(&[
        "eval",
        "ok.cedar",
        "named-a.json",
        "--declarations",
        "bad-file.json",
    ]);
    assert_eq!(code, Some(1));
    assert!(
        err.starts_with("bad-file.json: a: policies[0].cedar: bad.cedar, line 1"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
