#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Input limits and pending approvals per actor (issue 10), from
//! tests/vectors/limits/limits.json (format: tests/vectors/README.md,
//! section `limits`). Every case runs three ways: through the tokio driver
//! (inputs held as JSON), through the state machine as a binding drives it
//! (input host-held, the validated input handed back as JSON), and through
//! `limits::check_json_text` (what a binding calls on JSON text).

use crate::pipeline_support;

use std::sync::Arc;

use orpc_agent_core::approval::{ApprovalStore, MemoryApprovalStore, SqliteApprovalStore};
use orpc_agent_core::limits::{
    self, MAX_INPUT_BYTES, MAX_INPUT_DEPTH, MAX_OBJECT_KEYS, MAX_STRING_BYTES,
};
use orpc_agent_core::pipeline::driver::{Call, Driver};
use orpc_agent_core::pipeline::{Answer, InvokeOptions, Outcome, Payload, Stage, Step};
use orpc_agent_core::{Actor, CapabilityRegistry, ErrorCode, Frame, Invocation, Surface};
use pipeline_support::*;
use serde_json::{Map, Value, json};

fn vectors() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/vectors/limits/limits.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The generators of the README's `limits` section.
fn generate(g: &Value) -> Value {
    let n = |k: &str| g[k].as_u64().map(|v| v as usize);
    if let Some(d) = n("depth") {
        let mut v = json!([]);
        for _ in 2..d {
            v = json!([v]);
        }
        return json!({"v": v});
    }
    if let Some(k) = n("keys") {
        let m: Map<String, Value> = (0..k).map(|i| (format!("k{i}"), json!(0))).collect();
        return Value::Object(m);
    }
    if let Some(len) = n("string") {
        let c = g["char"].as_str().unwrap_or("a");
        return json!({"text": c.repeat(len)});
    }
    if let Some(len) = n("key") {
        let mut m = Map::new();
        m.insert("a".repeat(len), json!(0));
        return Value::Object(m);
    }
    if let Some(size) = n("size") {
        let mut remaining = size - r#"{"chunks":[]}"#.len();
        let mut chunks = Vec::new();
        while remaining > 0 {
            if !chunks.is_empty() {
                remaining -= 1;
            }
            let take = (remaining - 2).min(60_000);
            chunks.push(json!("a".repeat(take)));
            remaining -= take + 2;
        }
        return json!({"chunks": chunks});
    }
    panic!("unknown generator {g}")
}

fn registry(v: &Value) -> Arc<CapabilityRegistry> {
    let caps: Vec<Value> = v["capabilities"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(id, c)| json!({"id": id, "meta": c["meta"], "validateInput": true}))
        .collect();
    pipeline_support::registry(Value::Array(caps), Value::Null)
}

fn driver(
    reg: &Arc<CapabilityRegistry>,
    store: Arc<dyn ApprovalStore>,
) -> (Driver, Vec<Arc<Fixture>>) {
    let mut b = Driver::builder(Arc::clone(reg), store);
    let mut handlers = Vec::new();
    for c in reg.capabilities() {
        let h = Fixture::new(Behaviour::Return(json!({"ok": true})));
        b = b.handler(&c.id, h.clone()).input_validator(
            &c.id,
            Arc::new(FnValidator(Box::new(|v: &Value| Ok(v.clone())))),
        );
        handlers.push(h);
    }
    (b.build().unwrap(), handlers)
}

fn frame(actor: &str) -> Frame {
    frame_on(Surface::Mcp, actor)
}

/// A case's own `surface` (the pending cases: on MCP a repeated identical
/// call finds its request instead of opening another), else MCP.
fn case_surface(case: &Value) -> Surface {
    case["surface"]
        .as_str()
        .map_or(Surface::Mcp, |s| Surface::parse(s).unwrap())
}

fn frame_on(surface: Surface, actor: &str) -> Frame {
    Frame::new(surface).with_actor(Actor {
        id: Some(actor.into()),
        ..Actor::default()
    })
}

