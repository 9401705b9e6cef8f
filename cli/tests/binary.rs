//! The `meta`, `component`, `manifest` and `hash` commands and `--version`,
//! run through the built binary as a user (and `make demo-cli`) runs them:
//! what they print, not only their exit codes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path)
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_orpc-agent"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit code `code`, or a panic showing what the command said.
fn expect_code(o: &Output, code: i32, what: &str) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "{what}\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        stderr(o)
    );
}

/// A scratch directory per test, removed at the end.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let p = std::env::temp_dir().join(format!("orpc-agent-bin-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Dir(p)
    }

    fn file(&self, name: &str, contents: &[u8]) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, contents).unwrap();
        p.to_string_lossy().into_owned()
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn version_is_the_crate_version() {
    for flag in ["--version", "-V"] {
        let o = run(&[flag]);
        expect_code(&o, 0, flag);
        assert_eq!(
            stdout(&o),
            format!("orpc-agent {}\n", env!("CARGO_PKG_VERSION")),
            "{flag}"
        );
    }
}

#[test]
fn hash_prints_the_vector_sha256_of_every_json_input() {
    // tests/vectors/hash/input_hash.json: the expected hashes were made by
    // tests/cross (Python cbor2), not by the Rust encoder behind the CLI.
    let vectors = read_json(&repo("tests/vectors/hash/input_hash.json"));
    let d = Dir::new("hash-vectors");
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (i, case) in vectors["cases"].as_array().unwrap().iter().enumerate() {
        // `input_cbor` cases hold values JSON cannot carry; every rejected
        // case is one of them.
        let Some(input) = case.get("input") else {
            continue;
        };
        let file = d.file(&format!("in-{i}.json"), input.to_string().as_bytes());
        let capability = case["capability"].as_str().unwrap();
        let o = run(&["hash", "--capability", capability, &file]);
        let name = case["name"].as_str().unwrap();
        expect_code(&o, 0, name);
        let expected = format!("{}\n", case["sha256"].as_str().unwrap());
        if stdout(&o) != expected {
            wrong.push(format!(
                "{name}: printed {:?}, vector {expected:?}",
                stdout(&o)
            ));
        }
        checked += 1;
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(checked >= 35, "only {checked} JSON-input hash vectors");
}

#[test]
fn hash_of_the_demo_refund_and_its_errors() {
    // The refund `make demo-cli` hashes; the value is what
    // tests/cross/hashnorm.py and test_cbor2.py's encoder written apart
    // both give for it.
    let o = run(&[
        "hash",
        "--capability",
        "orders.refund",
        repo("examples/act/refund-input.json").to_str().unwrap(),
    ]);
    expect_code(&o, 0, "hash refund");
    assert_eq!(
        stdout(&o),
        "e1e658db4cc28770a015ad68a22d9baedf4be4890f5bbfd4549f7a028558ea22\n"
    );
    // The capability is part of what is hashed.
    let other = run(&[
        "hash",
        "--capability",
        "orders.cancel",
        repo("examples/act/refund-input.json").to_str().unwrap(),
    ]);
    expect_code(&other, 0, "hash under another id");
    assert_ne!(stdout(&other), stdout(&o));

    let d = Dir::new("hash-errors");
    let not_json = d.file("bad.json", b"{\"a\": ");
    let o = run(&["hash", "--capability", "c", &not_json]);
    expect_code(&o, 2, "not JSON");
    assert!(o.stdout.is_empty());
    assert!(
        stderr(&o).contains(&format!("{not_json}: not JSON")),
        "{}",
        stderr(&o)
    );
    let o = run(&["hash", &not_json]);
    expect_code(&o, 2, "missing --capability");
    assert!(
        stderr(&o).contains("missing --capability"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn meta_encode_then_decode_gives_the_json_back() {
    let d = Dir::new("meta");
    let source = repo("examples/act/tool-definition.json");
    let source_s = source.to_str().unwrap();
    let cbor = d.path("tool.cbor");
    let o = run(&["meta", "encode", source_s, "-o", &cbor]);
    expect_code(&o, 0, "encode -o");
    let bytes = std::fs::read(&cbor).unwrap();
    assert_eq!(bytes[0], 0xa7, "a map of the file's 7 keys");

    // The same bytes as hex, and raw on a stdout that is not a terminal.
    let o = run(&["meta", "encode", source_s, "--hex"]);
    expect_code(&o, 0, "encode --hex");
    assert_eq!(stdout(&o), format!("{}\n", hex(&bytes)));
    let o = run(&["meta", "encode", source_s]);
    expect_code(&o, 0, "encode to stdout");
    assert_eq!(o.stdout, bytes);

    // Deterministic: the same map written in another key order encodes alike.
    let mut reversed = serde_json::Map::new();
    let original = read_json(&source);
    for (k, v) in original.as_object().unwrap().iter().rev() {
        reversed.insert(k.clone(), v.clone());
    }
    let again = d.file(
        "reordered.json",
        Value::Object(reversed).to_string().as_bytes(),
    );
    let o = run(&["meta", "encode", &again, "--hex"]);
    expect_code(&o, 0, "encode reordered");
    assert_eq!(stdout(&o), format!("{}\n", hex(&bytes)));

    // Decoding gives the source JSON back, from raw bytes and from hex text.
    let o = run(&["meta", "decode", &cbor]);
    expect_code(&o, 0, "decode");
    assert_eq!(
        serde_json::from_str::<Value>(&stdout(&o)).unwrap(),
        original
    );
    let hex_file = d.file("tool.hex", format!("{}\n", hex(&bytes)).as_bytes());
    let o = run(&["meta", "decode", "--hex", &hex_file]);
    expect_code(&o, 0, "decode --hex");
    assert_eq!(
        serde_json::from_str::<Value>(&stdout(&o)).unwrap(),
        original
    );

    // Diagnostic notation, in the encoding's key order (RFC 8949 §4.2.1:
    // shorter encoded keys first, then bytewise).
    let o = run(&["meta", "decode", "--diag", &cbor]);
    expect_code(&o, 0, "decode --diag");
    assert_eq!(
        stdout(&o),
        concat!(
            r#"{"std:tags": ["orders"], "acme:priority": 3, "std:read-only": false, "#,
            r#""std:idempotent": false, "std:timeout-ms": 15000, "std:destructive": true, "#,
            r#""std:usage-hints": {"en": "Cancel an order that has not shipped yet.", "#,
            r#""fr": "Annuler une commande pas encore expédiée."}}"#,
            "\n"
        )
    );

    // Byte strings, tags and floats: {"$bytes": hex} and {"$tag", "value"}
    // in the JSON view, h'..' and n(..) in diagnostic notation.
    let view = json!({"acme:blob": {"$bytes": "00ff10"}, "acme:f": 1.5, "acme:t": {"$tag": 1, "value": 5}});
    let blob = d.file("blob.json", view.to_string().as_bytes());
    let blob_cbor = d.path("blob.cbor");
    expect_code(
        &run(&["meta", "encode", &blob, "-o", &blob_cbor]),
        0,
        "encode bytes",
    );
    assert_eq!(
        hex(&std::fs::read(&blob_cbor).unwrap()),
        concat!(
            "a3",                   // map(3)
            "6661636d653a66",       // "acme:f"
            "f93e00",               // 1.5 as a half
            "6661636d653a74",       // "acme:t"
            "c105",                 // tag 1 (5)
            "6961636d653a626c6f62", // "acme:blob"
            "4300ff10",             // bytes(3)
        )
    );
    let o = run(&["meta", "decode", &blob_cbor]);
    expect_code(&o, 0, "decode bytes");
    assert_eq!(serde_json::from_str::<Value>(&stdout(&o)).unwrap(), view);
    let o = run(&["meta", "decode", "--diag", &blob_cbor]);
    expect_code(&o, 0, "diag bytes");
    assert_eq!(
        stdout(&o),
        "{\"acme:f\": 1.5, \"acme:t\": 1(5), \"acme:blob\": h'00ff10'}\n"
    );

    // Bytes that are not CBOR metadata: exit 2, naming the file.
    let junk = d.file("junk.cbor", &[0x9f, 0x01]);
    let o = run(&["meta", "decode", &junk]);
    expect_code(&o, 2, "decode junk");
    assert!(stderr(&o).contains(&junk), "{}", stderr(&o));
}

#[test]
fn meta_check_depends_on_the_position() {
    let d = Dir::new("meta-check");
    let cbor = d.path("tool.cbor");
    let source = repo("examples/act/tool-definition.json");
    expect_code(
        &run(&["meta", "encode", source.to_str().unwrap(), "-o", &cbor]),
        0,
        "encode",
    );
    let o = run(&["meta", "check", "--position", "tool-definition", &cbor]);
    expect_code(&o, 0, "tool-definition");
    assert_eq!(
        stdout(&o),
        format!("{cbor}: ok (7 keys, position tool-definition)\n")
    );
    // Per-call metadata may not carry definition keys: one error per std: key.
    let o = run(&["meta", "check", "--position", "tool-call", &cbor]);
    expect_code(&o, 1, "tool-call");
    let out = stdout(&o);
    let mut flagged: Vec<&str> = out
        .lines()
        .map(|l| {
            assert!(l.ends_with("(allowed: tool-definition)"), "{l}");
            let rest = l.strip_prefix(&format!("{cbor}: error ")).unwrap();
            let (key, rest) = rest.split_once(' ').unwrap();
            assert!(rest.starts_with("[NOT_ALLOWED_HERE]"), "{l}");
            key
        })
        .collect();
    flagged.sort_unstable();
    assert_eq!(
        flagged,
        [
            "std:destructive",
            "std:idempotent",
            "std:read-only",
            "std:tags",
            "std:timeout-ms",
            "std:usage-hints"
        ]
    );
    let o = run(&["meta", "check", "--position", "nowhere", &cbor]);
    expect_code(&o, 2, "unknown position");
    assert!(
        stderr(&o).contains("unknown position \"nowhere\""),
        "{}",
        stderr(&o)
    );
}

#[test]
fn manifest_check_exit_codes() {
    let good = repo("examples/act/act.toml");
    let good = good.to_str().unwrap();
    let o = run(&["manifest", "check", good]);
    expect_code(&o, 0, "good manifest");
    assert_eq!(
        stdout(&o),
        format!("{good}: ok (orders-component 1.2.0, 2 capabilities)\n")
    );

    let d = Dir::new("manifest");
    let bad = d.file("bad.toml", b"[std]\nname = \"t\"\nversion = \"one\"\n");
    let o = run(&["manifest", "check", &bad]);
    expect_code(&o, 1, "invalid version");
    assert!(o.stdout.is_empty());
    assert!(
        stderr(&o).contains(&format!("{bad}: error version [INVALID_VALUE]")),
        "{}",
        stderr(&o)
    );
    let broken = d.file("broken.toml", b"[std\n");
    let o = run(&["manifest", "check", &broken]);
    expect_code(&o, 2, "not TOML");
    assert!(
        stderr(&o).contains(&format!("{broken}: not valid TOML"))
            && stderr(&o).contains("line 1, column 5"),
        "{}",
        stderr(&o)
    );
    let o = run(&["manifest", "check", &d.path("missing.toml")]);
    expect_code(&o, 2, "missing file");
}

/// The payload of the one custom section named `name` appended after
/// `module` (a wasm module: section id 0, LEB128 size, name, payload).
fn appended_custom_section<'a>(out: &'a [u8], module: &[u8], name: &str) -> &'a [u8] {
    assert!(out.starts_with(module), "the module is kept as it was");
    let rest = &out[module.len()..];
    assert_eq!(rest[0], 0, "a custom section");
    let (mut size, mut shift, mut i) = (0usize, 0, 1);
    loop {
        let b = rest[i];
        size |= usize::from(b & 0x7f) << shift;
        shift += 7;
        i += 1;
        if b & 0x80 == 0 {
            break;
        }
    }
    let body = &rest[i..];
    assert_eq!(body.len(), size, "one section, to the end of the file");
    assert_eq!(usize::from(body[0]), name.len());
    assert_eq!(&body[1..=name.len()], name.as_bytes());
    &body[1 + name.len()..]
}

#[test]
fn component_embed_then_inspect_round_trip() {
    let d = Dir::new("component");
    let module = b"\0asm\x01\0\0\0";
    let wasm = d.file("empty.wasm", module);
    let out = d.path("orders.wasm");
    let manifest = repo("examples/act/act.toml");
    let o = run(&[
        "component",
        "embed",
        "--manifest",
        manifest.to_str().unwrap(),
        &wasm,
        "-o",
        &out,
    ]);
    expect_code(&o, 0, "embed");
    assert_eq!(
        stdout(&o),
        format!("{out}: embedded act:component for orders-component 1.2.0\n")
    );

    let o = run(&["component", "inspect", &out]);
    expect_code(&o, 0, "inspect");
    let got: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(got["name"], "orders-component");
    assert_eq!(got["version"], "1.2.0");
    assert_eq!(got["defaultLanguage"], "en");
    assert_eq!(
        got["description"],
        json!({"en": "Order management tools", "de": "Werkzeuge für Bestellungen"})
    );
    let caps = got["capabilities"].as_array().unwrap();
    let by_id = |id: &str| caps.iter().find(|c| c["id"] == id).unwrap().clone();
    assert_eq!(caps.len(), 2);
    assert_eq!(
        by_id("wasi:http"),
        json!({"id": "wasi:http", "description": "Calls the order service.", "allow": [], "mountRoot": null, "mounts": []})
    );
    assert_eq!(by_id("db:drop")["allow"], json!([{"key": "test_*"}]));
    assert_eq!(
        by_id("db:drop")["description"],
        "Destructive operations (DROP, TRUNCATE)."
    );

    // The section holds the deterministic CBOR of the metadata inspect
    // shows: `meta encode` of that JSON gives the section's bytes.
    let bytes = std::fs::read(&out).unwrap();
    let payload = appended_custom_section(&bytes, module, "act:component");
    let meta_json = d.file("metadata.json", got["metadata"].to_string().as_bytes());
    let o = run(&["meta", "encode", &meta_json, "--hex"]);
    expect_code(&o, 0, "encode the inspected metadata");
    assert_eq!(stdout(&o), format!("{}\n", hex(payload)));

    // No section: 1; not wasm at all: 2.
    let o = run(&["component", "inspect", &wasm]);
    expect_code(&o, 1, "no section");
    assert!(
        stderr(&o).contains(&format!("{wasm}: no act:component section")),
        "{}",
        stderr(&o)
    );
    let not_wasm = d.file("x.wasm", b"hello");
    expect_code(&run(&["component", "inspect", &not_wasm]), 2, "not wasm");
}

/// The root README's quick start, as written: its declaration file (the
/// ```json block after `<!-- snippet: run -->`) passes `check`, and
/// `inspect --json` lists what it declares.
#[test]
fn the_root_readme_quick_start_checks_and_inspects() {
    let readme = std::fs::read_to_string(repo("README.md")).unwrap();
    let marker = "<!-- snippet: run -->\n```json\n";
    let start = readme
        .find(marker)
        .expect("a runnable declaration in README.md")
        + marker.len();
    let end = start + readme[start..].find("```").unwrap();
    let text = &readme[start..end];
    let declared: Value = serde_json::from_str(text).unwrap();
    let dir = Dir::new("readme");
    let orders = dir.file("orders.json", text.as_bytes());
    let o = run(&["check", &orders]);
    expect_code(&o, 0, "orpc-agent check orders.json");
    let o = run(&["inspect", &orders, "--json"]);
    expect_code(&o, 0, "orpc-agent inspect orders.json --json");
    let report: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(report["valid"], true);
    let ids: Vec<&str> = report["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    let declared: Vec<&str> = declared["capabilities"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(ids, declared);
    expect_code(
        &run(&["inspect", &orders]),
        0,
        "orpc-agent inspect orders.json",
    );
}
