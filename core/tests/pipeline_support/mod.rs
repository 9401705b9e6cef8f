//! Shared fixtures for the pipeline tests: the fixed handlers, validators,
//! policies and redactors every binding can register (the vocabulary of
//! tests/vectors/pipeline), registry builders, and a synchronous host loop.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use orpc_agent_core::approval::{BoxFuture, MemoryApprovalStore};
use orpc_agent_core::pipeline::driver::{
    AuditSink, Driver, DriverBuilder, Handler, HandlerContext, HandlerError, Policy, PolicyRequest,
    Redactor, Validator,
};
use orpc_agent_core::pipeline::{
    Answer, AuditRecord, Decision, Invocation, Outcome, Payload, RedactionInfo, Step, StepKind,
};
use orpc_agent_core::{CapabilityDecl, CapabilityRegistry, ErrorCode, RegistryOptions};
use serde_json::{Value, json};

/// A registry from `[{id, meta, validateInput?, validateOutput?}]` and JSON
/// options. Host validation defaults to off (the raw input is used).
pub fn registry(caps: Value, options: Value) -> Arc<CapabilityRegistry> {
    let decls = caps
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let mut d = CapabilityDecl::new(c["id"].as_str().unwrap(), c["meta"].clone());
            d.validate_input = c["validateInput"].as_bool().unwrap_or(false);
            d.validate_output = c["validateOutput"].as_bool().unwrap_or(false);
            d
        })
        .collect();
    let options = if options.is_null() {
        RegistryOptions::default()
    } else {
        RegistryOptions::from_json(&options).unwrap()
    };
    Arc::new(CapabilityRegistry::build(decls, options).unwrap_or_else(|e| panic!("{e:?}")))
}

/// Minimal read-only metadata exposed on `surfaces`.
pub fn meta(surfaces: &[&str]) -> Value {
    let expose: serde_json::Map<String, Value> = surfaces
        .iter()
        .map(|s| ((*s).to_owned(), json!(true)))
        .collect();
    json!({"description": "test", "expose": expose, "sideEffect": "read", "risk": "low"})
}

/// Merges `extra` into `base` (shallow).
pub fn with(mut base: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        base[k] = v.clone();
    }
    base
}

// ----- handlers ---------------------------------------------------------

/// One handler call as seen by the handler.
#[derive(Clone, Debug)]
pub struct CallLog {
    pub attempt: u32,
    /// tokio's clock when the attempt started.
    pub at: tokio::time::Instant,
    pub deadline_at_ms: u64,
    pub input: Value,
    pub surface: orpc_agent_core::Surface,
    pub actor_id: Option<String>,
}

/// What a fixture handler does.
#[derive(Clone, Debug)]
pub enum Behaviour {
    Echo,
    /// Returns this value.
    Return(Value),
    FailWithCode {
        code: ErrorCode,
        retryable: bool,
        details: Option<Value>,
    },
    /// Fails retryably `n` times (EXECUTION_FAILED), then echoes.
    FailRetryableNTimes(u32),
    /// Waits, ignoring its cancellation token, then echoes.
    Delay(u64),
    /// A plain failure (a thrown exception in other languages).
    Throw(String),
}

pub struct Fixture {
    pub behaviour: Behaviour,
    pub calls: AtomicU32,
    pub log: Mutex<Vec<CallLog>>,
    /// Set when the handler observed its token cancelled.
    pub saw_cancel_at_ms: Arc<Mutex<Option<u64>>>,
}

impl Fixture {
    pub fn new(behaviour: Behaviour) -> Arc<Fixture> {
        Arc::new(Fixture {
            behaviour,
            calls: AtomicU32::new(0),
            log: Mutex::new(Vec::new()),
            saw_cancel_at_ms: Arc::new(Mutex::new(None)),
        })
    }

    pub fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }
}

/// tokio's paused clock in ms since the test's start.
pub fn tokio_ms(start: tokio::time::Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap()
}

