//! `orpc-agent meta|component|manifest|hash`: std: metadata, component
//! sections and input hashes from the command line.
//!
//! ```text
//! meta decode FILE [--hex] [--diag]    CBOR → JSON (byte strings {"$bytes": hex}, tags {"$tag": n, "value": …})
//! meta encode FILE.json [-o OUT] [--hex]
//!                                      JSON view → deterministic CBOR; raw bytes to OUT,
//!                                      or to stdout when it is not a terminal; --hex prints hex
//! meta check --position P FILE [--strict] [--hex]
//!                                      every problem, one per line; exit 1 on any error
//! meta keys                            the spec/004 key table and error kinds as JSON
//! component inspect FILE.wasm          the act:component metadata as JSON
//! component embed --manifest act.toml IN.wasm -o OUT.wasm
//! manifest check act.toml
//! hash --capability ID INPUT.json      lowercase hex approval input hash
//! ```
//!
//! `--hex` on input means FILE holds hex text instead of raw CBOR.
//! Exit codes: 0 ok; 1 the input was read and has problems; 2 usage errors
//! and input that cannot be read or parsed, always naming the file.

use std::io::{IsTerminal, Write};

use orpc_agent_core::act::component::{ComponentError, ComponentMeta};
use orpc_agent_core::act::keys::Position;
use orpc_agent_core::act::{self, DecodeOptions, MetaMap, ValidateOptions, json_view};

/// Parsed arguments: flags with values, boolean switches, positionals.
struct Args {
    values: Vec<(String, String)>,
    switches: Vec<String>,
    positional: Vec<String>,
}

impl Args {
    fn value(&self, flag: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(f, _)| f == flag)
            .map(|(_, v)| v.as_str())
    }

    fn switch(&self, flag: &str) -> bool {
        self.switches.iter().any(|s| s == flag)
    }
}

/// Splits `args` given which flags take a value and which are switches.
fn parse(args: &[String], with_value: &[&str], switches: &[&str]) -> Result<Args, String> {
    let mut out = Args {
        values: Vec::new(),
        switches: Vec::new(),
        positional: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if with_value.contains(&a.as_str()) {
            let v = it.next().ok_or_else(|| format!("{a} needs a value"))?;
            out.values.push((a.clone(), v.clone()));
        } else if switches.contains(&a.as_str()) {
            out.switches.push(a.clone());
        } else if a.starts_with('-') && a.len() > 1 {
            return Err(format!("unknown option {a}"));
        } else {
            out.positional.push(a.clone());
        }
    }
    Ok(out)
}

/// A failure: exit code and message.
struct Fail(u8, String);

fn usage(msg: impl Into<String>) -> Fail {
    Fail(2, msg.into())
}

/// Runs one of the std:-metadata subcommands; returns the exit code.
pub fn run(command: &str, args: &[String]) -> u8 {
    let result = match (command, args.split_first()) {
        ("meta", Some((sub, rest))) if sub == "decode" => meta_decode(rest),
        ("meta", Some((sub, rest))) if sub == "encode" => meta_encode(rest),
        ("meta", Some((sub, rest))) if sub == "check" => meta_check(rest),
        ("meta", Some((sub, rest))) if sub == "keys" && rest.is_empty() => {
            print_json(&orpc_agent_core::act::keys::table_json())
        }
        ("component", Some((sub, rest))) if sub == "inspect" => component_inspect(rest),
        ("component", Some((sub, rest))) if sub == "embed" => component_embed(rest),
        ("manifest", Some((sub, rest))) if sub == "check" => manifest_check(rest),
        ("hash", _) => hash(args),
        _ => Err(usage(
            "expected one of: meta decode|encode|check|keys, component inspect|embed, manifest check, hash",
        )),
    };
    match result {
        Ok(code) => code,
        Err(Fail(code, msg)) => {
            eprintln!("orpc-agent {command}: {msg}");
            code
        }
    }
}

