#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Runs tests/vectors/pipeline/*.json through the tokio reference driver,
//! with tokio's clock paused so delays, deadlines and backoff are exact.
//! The format is documented in tests/vectors/README.md, section `pipeline`.

use crate::pipeline_support;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use orpc_agent_core::approval::{BoxFuture, Decision as ApprovalDecision};
use orpc_agent_core::pipeline::driver::{Call, CapabilityHooks, Policy, PolicyRequest, Redactor};
use orpc_agent_core::pipeline::{AuditEvent, Decision, Outcome, Payload, ResumeLimit};
use orpc_agent_core::policy::PolicyRule;
use orpc_agent_core::{CapabilityDecl, CapabilityRegistry, ErrorCode, Frame, RegistryOptions};
use pipeline_support::*;
use serde_json::{Value, json};

fn vector_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/pipeline")
}

/// The vectors' schema subset plus `defaults` (applied to missing keys
/// before checking), so a vector can show that everything after stage 4
/// sees the validated input; `{throw: message}` panics; `{refuse: message}`
/// refuses with that message (a Rust validator's `Err`, the other
/// languages' thrown `CapabilityError`).
struct VectorSchema(Value);

impl orpc_agent_core::pipeline::driver::Validator for VectorSchema {
    fn validate<'a>(&'a self, value: &'a Value) -> BoxFuture<'a, Result<Value, String>> {
        Box::pin(async move {
            if let Some(m) = self.0["throw"].as_str() {
                // A Rust host's thrown error: the driver catches the panic.
                panic!("{m}");
            }
            if let Some(m) = self.0["refuse"].as_str() {
                return Err(m.to_owned());
            }
            let mut v = value.clone();
            if let (Some(o), Some(d)) = (v.as_object_mut(), self.0["defaults"].as_object()) {
                for (k, x) in d {
                    o.entry(k.clone()).or_insert_with(|| x.clone());
                }
            }
            check_schema(&self.0, &v).map(|()| v)
        })
    }
}

/// A host policy of the vectors: allow, deny, throw, require-approval,
/// abstain, delay (then allow), or deny-anonymous (deny when the frame it
/// is shown names neither an actor id nor a session).
struct VectorPolicy(Value);

impl Policy for VectorPolicy {
    fn evaluate<'a>(&'a self, r: PolicyRequest<'a>) -> BoxFuture<'a, Result<Decision, String>> {
        Box::pin(async move {
            let s = |k: &str| self.0[k].as_str().map(str::to_owned);
            match self.0["kind"].as_str().unwrap() {
                "allow" => Ok(Decision::Allow),
                "deny-anonymous" if r.frame.actor.id.is_none() && r.frame.session_id.is_none() => {
                    Ok(Decision::Deny {
                        reason: s("reason"),
                    })
                }
                "deny-anonymous" => Ok(Decision::Allow),
                "abstain" => Ok(Decision::Abstain),
                "deny" => Ok(Decision::Deny {
                    reason: s("reason"),
                }),
                "throw" => Err("host policy threw".into()),
                "require-approval" => Ok(Decision::RequireApproval {
                    approval_type: s("approvalType"),
                    reason: s("reason"),
                    expires_in_ms: self.0["expiresInMs"].as_u64(),
                }),
                "delay" => {
                    tokio::time::sleep(Duration::from_millis(self.0["ms"].as_u64().unwrap())).await;
                    Ok(Decision::Allow)
                }
                k => panic!("unknown host policy kind {k}"),
            }
        })
    }
}

fn handler_of(v: &Value) -> Behaviour {
    match v["kind"].as_str().unwrap() {
        "echo" => Behaviour::Echo,
        "fail-with-code" => {
            let code = ErrorCode::parse(v["code"].as_str().unwrap()).unwrap();
            Behaviour::FailWithCode {
                code,
                // No flag: the code's default, as an app's error without one.
                retryable: v["retryable"]
                    .as_bool()
                    .unwrap_or_else(|| code.default_retryable()),
                details: v.get("details").cloned(),
            }
        }
        "fail-retryable-n-times" => {
            Behaviour::FailRetryableNTimes(u32::try_from(v["n"].as_u64().unwrap()).unwrap())
        }
        "delay" => Behaviour::Delay(v["ms"].as_u64().unwrap()),
        "throw" => Behaviour::Throw(v["message"].as_str().unwrap_or("thrown").to_owned()),
        // Rust has no cancellation error a handler could raise: its plain failure.
        "cancel-itself" => Behaviour::Throw("cancelled itself".to_owned()),
        k => panic!("unknown handler kind {k}"),
    }
}