impl Handler for Fixture {
    fn call<'a>(
        &'a self,
        input: &'a Value,
        cx: HandlerContext<'a>,
    ) -> BoxFuture<'a, Result<Value, HandlerError>> {
        Box::pin(async move {
            let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
            self.log.lock().unwrap().push(CallLog {
                attempt: cx.attempt,
                at: tokio::time::Instant::now(),
                deadline_at_ms: cx.deadline_at_ms,
                input: input.clone(),
                surface: cx.frame.surface,
                actor_id: cx.frame.actor.id.clone(),
            });
            match &self.behaviour {
                Behaviour::Echo => Ok(input.clone()),
                Behaviour::Return(v) => Ok(v.clone()),
                Behaviour::FailWithCode {
                    code,
                    retryable,
                    details,
                } => Err(HandlerError {
                    code: Some(*code),
                    message: "the handler's own error".into(),
                    retryable: *retryable,
                    details: details.clone(),
                }),
                Behaviour::FailRetryableNTimes(k) => {
                    if n <= *k {
                        Err(HandlerError {
                            code: Some(ErrorCode::ExecutionFailed),
                            message: format!("transient failure {n}"),
                            retryable: true,
                            details: None,
                        })
                    } else {
                        Ok(input.clone())
                    }
                }
                Behaviour::Delay(ms) => {
                    // Work the handler spawned watches the token (it outlives
                    // the handler's future, which the driver drops at the
                    // deadline); the handler itself ignores the token, like
                    // a badly behaved one whose late result must be dropped.
                    let token = cx.cancel.clone();
                    let started = tokio::time::Instant::now();
                    let seen = Arc::clone(&self.saw_cancel_at_ms);
                    tokio::spawn(async move {
                        token.cancelled().await;
                        *seen.lock().unwrap() = Some(tokio_ms(started));
                    });
                    tokio::time::sleep(Duration::from_millis(*ms)).await;
                    Ok(input.clone())
                }
                Behaviour::Throw(m) => Err(HandlerError::thrown(m.clone())),
            }
        })
    }
}

// ----- validators -------------------------------------------------------

/// The vectors' schema subset: `{required: [keys], properties: {key:
/// "string"|"number"|"integer"|"boolean"|"object"|"array"|"null"}}`; the
/// value must be an object.
pub struct MiniSchema(pub Value);

pub fn type_ok(v: &Value, t: &str) -> bool {
    match t {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "null" => v.is_null(),
        _ => false,
    }
}

pub fn check_schema(schema: &Value, v: &Value) -> Result<(), String> {
    let obj = v.as_object().ok_or("expected an object")?;
    for k in schema["required"].as_array().into_iter().flatten() {
        let k = k.as_str().unwrap();
        if !obj.contains_key(k) {
            return Err(format!("`{k}` is required"));
        }
    }
    for (k, t) in schema["properties"].as_object().into_iter().flatten() {
        if let Some(x) = obj.get(k)
            && !type_ok(x, t.as_str().unwrap())
        {
            return Err(format!("`{k}` must be a {}", t.as_str().unwrap()));
        }
    }
    Ok(())
}

impl Validator for MiniSchema {
    fn validate<'a>(&'a self, value: &'a Value) -> BoxFuture<'a, Result<Value, String>> {
        Box::pin(async move { check_schema(&self.0, value).map(|()| value.clone()) })
    }
}

/// A validator from a closure.
pub type ValidateFn = Box<dyn Fn(&Value) -> Result<Value, String> + Send + Sync>;
pub struct FnValidator(pub ValidateFn);

impl Validator for FnValidator {
    fn validate<'a>(&'a self, value: &'a Value) -> BoxFuture<'a, Result<Value, String>> {
        Box::pin(async move { (self.0)(value) })
    }
}

// ----- policies ---------------------------------------------------------

/// A host policy with a fixed answer; `Err` = throws. Records its calls
/// (name, input seen) in `order`.
pub struct FixedPolicy {
    pub name: String,
    pub answer: Result<Decision, String>,
    pub delay_ms: u64,
    pub order: Arc<Mutex<Vec<(String, Value)>>>,
}

impl Policy for FixedPolicy {
    fn evaluate<'a>(&'a self, r: PolicyRequest<'a>) -> BoxFuture<'a, Result<Decision, String>> {
        Box::pin(async move {
            self.order
                .lock()
                .unwrap()
                .push((self.name.clone(), r.input.clone()));
            if self.delay_ms > 0 {
                tokio::time::sleep(Duration::from_millis(self.delay_ms)).await;
            }
            self.answer.clone()
        })
    }
}

// ----- redactors --------------------------------------------------------

/// Replaces the listed top-level fields with "***"; records the info.
pub struct MaskFields {
    pub fields: Vec<String>,
    pub seen: Mutex<Vec<(orpc_agent_core::Surface, String, Option<String>)>>,
}

impl MaskFields {
    pub fn new(fields: &[&str]) -> Arc<MaskFields> {
        Arc::new(MaskFields {
            fields: fields.iter().map(|s| (*s).to_owned()).collect(),
            seen: Mutex::new(Vec::new()),
        })
    }
}