fn check_outcome(name: &str, o: &Outcome, expect: &Value) {
    match expect["status"].as_str().unwrap() {
        "ok" => assert!(matches!(o, Outcome::Ok(_)), "{name}: {o:?}"),
        "approval_required" => assert!(matches!(o, Outcome::ApprovalRequired(_)), "{name}: {o:?}"),
        "error" => {
            let e = error_of(o);
            assert_eq!(e.code.as_str(), expect["code"], "{name}: {}", e.message);
            if let Some(d) = expect.get("details") {
                assert_eq!(e.details.as_ref(), Some(d), "{name}");
                assert_eq!(e.kind().as_str(), "std:invalid-args");
            }
        }
        s => panic!("{name}: status {s}"),
    }
}

#[test]
fn the_documented_limits_are_the_enforced_ones() {
    let v = vectors();
    let l = &v["limits"];
    assert_eq!(l["inputBytes"], MAX_INPUT_BYTES);
    assert_eq!(l["depth"], MAX_INPUT_DEPTH);
    assert_eq!(l["objectKeys"], MAX_OBJECT_KEYS);
    assert_eq!(l["stringBytes"], MAX_STRING_BYTES);
    assert_eq!(
        l["pendingApprovalsPerActor"],
        orpc_agent_core::approval::MAX_PENDING_PER_ACTOR
    );
}

#[test]
fn generators_make_what_they_say() {
    let size = generate(&json!({"size": 1_048_577}));
    assert_eq!(serde_json::to_string(&size).unwrap().len(), 1_048_577);
    let e = generate(&json!({"string": 3, "char": "é"}));
    assert_eq!(e["text"].as_str().unwrap().len(), 6);
    let d = generate(&json!({"depth": 3}));
    assert_eq!(d, json!({"v": [[]]}));
}

#[tokio::test]
async fn limit_vectors_through_the_tokio_driver() {
    let v = vectors();
    let reg = registry(&v);
    for c in v["cases"].as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        let (d, handlers) = driver(&reg, Arc::new(MemoryApprovalStore::new()));
        let input = generate(&c["generate"]);
        let cap = c["capability"].as_str().unwrap();
        let o = d.invoke(cap, input, Call::new(frame("agent-1"))).await;
        check_outcome(name, &o, &c["expect"]);
        let calls: u32 = handlers.iter().map(|h| h.calls()).sum();
        assert_eq!(
            u64::from(calls),
            c["handlerCalls"].as_u64().unwrap(),
            "{name}"
        );
        if c["expect"]["code"] == "LIMIT_EXCEEDED" {
            let pending = d.store().list(&Default::default()).await.unwrap();
            assert!(pending.is_empty(), "{name}: an approval was stored");
        }
    }
}

/// A vector's invocation as a binding starts it: the input host-held,
/// audited.
fn start_host_held(reg: &Arc<CapabilityRegistry>, case: &Value) -> Invocation {
    Invocation::start(
        Arc::clone(reg),
        case["capability"].as_str().unwrap(),
        Payload::Host,
        frame("agent-1"),
        InvokeOptions {
            now_ms: 1_000,
            audit: true,
            audit_payloads: false,
            span_payloads: false,
        },
    )
}