fn one_file(a: &Args, what: &str) -> Result<String, Fail> {
    match a.positional.as_slice() {
        [f] => Ok(f.clone()),
        [] => Err(usage(format!("missing {what}"))),
        more => Err(usage(format!("expected one {what}, got {}", more.len()))),
    }
}

fn read(file: &str) -> Result<Vec<u8>, Fail> {
    std::fs::read(file).map_err(|e| usage(format!("{file}: cannot read: {e}")))
}

fn read_text(file: &str) -> Result<String, Fail> {
    String::from_utf8(read(file)?).map_err(|_| usage(format!("{file}: not UTF-8 text")))
}

/// The CBOR bytes of `file`: raw, or hex text with `--hex`.
fn read_cbor(file: &str, hex_input: bool) -> Result<Vec<u8>, Fail> {
    if !hex_input {
        return read(file);
    }
    let text = read_text(file)?;
    let clean: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    hex_decode(&clean).ok_or_else(|| usage(format!("{file}: not hex text")))
}

fn hex_decode(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 || !s.is_ascii() {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

fn hex_encode(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn print_json(v: &serde_json::Value) -> Result<u8, Fail> {
    let text = serde_json::to_string_pretty(v).map_err(|e| Fail(2, e.to_string()))?;
    outln!("{text}");
    Ok(0)
}

fn meta_decode(args: &[String]) -> Result<u8, Fail> {
    let a = parse(args, &[], &["--hex", "--diag"]).map_err(usage)?;
    let file = one_file(&a, "CBOR file")?;
    let bytes = read_cbor(&file, a.switch("--hex"))?;
    if a.switch("--diag") {
        let d = act::diagnostic(&bytes).map_err(|e| usage(format!("{file}: {e}")))?;
        outln!("{d}");
        return Ok(0);
    }
    let v =
        act::decode(&bytes, DecodeOptions::LENIENT).map_err(|e| usage(format!("{file}: {e}")))?;
    print_json(&json_view::to_json(&v))
}

fn meta_encode(args: &[String]) -> Result<u8, Fail> {
    let a = parse(args, &["-o"], &["--hex"]).map_err(usage)?;
    let file = one_file(&a, "JSON file")?;
    let json: serde_json::Value = serde_json::from_str(&read_text(&file)?)
        .map_err(|e| usage(format!("{file}: not JSON: {e}")))?;
    let v = json_view::from_json(&json).map_err(|e| usage(format!("{file}: {e}")))?;
    let bytes = act::encode_deterministic(&v).map_err(|e| Fail(1, format!("{file}: {e}")))?;
    if a.switch("--hex") {
        outln!("{}", hex_encode(&bytes));
    } else if let Some(out) = a.value("-o") {
        std::fs::write(out, &bytes).map_err(|e| usage(format!("{out}: cannot write: {e}")))?;
    } else if std::io::stdout().is_terminal() {
        return Err(usage(
            "refusing to write binary CBOR to a terminal; use -o FILE or --hex",
        ));
    } else {
        std::io::stdout()
            .write_all(&bytes)
            .map_err(|e| usage(format!("stdout: {e}")))?;
    }
    Ok(0)
}

fn meta_check(args: &[String]) -> Result<u8, Fail> {
    let a = parse(args, &["--position"], &["--strict", "--hex"]).map_err(usage)?;
    let file = one_file(&a, "CBOR file")?;
    let names: Vec<&str> = Position::ALL.iter().map(|p| p.as_str()).collect();
    let position = a
        .value("--position")
        .ok_or_else(|| usage(format!("missing --position (one of {})", names.join(", "))))?;
    let position = Position::parse(position).ok_or_else(|| {
        usage(format!(
            "unknown position {position:?}; expected one of {}",
            names.join(", ")
        ))
    })?;
    let bytes = read_cbor(&file, a.switch("--hex"))?;
    let map = MetaMap::decode(&bytes).map_err(|e| usage(format!("{file}: {e}")))?;
    let problems = map.validate(
        position,
        ValidateOptions {
            strict: a.switch("--strict"),
        },
    );
    for p in &problems {
        outln!("{file}: {p}");
    }
    if problems.iter().any(|p| p.is_error()) {
        return Ok(1);
    }
    outln!("{file}: ok ({} keys, position {position})", map.len());
    Ok(0)
}

/// Manifest/section errors: what the user can fix in the input is 1,
/// unreadable input is 2.
fn component_fail(file: &str, e: ComponentError) -> Fail {
    match e {
        ComponentError::Invalid(problems) => {
            let lines: Vec<String> = problems.iter().map(|p| format!("{file}: {p}")).collect();
            Fail(
                1,
                format!("invalid component metadata\n{}", lines.join("\n")),
            )
        }
        ComponentError::NoSection => Fail(1, format!("{file}: no act:component section")),
        // These already name the file.
        e @ (ComponentError::Toml { .. } | ComponentError::NoStdTable(_)) => usage(e.to_string()),
        other => usage(format!("{file}: {other}")),
    }
}

fn component_inspect(args: &[String]) -> Result<u8, Fail> {
    let a = parse(args, &[], &[]).map_err(usage)?;
    let file = one_file(&a, "wasm file")?;
    let c = ComponentMeta::from_wasm(&read(&file)?).map_err(|e| component_fail(&file, e))?;
    print_json(&orpc_agent_core::ffi::act::component_json(&c))
}

fn component_embed(args: &[String]) -> Result<u8, Fail> {
    let a = parse(args, &["--manifest", "-o"], &[]).map_err(usage)?;
    let manifest = a
        .value("--manifest")
        .ok_or_else(|| usage("missing --manifest act.toml"))?;
    let out = a.value("-o").ok_or_else(|| usage("missing -o OUT.wasm"))?;
    let input = one_file(&a, "input wasm file")?;
    let c = ComponentMeta::from_manifest(&read_text(manifest)?, manifest)
        .map_err(|e| component_fail(manifest, e))?;
    let bytes = c
        .embed(&read(&input)?)
        .map_err(|e| component_fail(&input, e))?;
    std::fs::write(out, bytes).map_err(|e| usage(format!("{out}: cannot write: {e}")))?;
    outln!("{out}: embedded act:component for {} {}", c.name, c.version);
    Ok(0)
}

fn manifest_check(args: &[String]) -> Result<u8, Fail> {
    let a = parse(args, &[], &[]).map_err(usage)?;
    let file = one_file(&a, "manifest")?;
    let c = ComponentMeta::from_manifest(&read_text(&file)?, &file)
        .map_err(|e| component_fail(&file, e))?;
    outln!(
        "{file}: ok ({} {}, {} capabilities)",
        c.name,
        c.version,
        c.capabilities.classes.len()
    );
    Ok(0)
}

fn hash(args: &[String]) -> Result<u8, Fail> {
    let a = parse(args, &["--capability"], &[]).map_err(usage)?;
    let id = a
        .value("--capability")
        .ok_or_else(|| usage("missing --capability ID"))?;
    let file = one_file(&a, "input JSON file")?;
    let input: serde_json::Value = serde_json::from_str(&read_text(&file)?)
        .map_err(|e| usage(format!("{file}: not JSON: {e}")))?;
    let h =
        act::input_hash(id, &input).map_err(|e| Fail(1, format!("{file}: {e} ({})", e.code())))?;
    outln!("{h}");
    Ok(0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// A scratch directory per test, removed at the end.
    struct Dir(std::path::PathBuf);

    impl Dir {
        fn new(name: &str) -> Dir {
            let p =
                std::env::temp_dir().join(format!("orpc-agent-act-{name}-{}", std::process::id()));
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

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn encode_check_decode() {
        let d = Dir::new("meta");
        let json = d.file(
            "m.json",
            br#"{"std:read-only": true, "acme:x": {"$bytes": "0102"}, "std:bogus": 1}"#,
        );
        let out = d.path("m.cbor");
        assert_eq!(run("meta", &args(&["encode", &json, "-o", &out])), 0);
        let bytes = std::fs::read(&out).unwrap();
        let m = MetaMap::decode(&bytes).unwrap();
        assert_eq!(m.get("acme:x"), Some(&ciborium_bytes(&[1, 2])));
        // One unknown std: key: problems → exit 1.
        assert_eq!(
            run(
                "meta",
                &args(&["check", "--position", "tool-definition", &out])
            ),
            1
        );
        assert_eq!(run("meta", &args(&["decode", &out])), 0);
        assert_eq!(run("meta", &args(&["decode", "--diag", &out])), 0);
        assert_eq!(run("meta", &args(&["keys"])), 0);
        let ok = d.file("ok.json", br#"{"std:read-only": true}"#);
        let ok_out = d.path("ok.cbor");
        assert_eq!(run("meta", &args(&["encode", &ok, "-o", &ok_out])), 0);
        assert_eq!(
            run(
                "meta",
                &args(&["check", "--position", "tool-definition", &ok_out])
            ),
            0
        );
        assert_eq!(
            run(
                "meta",
                &args(&["check", "--position", "tool-call", &ok_out])
            ),
            1
        );
    }

    fn ciborium_bytes(b: &[u8]) -> orpc_agent_core::act::json_view::CborValue {
        json_view::from_json(&serde_json::json!({ "$bytes": hex_encode(b) })).unwrap()
    }

    #[test]
    fn usage_and_unreadable_input_exit_2() {
        let d = Dir::new("usage");
        assert_eq!(run("meta", &args(&["decode"])), 2);
        assert_eq!(run("meta", &args(&["decode", &d.path("missing.cbor")])), 2);
        let bad = d.file("bad.cbor", &[0x9f, 0x01]);
        assert_eq!(run("meta", &args(&["decode", &bad])), 2);
        assert_eq!(
            run("meta", &args(&["check", &bad])),
            2,
            "missing --position"
        );
        assert_eq!(
            run("meta", &args(&["check", "--position", "nowhere", &bad])),
            2
        );
        assert_eq!(run("meta", &args(&["frob"])), 2);
        assert_eq!(run("hash", &args(&["x.json"])), 2, "missing --capability");
        let notjson = d.file("in.json", b"{nope");
        assert_eq!(run("hash", &args(&["--capability", "c", &notjson])), 2);
        assert_eq!(run("meta", &args(&["decode", "--bogus", &bad])), 2);
    }

    #[test]
    fn manifest_component_and_hash() {
        let d = Dir::new("component");
        let manifest = d.file(
            "act.toml",
            b"[std]\nname = \"t\"\nversion = \"1.0.0\"\n[std.capabilities.\"wasi:http\"]\n",
        );
        assert_eq!(run("manifest", &args(&["check", &manifest])), 0);
        let bad = d.file("bad.toml", b"[std]\nname = \"t\"\nversion = \"one\"\n");
        assert_eq!(run("manifest", &args(&["check", &bad])), 1);
        let broken = d.file("broken.toml", b"[std\n");
        assert_eq!(run("manifest", &args(&["check", &broken])), 2);
        let wasm = d.file("in.wasm", b"\0asm\x01\0\0\0\x01\x04\x01\x60\x00\x00");
        let out = d.path("out.wasm");
        assert_eq!(
            run(
                "component",
                &args(&["embed", "--manifest", &manifest, &wasm, "-o", &out])
            ),
            0
        );
        assert_eq!(run("component", &args(&["inspect", &out])), 0);
        assert_eq!(
            run("component", &args(&["inspect", &wasm])),
            1,
            "no section"
        );
        let notwasm = d.file("x.wasm", b"hello");
        assert_eq!(run("component", &args(&["inspect", &notwasm])), 2);
        let input = d.file("in.json", br#"{"a": 1.0}"#);
        assert_eq!(
            run("hash", &args(&["--capability", "orders.search", &input])),
            0
        );
    }
}