fn redactor_of(v: &Value) -> Arc<dyn Redactor> {
    match v["kind"].as_str().unwrap() {
        "mask-fields" => {
            let fields: Vec<&str> = v["fields"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f.as_str().unwrap())
                .collect();
            MaskFields::new(&fields)
        }
        "throw" => Arc::new(ThrowRedactor),
        k => panic!("unknown redactor kind {k}"),
    }
}

/// `expected` ⊆ `actual`: objects by key, everything else equal.
fn subset(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => e.iter().all(|(k, v)| {
            a.get(k).is_some_and(|x| subset(v, x)) || (v.is_null() && !a.contains_key(k))
        }),
        (Value::Array(e), Value::Array(a)) => {
            e.len() == a.len() && e.iter().zip(a).all(|(x, y)| subset(x, y))
        }
        _ => expected == actual,
    }
}

fn outcome_json(o: &Outcome) -> Value {
    match o {
        Outcome::Ok(Payload::Json(v)) => json!({"status": "ok", "output": v}),
        Outcome::Ok(Payload::Host) => json!({"status": "ok"}),
        Outcome::ApprovalRequired(r) => json!({"status": "approval_required", "approval": {
            "type": r.approval_type, "reason": r.reason,
            "expiresInMs": r.expires_at_ms - r.created_at_ms,
            "surface": r.surface, "actorId": r.actor.id, "input": r.input,
            "capabilityId": r.capability_id}}),
        Outcome::Error(e) => {
            json!({"status": "error", "code": e.code.as_str(), "error": e.to_json()})
        }
    }
}

struct Case<'a> {
    file: String,
    v: &'a Value,
}