/// As a binding drives it: the raw input stays host-side; the validator
/// hands the validated input back as JSON, which the machine checks before
/// any policy, the gate or the handler.
#[test]
fn limit_vectors_through_the_machine_with_host_inputs() {
    let v = vectors();
    let reg = registry(&v);
    for c in v["cases"].as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        let input = generate(&c["generate"]);
        let mut inv = start_host_held(&reg, c);
        let mut handler_runs = 0;
        let mut finished_stage = None;
        let (o, _) = drive_sync(&mut inv, |step| match step {
            Step::ValidateInput { .. } => Answer::InputValid(Payload::Json(input.clone())),
            Step::RunHandler { .. } => {
                handler_runs += 1;
                Answer::HandlerOk {
                    output: Payload::Host,
                    now_ms: 1_001,
                }
            }
            Step::Audit(r) => {
                finished_stage = Some(r.stage);
                Answer::Audited
            }
            s => permissive(s),
        });
        check_outcome(name, &o, &c["expect"]);
        assert_eq!(handler_runs, c["handlerCalls"].as_u64().unwrap(), "{name}");
        if c["expect"]["code"] == "LIMIT_EXCEEDED" {
            assert_eq!(
                finished_stage,
                Some(Stage::ValidateInput),
                "{name}: audited at stage 4"
            );
        }
    }
}

/// A host value walked through a `Meter`, as a binding walks its own types
/// (here the host's "own type" is a serde `Value`, reported node by node).
fn measure(v: &Value, depth: usize, m: &mut limits::Meter) -> Result<(), limits::Limit> {
    match v {
        Value::Null => m.null(),
        Value::Bool(b) => m.bool(*b),
        Value::Number(n) => m.number(n),
        Value::String(s) => m.string(s),
        Value::Array(a) => {
            m.array(depth, a.len())?;
            a.iter().try_for_each(|x| measure(x, depth + 1, m))
        }
        Value::Object(o) => {
            m.object(depth, o.len())?;
            o.iter().try_for_each(|(k, x)| {
                m.key(k)?;
                measure(x, depth + 1, m)
            })
        }
    }
}

/// As the bindings drive it now: the raw input stays host-side and the
/// host measures it (`Meter`) before the start (`start_measured`); an
/// over-limit input is refused when stage 4 begins — before the validator,
/// any policy or the handler, with audit on or off — and exposure still
/// comes first (SI-8).
#[test]
fn limit_vectors_through_the_machine_with_raw_input_measured_by_the_host() {
    let v = vectors();
    let reg = registry(&v);
    for audit in [true, false] {
        for c in v["cases"].as_array().unwrap() {
            let name = c["name"].as_str().unwrap();
            let input = generate(&c["generate"]);
            let mut meter = limits::Meter::new();
            let verdict = measure(&input, 1, &mut meter).map_err(|l| meter.error(l));
            let mut inv = Invocation::start_measured(
                Arc::clone(&reg),
                c["capability"].as_str().unwrap(),
                frame("agent-1"),
                InvokeOptions {
                    now_ms: 1_000,
                    audit,
                    audit_payloads: false,
                    span_payloads: false,
                },
                Some(verdict),
            );
            let mut validator_runs = 0;
            let mut handler_runs = 0;
            let mut audited = Vec::new();
            let (o, _) = drive_sync(&mut inv, |step| match step {
                Step::ValidateInput { .. } => {
                    validator_runs += 1;
                    Answer::InputValid(Payload::Host)
                }
                Step::ExportInput => Answer::InputExported(input.clone()),
                Step::RunHandler { .. } => {
                    handler_runs += 1;
                    Answer::HandlerOk {
                        output: Payload::Host,
                        now_ms: 1_001,
                    }
                }
                Step::Audit(r) => {
                    audited.push((r.event, r.stage));
                    Answer::Audited
                }
                s => permissive(s),
            });
            check_outcome(name, &o, &c["expect"]);
            assert_eq!(handler_runs, c["handlerCalls"].as_u64().unwrap(), "{name}");
            if c["expect"]["code"] == "LIMIT_EXCEEDED" {
                assert_eq!(validator_runs, 0, "{name}: the validator saw the input");
                let expected = if audit {
                    vec![(
                        orpc_agent_core::pipeline::AuditEvent::Finished,
                        Stage::ValidateInput,
                    )]
                } else {
                    vec![]
                };
                assert_eq!(audited, expected, "{name}");
            }
        }
    }
}