impl Redactor for MaskFields {
    fn redact<'a>(
        &'a self,
        value: &'a Value,
        info: RedactionInfo<'a>,
        _cx: Option<&'a orpc_agent_core::pipeline::driver::AppContext>,
    ) -> BoxFuture<'a, Result<Value, String>> {
        Box::pin(async move {
            self.seen.lock().unwrap().push((
                info.surface,
                info.capability_id.to_owned(),
                info.actor.id.clone(),
            ));
            let mut v = value.clone();
            if let Some(o) = v.as_object_mut() {
                for f in &self.fields {
                    if o.contains_key(f) {
                        o.insert(f.clone(), json!("***"));
                    }
                }
            }
            Ok(v)
        })
    }
}

/// A redactor that throws, quoting the value (so a leak would show).
pub struct ThrowRedactor;

impl Redactor for ThrowRedactor {
    fn redact<'a>(
        &'a self,
        value: &'a Value,
        _info: RedactionInfo<'a>,
        _cx: Option<&'a orpc_agent_core::pipeline::driver::AppContext>,
    ) -> BoxFuture<'a, Result<Value, String>> {
        Box::pin(async move { Err(format!("cannot redact {value}")) })
    }
}

// ----- audit ------------------------------------------------------------

#[derive(Default)]
pub struct Collector(pub Mutex<Vec<AuditRecord>>);

impl AuditSink for Collector {
    fn record(&self, record: &AuditRecord) {
        self.0.lock().unwrap().push(record.clone());
    }
}

impl Collector {
    pub fn take(&self) -> Vec<AuditRecord> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// A driver builder on an in-memory store, clock starting at 1_000_000.
pub fn builder(reg: &Arc<CapabilityRegistry>) -> DriverBuilder {
    Driver::builder(Arc::clone(reg), Arc::new(MemoryApprovalStore::new()))
        .clock_base_unix_ms(1_000_000)
}

// ----- synchronous host -------------------------------------------------

/// Drives `inv` to the end with `host` answering each step; returns the
/// outcome and the kinds of the steps seen (Done excluded).
pub fn drive_sync(
    inv: &mut Invocation,
    mut host: impl FnMut(&Step<'_>) -> Answer,
) -> (Outcome, Vec<StepKind>) {
    let mut kinds = Vec::new();
    for _ in 0..1000 {
        let step = inv.step();
        if let Step::Done(_) = step {
            return (inv.take_outcome().unwrap(), kinds);
        }
        kinds.push(step.kind());
        let a = host(&step);
        let _ = inv.answer(a);
    }
    panic!("the invocation did not finish in 1000 steps")
}

/// A host that accepts everything: validators pass JSON through, policies
/// allow, handlers echo, redactors pass through, audits are taken.
pub fn permissive(step: &Step<'_>) -> Answer {
    match step {
        Step::ValidateInput { input } => Answer::InputValid((*input).clone()),
        Step::EvaluatePolicy { .. } => Answer::PolicyDecision(Decision::Allow),
        Step::ExportInput => Answer::InputExported(json!({})),
        Step::PersistApproval(_) => Answer::Persisted,
        Step::ConsumeApproval { .. } => Answer::Consumed(Err(
            orpc_agent_core::CapabilityError::new(ErrorCode::ApprovalNotFound, "none"),
        )),
        Step::RunHandler { input, .. } => Answer::HandlerOk {
            output: (*input).clone(),
            now_ms: 0,
        },
        Step::AskRetryOn { .. } => Answer::RetryOn(true),
        Step::Sleep { .. } => Answer::Slept { now_ms: 0 },
        Step::ValidateOutput { output } => Answer::OutputValid((*output).clone()),
        Step::RedactOutput { output, .. } => Answer::Redacted((*output).clone()),
        Step::ExportOutput => Answer::OutputExported(json!({})),
        Step::Audit(_) => Answer::Audited,
        Step::Done(_) => Answer::Audited,
    }
}

pub fn json_payload(v: Value) -> Payload {
    Payload::Json(v)
}

/// The error of an outcome, or a panic naming what it was.
pub fn error_of(o: &Outcome) -> &orpc_agent_core::CapabilityError {
    match o {
        Outcome::Error(e) => e,
        other => panic!("expected an error, got {other:?}"),
    }
}

pub fn ok_json(o: &Outcome) -> &Value {
    match o {
        Outcome::Ok(Payload::Json(v)) => v,
        other => panic!("expected an ok JSON outcome, got {other:?}"),
    }
}