impl Case<'_> {
    fn name(&self) -> String {
        format!("{}: {}", self.file, self.v["name"].as_str().unwrap())
    }

    fn registry(&self) -> Result<Arc<CapabilityRegistry>, String> {
        let mut decls = Vec::new();
        for (id, c) in self.v["capabilities"].as_object().unwrap() {
            let mut d = CapabilityDecl::new(id.clone(), c["meta"].clone());
            d.validate_input = c.get("inputSchema").is_some();
            d.validate_output = c.get("outputSchema").is_some();
            decls.push(d);
        }
        let opts = match self.v.get("options") {
            Some(o) => RegistryOptions::from_json(o).map_err(|e| format!("{e:?}"))?,
            None => RegistryOptions::default(),
        };
        CapabilityRegistry::build(decls, opts)
            .map(Arc::new)
            .map_err(|e| format!("{e:?}"))
    }

    async fn run(&self) {
        let name = self.name();
        let reg = match (self.registry(), self.v["expectBuildError"].as_bool()) {
            (Err(_), Some(true)) => return,
            (Ok(_), Some(true)) => panic!("{name}: the registry built but should not"),
            (Err(e), _) => panic!("{name}: registry: {e}"),
            (Ok(r), _) => r,
        };
        let audit = Arc::new(Collector::default());
        let payloads = self.v["auditPayloads"].as_bool().unwrap_or(false);
        let mut b = builder(&reg).audit(audit.clone(), payloads);
        let mut fixtures: HashMap<String, Arc<Fixture>> = HashMap::new();
        let host_policy = |p: &orpc_agent_core::policy::PolicySpec| -> Arc<dyn Policy> {
            let pname = p
                .name
                .as_deref()
                .unwrap_or_else(|| panic!("{name}: host policy without a name"));
            let spec = self.v["hostPolicies"]
                .get(pname)
                .unwrap_or_else(|| panic!("{name}: no hostPolicies.{pname}"));
            Arc::new(VectorPolicy(spec.clone()))
        };
        for (i, p) in reg.options().policies.iter().enumerate() {
            if matches!(p.rule, PolicyRule::Host) {
                b = b.runtime_policy(u32::try_from(i).unwrap(), host_policy(p));
            }
        }
        for cap in reg.capabilities() {
            let c = &self.v["capabilities"][&cap.id];
            let fixture = Fixture::new(handler_of(&c["handler"]));
            fixtures.insert(cap.id.clone(), fixture.clone());
            let mut hooks = CapabilityHooks {
                handler: Some(fixture),
                ..CapabilityHooks::default()
            };
            if let Some(s) = c.get("inputSchema") {
                hooks.input_validator = Some(Arc::new(VectorSchema(s.clone())));
            }
            if let Some(s) = c.get("outputSchema") {
                hooks.output_validator = Some(Arc::new(VectorSchema(s.clone())));
            }
            if let Some(r) = c.get("redactOutput") {
                hooks.redact_output = Some(redactor_of(r));
            }
            if let Some(r) = c.get("redactApprovalInput") {
                hooks.redact_approval_input = Some(redactor_of(r));
            }
            if let Some(r) = c.get("retryOn") {
                let codes: Vec<String> = r["codes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c.as_str().unwrap().to_owned())
                    .collect();
                hooks.retry_on = Some(Arc::new(move |e| {
                    codes.iter().any(|c| c == e.code.as_str())
                }));
            }
            for (i, p) in cap.meta.policies.iter().enumerate() {
                if matches!(p.rule, PolicyRule::Host) {
                    hooks
                        .policies
                        .insert(u32::try_from(i).unwrap(), host_policy(p));
                }
            }
            b = b.hooks(&cap.id, hooks);
        }
        let d = b
            .build()
            .unwrap_or_else(|e| panic!("{name}: driver: {e:?}"));

        let mut saved: HashMap<String, String> = HashMap::new();
        let mut errors: Vec<Value> = Vec::new();
        let ops = self.v["operations"].as_array().unwrap();
        assert!(!ops.is_empty(), "{name}: no operations");
        for (i, op) in ops.iter().enumerate() {
            let at = format!("{name} op[{i}]");
            let frame = || -> Frame {
                serde_json::from_value(
                    op.get("frame")
                        .cloned()
                        .unwrap_or(json!({"surface": "mcp"})),
                )
                .unwrap_or_else(|e| panic!("{at}: frame: {e}"))
            };
            let t0 = tokio::time::Instant::now();
            let outcome = match op["op"].as_str().unwrap() {
                "advance" => {
                    tokio::time::advance(Duration::from_millis(op["ms"].as_u64().unwrap())).await;
                    continue;
                }
                "decide" => {
                    let id = &saved[op["approval"].as_str().unwrap()];
                    let decision = match op["decision"].as_str().unwrap() {
                        "approve" => ApprovalDecision::Approve,
                        "reject" => ApprovalDecision::Reject,
                        x => panic!("{at}: decision {x}"),
                    };
                    let r = d
                        .decide(id, decision, op["approver"].as_str(), op["reason"].as_str())
                        .await;
                    let got = match r {
                        Ok(_) => json!({"status": "ok"}),
                        Err(e) => json!({"status": "error", "code": e.code.as_str()}),
                    };
                    assert!(
                        subset(&op["expect"], &got),
                        "{at}: expected {} got {got}",
                        op["expect"]
                    );
                    continue;
                }
                "approvalInput" => {
                    let id = &saved[op["approval"].as_str().unwrap()];
                    let stored = d.store().get(id).await.unwrap();
                    let request = stored.unwrap_or_else(|| panic!("{at}: no request {id}"));
                    let got = match d.redact_approval_input(&request, None).await {
                        Ok(v) => json!({"status": "ok", "output": v}),
                        Err(e) => json!({"status": "error", "code": e.code.as_str()}),
                    };
                    assert_eq!(got, op["expect"], "{at}");
                    continue;
                }
                "invoke" | "resume" => {
                    let call = Call::new(frame());
                    if let Some(ms) = op["cancelAfterMs"].as_u64() {
                        let token = call.cancel.clone();
                        tokio::spawn(async move {
                            tokio::time::sleep(Duration::from_millis(ms)).await;
                            token.cancel();
                        });
                    }
                    if op["op"] == "invoke" {
                        d.invoke(
                            op["capability"].as_str().unwrap(),
                            op["input"].clone(),
                            call,
                        )
                        .await
                    } else {
                        let id = match op["approvalId"].as_str() {
                            Some(literal) => literal.to_owned(),
                            None => saved[op["approval"].as_str().unwrap()].clone(),
                        };
                        let limit = match &op["limit"] {
                            Value::Null => ResumeLimit::Trusted,
                            Value::String(s) if s == "requester" => ResumeLimit::Requester,
                            l => ResumeLimit::ThroughTool(l["throughTool"].as_str().unwrap()),
                        };
                        d.resume_limited(&id, limit, call).await
                    }
                }
                x => panic!("{at}: unknown op {x}"),
            };
            let elapsed = u64::try_from(t0.elapsed().as_millis()).unwrap();
            let got = outcome_json(&outcome);
            assert!(
                subset(&op["expect"], &got),
                "{at}: expected {} got {got}",
                op["expect"]
            );
            if let Some(out) = op["expect"].get("output") {
                assert_eq!(Some(out), got.get("output"), "{at}: output");
            }
            if let Some(label) = op["save"].as_str() {
                let Outcome::ApprovalRequired(r) = &outcome else {
                    panic!("{at}: nothing to save")
                };
                saved.insert(label.to_owned(), r.id.clone());
            }
            if let Some(j) = op["sameErrorAs"].as_u64() {
                let j = usize::try_from(j).unwrap();
                assert_eq!(
                    Some(&got["error"]),
                    errors.get(j),
                    "{at}: not the same error as op[{j}]"
                );
            }
            errors.resize(i, Value::Null);
            errors.push(got["error"].clone());
            if let Some(ms) = op["elapsedMs"].as_u64() {
                assert_eq!(elapsed, ms, "{at}: elapsed");
            }
            let records = audit.take();
            let finished: Vec<_> = records
                .iter()
                .filter(|r| r.event == AuditEvent::Finished)
                .collect();
            assert_eq!(
                finished.len(),
                1,
                "{at}: one finished audit record per invocation"
            );
            if let Some(events) = op["auditEvents"].as_array() {
                let got: Vec<Value> = records.iter().map(|r| json!(r.event)).collect();
                assert_eq!(&got, events, "{at}: audit events");
            }
            let record = finished[0].to_json();
            if let Some(exp) = op.get("audit") {
                // `inputHash: true|false` asks only whether a hash was computed.
                let mut exp = exp.clone();
                if let Some(h) = exp.as_object_mut().unwrap().remove("inputHash") {
                    let h = h.as_bool().unwrap();
                    assert_eq!(
                        record["inputHash"].is_string(),
                        h,
                        "{at}: inputHash presence"
                    );
                }
                // `hasFailure`: whether the record names a plain failure's
                // class (which class is the binding's language's).
                if let Some(has) = exp.as_object_mut().unwrap().remove("hasFailure") {
                    assert_eq!(
                        record["failure"].as_str().is_some_and(|f| !f.is_empty()),
                        has.as_bool().unwrap(),
                        "{at}: failure presence: {record}"
                    );
                }
                assert!(
                    subset(&exp, &record),
                    "{at}: audit expected {exp} got {record}"
                );
            }
            if let Some(calls) = op["handlerCalls"].as_object() {
                for (id, n) in calls {
                    assert_eq!(
                        u64::from(fixtures[id].calls()),
                        n.as_u64().unwrap(),
                        "{at}: calls of {id}"
                    );
                }
            }
            if let Some(secret) = op["mustNotContain"].as_str() {
                let all = json!({"error": got["error"], "audit": records.iter().map(|r| r.to_json()).collect::<Vec<_>>()});
                assert!(
                    !all.to_string().contains(secret),
                    "{at}: `{secret}` leaked: {all}"
                );
            }
        }
    }
}

#[test]
fn pipeline_vectors() {
    let mut files: Vec<_> = std::fs::read_dir(vector_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut count = 0;
    let mut invariants = std::collections::BTreeSet::new();
    let mut stages = std::collections::BTreeSet::new();
    for path in files {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(doc["suite"], "pipeline", "{path:?}");
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        for v in doc["cases"].as_array().unwrap() {
            for si in v["invariants"].as_array().into_iter().flatten() {
                invariants.insert(si.as_str().unwrap().to_owned());
            }
            for s in v["stages"].as_array().into_iter().flatten() {
                stages.insert(s.as_u64().unwrap());
            }
            let case = Case {
                file: file.clone(),
                v,
            };
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .unwrap();
            rt.block_on(case.run());
            count += 1;
        }
    }
    assert!(count > 0, "no pipeline vectors found");
    let all_si: std::collections::BTreeSet<String> = (1..=12).map(|i| format!("SI-{i}")).collect();
    assert_eq!(invariants, all_si, "every invariant has a vector");
    assert_eq!(stages, (1..=14).collect(), "every stage has a vector");
}