/// A capability whose first host step would be the handler (no validator,
/// no policy, no approval, audit off) and one behind a denying policy:
/// the limits verdict still comes first.
#[test]
fn the_limits_verdict_precedes_the_handler_and_every_policy() {
    let reg = pipeline_support::registry(
        json!([
            {"id": "a.raw", "meta": meta(&["mcp"])},
            {"id": "a.denied", "meta": with(meta(&["mcp"]), json!({"policies": [{"name": "no", "decision": "deny"}]}))}
        ]),
        Value::Null,
    );
    let over = || Err(limits::check(&generate(&json!({"depth": 65}))).unwrap_err());
    for id in ["a.raw", "a.denied"] {
        let mut inv = Invocation::start_measured(
            Arc::clone(&reg),
            id,
            frame("u"),
            InvokeOptions::at(0),
            Some(over()),
        );
        let (o, kinds) = drive_sync(&mut inv, permissive);
        assert_eq!(error_of(&o).code, ErrorCode::LimitExceeded, "{id}");
        assert!(
            !kinds.contains(&orpc_agent_core::StepKind::RunHandler),
            "{id}: {kinds:?}"
        );
    }
    // Not exposed on `direct`: NOT_FOUND stays NOT_FOUND (SI-8).
    let mut hidden = Invocation::start_measured(
        Arc::clone(&reg),
        "a.raw",
        Frame::new(Surface::Direct),
        InvokeOptions::at(0),
        Some(over()),
    );
    let (o, _) = drive_sync(&mut hidden, permissive);
    assert_eq!(error_of(&o).code, ErrorCode::NotFound);
}

/// An input the host exports (for a predicate or the approval hash) is
/// checked too: it is what an approval request would store.
#[test]
fn an_exported_input_over_a_limit_is_refused() {
    let reg = pipeline_support::registry(
        json!([{"id": "a.b", "meta": with(meta(&["mcp"]), json!({"approval": {"required": true}}))}]),
        Value::Null,
    );
    let mut inv = Invocation::start(
        Arc::clone(&reg),
        "a.b",
        Payload::Host,
        frame("u"),
        InvokeOptions::at(0),
    );
    let deep = generate(&json!({"depth": 65}));
    let (o, kinds) = drive_sync(&mut inv, |step| match step {
        Step::ExportInput => Answer::InputExported(deep.clone()),
        s => permissive(s),
    });
    assert_eq!(error_of(&o).code, ErrorCode::LimitExceeded);
    assert!(
        !kinds.contains(&orpc_agent_core::StepKind::PersistApproval),
        "{kinds:?}"
    );
}

/// The shortcut of `check_serialized` gives the full check's verdict on
/// every vector, and on inputs at and around each limit.
#[test]
fn check_serialized_agrees_with_the_full_check() {
    let v = vectors();
    let mut texts: Vec<String> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| serde_json::to_string(&generate(&c["generate"])).unwrap())
        .collect();
    for depth in [63, 64, 65, 66] {
        texts.push(serde_json::to_string(&generate(&json!({"depth": depth}))).unwrap());
        texts.push(format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth)));
    }
    for keys in [1023, 1024, 1025] {
        let m: Map<String, Value> = (0..keys).map(|i| (format!("k{i}"), json!(i))).collect();
        texts.push(serde_json::to_string(&m).unwrap());
    }
    // Brackets and colons inside strings only make the shortcut parse.
    texts.push(serde_json::to_string(&json!({"s": "[[[[{{{{::::".repeat(20)})).unwrap());
    texts.push(serde_json::to_string(&json!({"s": "é".repeat(32_769)})).unwrap());
    // The shortest text over a limit is longer than SHORT_TEXT_CHARS.
    let shortest_over = serde_json::to_string(&generate(&json!({"depth": 65}))).unwrap();
    assert!(limits::check_json_text(&shortest_over).is_err());
    assert_eq!(shortest_over.len(), limits::SHORT_TEXT_CHARS + 1 + 4); // {"v": … }
    let brackets = format!("{}{}", "[".repeat(65), "]".repeat(65));
    assert!(limits::check_json_text(&brackets).is_err());
    assert_eq!(brackets.len(), limits::SHORT_TEXT_CHARS + 1);
    for t in &texts {
        let full = limits::check_json_text(t).map(drop);
        let short = limits::check_serialized(t);
        assert_eq!(
            full.as_ref().map_err(|e| e.details.clone()),
            short.as_ref().map_err(|e| e.details.clone()),
            "{}…",
            &t[..t.len().min(60)]
        );
    }
}

/// JavaScript's `JSON.stringify` writes lone surrogates as `\ud800`
/// escapes, which serde refuses; `check_serialized` still measures such
/// text, and leaves `\\ud800` (an escaped backslash) alone.
#[test]
fn check_serialized_measures_text_with_lone_surrogate_escapes() {
    let lone = "\\ud800";
    assert!(limits::check_json_text(&format!("\"{lone}\"")).is_err());
    let long = format!("{{\"s\":\"{}\"}}", lone.repeat(30_000));
    let e = limits::check_serialized(&long).unwrap_err();
    assert_eq!(e.details.unwrap()["limit"], "stringBytes");
    let deep = format!("{}\"{lone}\"{}", "[".repeat(70), "]".repeat(70));
    assert_eq!(
        limits::check_serialized(&deep)
            .unwrap_err()
            .details
            .unwrap()["limit"],
        "depth"
    );
    let fine = format!("{{\"s\":\"a{lone}b\",\"t\":\"{}\"}}", "x".repeat(100));
    assert!(limits::check_serialized(&fine).is_ok());
    // An escaped backslash followed by `ud800` is ordinary text.
    let not_escape = format!("[\"\\\\ud800\", {}]", "[0],".repeat(70) + "0");
    assert_eq!(
        limits::check_serialized(&not_escape).map_err(|e| e.code),
        limits::check_json_text(&not_escape)
            .map(drop)
            .map_err(|e| e.code)
    );
}

#[test]
fn limit_vectors_through_check_json_text() {
    let v = vectors();
    for c in v["cases"].as_array().unwrap() {
        if c["expect"]["code"] == "NOT_FOUND" {
            continue; // exposure comes first; the text check knows no surface
        }
        let text = serde_json::to_string(&generate(&c["generate"])).unwrap();
        match (
            limits::check_json_text(&text),
            c["expect"]["status"].as_str().unwrap(),
        ) {
            (Ok(_), "ok") => {}
            (Err(e), "error") => assert_eq!(Some(&c["expect"]["details"]), e.details.as_ref()),
            (r, _) => panic!("{}: {r:?}", c["name"]),
        }
    }
}

async fn pending_vectors(store: Arc<dyn ApprovalStore>) {
    let v = vectors();
    let reg = registry(&v);
    let (d, handlers) = driver(&reg, store);
    for p in v["pending"].as_array().unwrap() {
        for step in p["steps"].as_array().unwrap() {
            for _ in 0..step["times"].as_u64().unwrap() {
                let o = d
                    .invoke(
                        p["capability"].as_str().unwrap(),
                        p["input"].clone(),
                        Call::new(frame_on(case_surface(p), step["actor"].as_str().unwrap())),
                    )
                    .await;
                check_outcome(p["name"].as_str().unwrap(), &o, &step["expect"]);
            }
        }
    }
    assert_eq!(handlers.iter().map(|h| h.calls()).sum::<u32>(), 0);
}

#[tokio::test]
async fn pending_approvals_per_actor_memory_store() {
    pending_vectors(Arc::new(MemoryApprovalStore::new())).await;
}

#[tokio::test]
async fn pending_approvals_per_actor_sqlite_store() {
    let dir = std::env::temp_dir().join(format!("orpc-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("approvals.db");
    let _ = std::fs::remove_file(&path);
    pending_vectors(Arc::new(SqliteApprovalStore::open(&path).unwrap())).await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// The validated input a host exports is measured whatever the raw input's
/// verdict was: it is what the approval hashes and stores, and a validator
/// may have made it larger than the raw input it was given (a host model
/// holding a 2 MiB string; issue 15). Over the limit: LIMIT_EXCEEDED,
/// nothing stored, no handler.
#[test]
fn an_exported_input_over_the_limits_is_refused_even_after_a_passing_raw_verdict() {
    let v = vectors();
    let reg = registry(&v);
    let big = json!({"text": "a".repeat(2 * 1024 * 1024)});
    let mut inv = Invocation::start_measured(
        Arc::clone(&reg),
        "orders.refund",
        frame("agent-1"),
        InvokeOptions::at(1_000),
        Some(Ok(())),
    );
    let mut stored = 0;
    let mut handler_runs = 0;
    let (o, _) = drive_sync(&mut inv, |step| match step {
        Step::ValidateInput { .. } => Answer::InputValid(Payload::Host),
        Step::ExportInput => Answer::InputExported(big.clone()),
        Step::PersistApproval(_) => {
            stored += 1;
            Answer::Persisted
        }
        Step::RunHandler { .. } => {
            handler_runs += 1;
            Answer::HandlerOk {
                output: Payload::Host,
                now_ms: 1_001,
            }
        }
        s => permissive(s),
    });
    let e = error_of(&o);
    assert_eq!(e.code, ErrorCode::LimitExceeded, "{o:?}");
    assert_eq!((stored, handler_runs), (0, 0));
}

/// A handler error's details: kept within `limits::ERROR_DETAILS`, each
/// limit at its boundary, and dropped one past it (the error itself stands:
/// `pipeline/execution.json` runs that through every binding).
#[test]
fn error_details_are_kept_within_their_limits_and_dropped_past_them() {
    let l = limits::ERROR_DETAILS;
    let keys = |n: usize| Value::Object((0..n).map(|i| (format!("k{i}"), json!(0))).collect());
    let string = |n: usize| json!({"s": "a".repeat(n)});
    // {"s":[…]} nested to depth n.
    let nested = |n: usize| {
        let mut v = json!([]);
        for _ in 2..n {
            v = json!([v]);
        }
        json!({"s": v})
    };
    // Compact text of exactly n bytes: {"s":"aaa…"} is 8 bytes around the string.
    let sized = |n: usize| json!({"s": "a".repeat(n - 8)});
    assert_eq!(sized(100).to_string().len(), 100);
    for (what, within, past) in [
        ("keys", keys(l.max_object_keys), keys(l.max_object_keys + 1)),
        (
            "string",
            string(l.max_string_bytes),
            string(l.max_string_bytes + 1),
        ),
        ("depth", nested(l.max_depth), nested(l.max_depth + 1)),
    ] {
        assert_eq!(
            limits::error_details(within.clone()),
            Some(within),
            "{what} at the limit"
        );
        assert_eq!(limits::error_details(past), None, "{what} past the limit");
    }
    // Bytes: strings of at most 4 KiB each, 16 KiB of text in all.
    let chunks = |n: usize| {
        let mut o = Map::new();
        let mut left = n - 2; // the braces
        for i in 0.. {
            let key = format!("k{i}");
            let overhead = key.len() + 5 + usize::from(i > 0); // "key":"…" and a comma
            let take = (left - overhead).min(l.max_string_bytes);
            o.insert(key, json!("a".repeat(take)));
            left -= take + overhead;
            if left == 0 {
                break;
            }
        }
        Value::Object(o)
    };
    let at = chunks(l.max_bytes);
    assert_eq!(at.to_string().len(), l.max_bytes);
    assert!(limits::error_details(at).is_some(), "bytes at the limit");
    assert_eq!(
        limits::error_details(chunks(l.max_bytes + 1)),
        None,
        "bytes past the limit"
    );
    assert_eq!(
        limits::error_details(Value::Null),
        None,
        "null is no details"
    );
}
