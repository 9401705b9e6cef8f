//! The tokio driver: the pipeline state machine run against Rust hooks.
//!
//! This is a *host loop*, exactly like a binding's: it reads
//! [`Invocation::step`], performs the step with the hooks registered for the
//! capability, and answers. It makes no governance decision of its own —
//! which hooks run, in which order, with which deadline, whether to retry,
//! all come from the machine. It is the reference the pipeline vectors are
//! checked against.
//!
//! Deadlines cancel: the handler gets a [`CancellationToken`] that fires at
//! the deadline or when the caller's token fires; the handler's future is
//! dropped at that moment, so a late result can never be delivered.
//!
//! Time: the driver's clock is the unix time at build plus tokio's
//! monotonic clock since then, so `tokio::time::pause` makes every timing
//! (deadlines, backoff, approval expiry) deterministic in tests.

use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::audit::AuditRecord;
use super::policies::PolicyScope;
use super::redaction::{ApprovalInputView, RedactionInfo, approval_input_redaction};
use super::step::{Answer, Decision, Step};
use super::{Invocation, InvokeOptions, Outcome, Payload, ResumeLimit};
use crate::approval::{ApprovalRequest, ApprovalStore, BoxFuture, Decision as ApprovalDecision};
use crate::error::{CapabilityError, ErrorCode};
use crate::frame::Frame;
use crate::policy::PolicyRule;
use crate::registry::{Capability, CapabilityRegistry};

/// The application context: opaque to the core, handed back to hooks.
pub type AppContext = Arc<dyn Any + Send + Sync>;

/// A host `retryOn` predicate, consulted only for retryable errors.
pub type RetryOnFn = Arc<dyn Fn(&CapabilityError) -> bool + Send + Sync>;

/// What a handler is told about its call.
pub struct HandlerContext<'a> {
    /// Fires at the deadline or when the caller cancels. Stop work then:
    /// the result will be discarded anyway.
    pub cancel: CancellationToken,
    /// 1 for the first attempt.
    pub attempt: u32,
    pub deadline_at_ms: u64,
    /// The frozen frame (on resume: the recorded surface and actor).
    pub frame: &'a Frame,
    pub capability: &'a Capability,
    pub context: Option<&'a AppContext>,
}

/// A handler's failure. `code: None` is a plain failure (like a thrown
/// exception): the caller sees a generic EXECUTION_FAILED, never this
/// message, and the audit record names it only as `thrown` (a Rust error
/// has no class; log the message yourself). With a code, it is the
/// handler's own `CapabilityError`.
#[derive(Clone, Debug, PartialEq)]
pub struct HandlerError {
    pub code: Option<ErrorCode>,
    pub message: String,
    pub retryable: bool,
    /// With a code: the error's details, shown to the caller within
    /// [`crate::limits::ERROR_DETAILS`] (ignored for a plain failure).
    pub details: Option<Value>,
}

impl HandlerError {
    /// A plain failure (not retryable).
    pub fn thrown(message: impl Into<String>) -> HandlerError {
        HandlerError {
            code: None,
            message: message.into(),
            retryable: false,
            details: None,
        }
    }
}

impl From<CapabilityError> for HandlerError {
    fn from(e: CapabilityError) -> HandlerError {
        HandlerError {
            code: Some(e.code),
            message: e.message,
            retryable: e.retryable,
            details: e.details,
        }
    }
}

/// Runs a capability.
pub trait Handler: Send + Sync {
    fn call<'a>(
        &'a self,
        input: &'a Value,
        cx: HandlerContext<'a>,
    ) -> BoxFuture<'a, Result<Value, HandlerError>>;
}

/// Validates (and may apply defaults to) an input or an output. `Err` is a
/// message; for inputs it is shown to the model, for outputs it is dropped.
/// A validator that panics fails as a thrown validator does in the other
/// bindings: INVALID_INPUT with the core's generic words
/// ([`issues::VALIDATOR_FAILED`](super::issues::VALIDATOR_FAILED)), or
/// OUTPUT_INVALID; the panic's text goes only to the panic hook. So does
/// every host hook the driver awaits (`unless_panicked`): a handler that
/// panics is a plain failure, a redactor's drops the output, a host
/// policy's denies.
pub trait Validator: Send + Sync {
    fn validate<'a>(&'a self, value: &'a Value) -> BoxFuture<'a, Result<Value, String>>;
}

/// What a host policy sees: only the validated input and the frozen frame.
pub struct PolicyRequest<'a> {
    pub capability: &'a Capability,
    pub input: &'a Value,
    pub frame: &'a Frame,
    pub context: Option<&'a AppContext>,
}

/// A host policy. `Err` (or running past its timeout) denies.
pub trait Policy: Send + Sync {
    fn evaluate<'a>(
        &'a self,
        request: PolicyRequest<'a>,
    ) -> BoxFuture<'a, Result<Decision, String>>;
}

/// A redactor: pure and total. `Err` fails the call with EXECUTION_FAILED
/// and the value is dropped; an output redactor still running at the
/// call's deadline ends it in TIMEOUT (its future is dropped, the value
/// with it), as does a validator. A redactor that spins without
/// yielding blocks its thread: no async runtime can interrupt it.
pub trait Redactor: Send + Sync {
    fn redact<'a>(
        &'a self,
        value: &'a Value,
        info: RedactionInfo<'a>,
        context: Option<&'a AppContext>,
    ) -> BoxFuture<'a, Result<Value, String>>;
}

/// Receives audit records (one `finished` per invocation, plus `started`).
///
/// Called synchronously on the invocation's task: it must not block (queue
/// records for a slow backend, as the PostgreSQL sink does); a blocking
/// sink delays the call by as long as it blocks. A sink that panics loses
/// that record; the invocation goes on unchanged.
pub trait AuditSink: Send + Sync {
    fn record(&self, record: &AuditRecord);
}

/// The host hooks of one capability.
#[derive(Clone, Default)]
pub struct CapabilityHooks {
    pub handler: Option<Arc<dyn Handler>>,
    pub input_validator: Option<Arc<dyn Validator>>,
    pub output_validator: Option<Arc<dyn Validator>>,
    /// Host policies by their index in the capability's `policies`.
    pub policies: HashMap<u32, Arc<dyn Policy>>,
    pub redact_output: Option<Arc<dyn Redactor>>,
    pub redact_approval_input: Option<Arc<dyn Redactor>>,
    pub retry_on: Option<RetryOnFn>,
}

/// What the host loop keeps of a [`Call`] once the frame moved into the
/// invocation.
struct Host {
    context: Option<AppContext>,
    cancel: CancellationToken,
}

/// Per-call arguments besides the input.
#[derive(Clone)]
pub struct Call {
    /// Built by the adapter from the authenticated transport (SI-2).
    pub frame: Frame,
    pub context: Option<AppContext>,
    /// The caller's cancellation.
    pub cancel: CancellationToken,
}

impl Call {
    pub fn new(frame: Frame) -> Call {
        Call {
            frame,
            context: None,
            cancel: CancellationToken::new(),
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Clock {
    unix_ms_at_base: u64,
    base: Instant,
}

impl Clock {
    fn now_ms(&self) -> u64 {
        let elapsed = u64::try_from(self.base.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.unix_ms_at_base.saturating_add(elapsed)
    }
}

/// Builds a [`Driver`], checking that every hook the registry declares
/// has an implementation (a missing one would otherwise fail at call time).
pub struct DriverBuilder {
    registry: Arc<CapabilityRegistry>,
    store: Arc<dyn ApprovalStore>,
    hooks: Vec<CapabilityHooks>,
    runtime_policies: HashMap<u32, Arc<dyn Policy>>,
    audit: Option<Arc<dyn AuditSink>>,
    audit_payloads: bool,
    clock_base_unix_ms: Option<u64>,
    problems: Vec<String>,
}

impl DriverBuilder {
    fn hooks_mut(&mut self, capability_id: &str) -> Option<&mut CapabilityHooks> {
        match self.registry.resolve(capability_id) {
            Some(c) if c.id == capability_id => self.hooks.get_mut(c.index as usize),
            _ => {
                self.problems
                    .push(format!("hook for unknown capability `{capability_id}`"));
                None
            }
        }
    }

    /// All hooks of one capability at once.
    pub fn hooks(mut self, capability_id: &str, hooks: CapabilityHooks) -> Self {
        if let Some(h) = self.hooks_mut(capability_id) {
            *h = hooks;
        }
        self
    }

    pub fn handler(mut self, capability_id: &str, handler: Arc<dyn Handler>) -> Self {
        if let Some(h) = self.hooks_mut(capability_id) {
            h.handler = Some(handler);
        }
        self
    }

    pub fn input_validator(mut self, capability_id: &str, v: Arc<dyn Validator>) -> Self {
        if let Some(h) = self.hooks_mut(capability_id) {
            h.input_validator = Some(v);
        }
        self
    }

    pub fn output_validator(mut self, capability_id: &str, v: Arc<dyn Validator>) -> Self {
        if let Some(h) = self.hooks_mut(capability_id) {
            h.output_validator = Some(v);
        }
        self
    }

    /// The host policy at `index` of the capability's `policies`.
    pub fn policy(mut self, capability_id: &str, index: u32, p: Arc<dyn Policy>) -> Self {
        if let Some(h) = self.hooks_mut(capability_id) {
            h.policies.insert(index, p);
        }
        self
    }

    /// The host policy at `index` of the registry's runtime `policies`.
    pub fn runtime_policy(mut self, index: u32, p: Arc<dyn Policy>) -> Self {
        self.runtime_policies.insert(index, p);
        self
    }

    pub fn redact_output(mut self, capability_id: &str, r: Arc<dyn Redactor>) -> Self {
        if let Some(h) = self.hooks_mut(capability_id) {
            h.redact_output = Some(r);
        }
        self
    }

    pub fn redact_approval_input(mut self, capability_id: &str, r: Arc<dyn Redactor>) -> Self {
        if let Some(h) = self.hooks_mut(capability_id) {
            h.redact_approval_input = Some(r);
        }
        self
    }

    pub fn retry_on(mut self, capability_id: &str, f: RetryOnFn) -> Self {
        if let Some(h) = self.hooks_mut(capability_id) {
            h.retry_on = Some(f);
        }
        self
    }

    /// Deliver audit records to `sink`; with `payloads`, finished records
    /// carry the redacted output.
    pub fn audit(mut self, sink: Arc<dyn AuditSink>, payloads: bool) -> Self {
        self.audit = Some(sink);
        self.audit_payloads = payloads;
        self
    }

    /// Fixes the unix time the driver's clock starts at (tests, vectors).
    pub fn clock_base_unix_ms(mut self, unix_ms: u64) -> Self {
        self.clock_base_unix_ms = Some(unix_ms);
        self
    }

    /// The driver, or every missing or unknown hook.
    pub fn build(self) -> Result<Driver, Vec<String>> {
        let mut problems = self.problems;
        let host_policy_indices = |list: &[crate::policy::PolicySpec]| {
            list.iter()
                .enumerate()
                .filter(|(_, p)| matches!(p.rule, PolicyRule::Host))
                .map(|(i, _)| u32::try_from(i).unwrap_or(u32::MAX))
                .collect::<Vec<_>>()
        };
        for i in host_policy_indices(&self.registry.options().policies) {
            if !self.runtime_policies.contains_key(&i) {
                problems.push(format!(
                    "runtime policy {i} is a host policy without an implementation"
                ));
            }
        }
        for (cap, h) in self.registry.capabilities().iter().zip(&self.hooks) {
            let id = &cap.id;
            let mut need = |ok: bool, what: &str| {
                if !ok {
                    problems.push(format!("capability `{id}`: no {what}"));
                }
            };
            need(h.handler.is_some(), "handler");
            need(
                !cap.validate_input || h.input_validator.is_some(),
                "input validator",
            );
            need(
                !cap.validate_output || h.output_validator.is_some(),
                "output validator",
            );
            need(
                !cap.meta.redact.output || h.redact_output.is_some(),
                "output redactor",
            );
            need(
                !cap.meta.redact.approval_input || h.redact_approval_input.is_some(),
                "approval-input redactor",
            );
            need(
                !cap.meta.retry.as_ref().is_some_and(|r| r.retry_on) || h.retry_on.is_some(),
                "retryOn predicate",
            );
            for i in host_policy_indices(&cap.meta.policies) {
                need(
                    h.policies.contains_key(&i),
                    &format!("implementation of host policy {i}"),
                );
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(Driver {
            clock: Clock {
                unix_ms_at_base: self
                    .clock_base_unix_ms
                    .unwrap_or_else(crate::clock::unix_now_ms),
                base: Instant::now(),
            },
            registry: self.registry,
            store: self.store,
            hooks: self.hooks,
            runtime_policies: self.runtime_policies,
            audit: self.audit,
            audit_payloads: self.audit_payloads,
        })
    }
}

/// Runs invocations of one registry with Rust hooks.
pub struct Driver {
    registry: Arc<CapabilityRegistry>,
    store: Arc<dyn ApprovalStore>,
    hooks: Vec<CapabilityHooks>,
    runtime_policies: HashMap<u32, Arc<dyn Policy>>,
    audit: Option<Arc<dyn AuditSink>>,
    audit_payloads: bool,
    clock: Clock,
}

fn internal(message: &str) -> CapabilityError {
    CapabilityError::new(ErrorCode::Internal, message)
}

impl Driver {
    pub fn builder(
        registry: Arc<CapabilityRegistry>,
        store: Arc<dyn ApprovalStore>,
    ) -> DriverBuilder {
        let n = registry.capabilities().len();
        DriverBuilder {
            registry,
            store,
            hooks: vec![CapabilityHooks::default(); n],
            runtime_policies: HashMap::new(),
            audit: None,
            audit_payloads: false,
            clock_base_unix_ms: None,
            problems: Vec::new(),
        }
    }

    pub fn registry(&self) -> &Arc<CapabilityRegistry> {
        &self.registry
    }

    pub fn store(&self) -> &Arc<dyn ApprovalStore> {
        &self.store
    }

    /// The driver's clock (unix ms).
    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    fn options(&self) -> InvokeOptions {
        InvokeOptions {
            now_ms: self.clock.now_ms(),
            audit: self.audit.is_some(),
            audit_payloads: self.audit_payloads,
            span_payloads: false,
        }
    }

    /// Invokes a capability by id or adapter tool name.
    pub async fn invoke(&self, id_or_tool_name: &str, input: Value, call: Call) -> Outcome {
        let Call {
            frame,
            context,
            cancel,
        } = call;
        let mut inv = Invocation::start(
            Arc::clone(&self.registry),
            id_or_tool_name,
            Payload::Json(input),
            frame,
            self.options(),
        );
        if cancel.is_cancelled() {
            // Nothing stored, consumed or run for a caller already gone.
            inv.caller_cancelled(self.clock.now_ms());
        }
        self.drive(inv, &Host { context, cancel }).await
    }

    /// Resumes an approved request. Only the frame's trace and ids are
    /// used; the surface and actor are the recorded ones (SI-3).
    pub async fn resume(&self, approval_id: &str, call: Call) -> Outcome {
        self.resume_limited(approval_id, ResumeLimit::Trusted, call)
            .await
    }

    /// Resumes an approved request as `limit` allows (a caller who may
    /// resume only its own requests: the frame's surface and actor must
    /// be the request's; through a tool, the request must be for it).
    pub async fn resume_limited(
        &self,
        approval_id: &str,
        limit: ResumeLimit<'_>,
        call: Call,
    ) -> Outcome {
        let Call {
            frame,
            context,
            cancel,
        } = call;
        let registry = Arc::clone(&self.registry);
        let inv = limit.resume(
            registry,
            approval_id,
            frame,
            self.options(),
            cancel.is_cancelled(),
        );
        self.drive(inv, &Host { context, cancel }).await
    }

    /// Approves or rejects a pending request, with the registry's
    /// `approverMustDiffer` rule.
    pub async fn decide(
        &self,
        approval_id: &str,
        decision: ApprovalDecision,
        approver: Option<&str>,
        reason: Option<&str>,
    ) -> Result<ApprovalRequest, CapabilityError> {
        self.store
            .decide(
                approval_id,
                decision,
                approver,
                reason,
                self.clock.now_ms(),
                self.registry.options().approver_must_differ,
            )
            .await
            .map_err(CapabilityError::from)
    }

    /// `redactApprovalInput`: the model-safe view of a request's input for
    /// approval UIs, redacted with the request's *recorded* surface and
    /// actor. A throwing redactor gives EXECUTION_FAILED, never the input.
    pub async fn redact_approval_input(
        &self,
        request: &ApprovalRequest,
        context: Option<&AppContext>,
    ) -> Result<Value, CapabilityError> {
        match approval_input_redaction(&self.registry, request)? {
            ApprovalInputView::AsStored => Ok(request.input.clone()),
            ApprovalInputView::Redact {
                capability_index,
                info,
                timeout_ms,
            } => {
                let redactor = self
                    .hooks
                    .get(capability_index as usize)
                    .and_then(|h| h.redact_approval_input.as_ref())
                    .ok_or_else(|| internal("no approval-input redactor"))?;
                // A redactor that fails, panics (a Rust host's throw) or
                // outlasts its bound: the view is EXECUTION_FAILED, as in
                // every binding.
                let bound = std::time::Duration::from_millis(timeout_ms);
                let redacted = unless_panicked(|| redactor.redact(&request.input, info, context));
                tokio::time::timeout(bound, redacted)
                    .await
                    .ok()
                    .flatten()
                    .and_then(Result::ok)
                    .ok_or_else(|| {
                        CapabilityError::new(
                            ErrorCode::ExecutionFailed,
                            super::redaction::APPROVAL_VIEW_FAILED_MESSAGE,
                        )
                    })
            }
        }
    }

    fn hooks_of(&self, inv: &Invocation) -> Option<&CapabilityHooks> {
        inv.capability()
            .and_then(|c| self.hooks.get(c.index as usize))
    }

    /// The host loop.
    async fn drive(&self, mut inv: Invocation, call: &Host) -> Outcome {
        loop {
            // The machine ends an attempt whose deadline has passed before
            // its handler would start (SI-9).
            inv.at(self.clock.now_ms());
            let answer = match inv.step() {
                Step::Done(_) => break,
                // A validator or redactor the call awaits ends at the
                // call's deadline (`call_deadline_ms`, as in every binding:
                // the machine makes it TIMEOUT) or the caller's
                // cancellation; a hook that is ready wins a tie.
                step @ (Step::ValidateInput { .. }
                | Step::ValidateOutput { .. }
                | Step::RedactOutput { .. }) => {
                    let remaining = inv.call_deadline_ms().saturating_sub(self.clock.now_ms());
                    tokio::select! {
                        biased;
                        a = self.perform(&inv, step, call) => a,
                        _ = tokio::time::sleep(Duration::from_millis(remaining)) => {
                            Some(Answer::DeadlinePassed { now_ms: self.clock.now_ms() })
                        }
                        _ = call.cancel.cancelled() => Some(Answer::Cancelled { now_ms: self.clock.now_ms() }),
                    }
                }
                // A policy is bounded by its own timeout (`perform`) and
                // ends at the caller's cancellation. Store steps are not
                // raced: the machine takes a cancellation only before one
                // starts.
                step @ Step::EvaluatePolicy { .. } => tokio::select! {
                    biased;
                    a = self.perform(&inv, step, call) => a,
                    _ = call.cancel.cancelled() => Some(Answer::Cancelled { now_ms: self.clock.now_ms() }),
                },
                // A caller cancelled by now stores and consumes nothing (the
                // machine ends the call; Python's rule before a store step too).
                step @ (Step::PersistApproval(_) | Step::ConsumeApproval { .. })
                    if !call.cancel.is_cancelled() =>
                {
                    self.perform(&inv, step, call).await
                }
                Step::PersistApproval(_) | Step::ConsumeApproval { .. } => {
                    inv.caller_cancelled(self.clock.now_ms());
                    continue;
                }
                step => self.perform(&inv, step, call).await,
            };
            match answer {
                // Cannot happen with JSON payloads: the call ends INTERNAL,
                // its finished record still delivered.
                None => {
                    let _ = inv.abandon(self.clock.now_ms());
                }
                // An out-of-turn answer ends the call INTERNAL too.
                Some(a) => {
                    let _ = inv.answer(a);
                }
            }
        }
        inv.take_outcome()
            .unwrap_or_else(|| Outcome::Error(internal("no outcome")))
    }

    async fn perform(&self, inv: &Invocation, step: Step<'_>, call: &Host) -> Option<Answer> {
        let cx = call.context.as_ref();
        let hooks = self.hooks_of(inv);
        Some(match step {
            Step::ValidateInput { input } => {
                let v = input.as_json()?;
                match hooks.and_then(|h| h.input_validator.as_ref()) {
                    Some(val) => match unless_panicked(|| val.validate(v)).await {
                        Some(Ok(v)) => Answer::InputValid(Payload::Json(v)),
                        Some(Err(m)) => Answer::InputInvalid(m),
                        // Rust's "thrown": the core's generic words; the
                        // panic's text went to the panic hook (stderr).
                        None => Answer::InputValidatorFailed,
                    },
                    None => Answer::InputInvalid("no input validator".into()),
                }
            }
            Step::EvaluatePolicy {
                scope,
                index,
                timeout_ms,
                input,
            } => {
                let policy = match scope {
                    PolicyScope::Runtime => self.runtime_policies.get(&index),
                    PolicyScope::Capability => hooks.and_then(|h| h.policies.get(&index)),
                };
                let (Some(policy), Some(capability), Some(input)) =
                    (policy, inv.capability(), input.as_json())
                else {
                    return Some(Answer::PolicyFailed("no implementation".into()));
                };
                let request = PolicyRequest {
                    capability,
                    input,
                    frame: inv.frame(),
                    context: cx,
                };
                let run = unless_panicked(|| policy.evaluate(request));
                match tokio::time::timeout(Duration::from_millis(timeout_ms), run).await {
                    Ok(Some(Ok(d))) => Answer::PolicyDecision(d),
                    Ok(Some(Err(m))) => Answer::PolicyFailed(m),
                    Ok(None) => Answer::PolicyFailed("panicked".into()),
                    Err(_) => Answer::PolicyFailed("timed out".into()),
                }
            }
            Step::PersistApproval(request) => {
                let repeats = inv.persist_repeats();
                super::gate::persist_answer(self.store.as_ref(), request, repeats).await
            }
            Step::ConsumeApproval { id, requester } => {
                let now_ms = self.clock.now_ms();
                super::gate::consume_answer(self.store.as_ref(), id, now_ms, requester).await
            }
            Step::RunHandler {
                attempt,
                deadline_at_ms,
                input,
            } => {
                let (Some(handler), Some(capability), Some(input)) = (
                    hooks.and_then(|h| h.handler.as_ref()),
                    inv.capability(),
                    input.as_json(),
                ) else {
                    return Some(Answer::HandlerError {
                        code: None,
                        message: "no handler".into(),
                        retryable: false,
                        details: None,
                        now_ms: self.clock.now_ms(),
                    });
                };
                self.run_handler(
                    handler.as_ref(),
                    input,
                    capability,
                    inv,
                    attempt,
                    deadline_at_ms,
                    call,
                )
                .await
            }
            // A predicate that panics (a Rust host's throw) does not
            // retry, as a throwing one in every binding.
            Step::AskRetryOn { error } => {
                Answer::RetryOn(hooks.and_then(|h| h.retry_on.as_ref()).is_some_and(|f| {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(error)))
                        .unwrap_or(false)
                }))
            }
            Step::Sleep { ms } => {
                tokio::select! {
                    biased;
                    _ = call.cancel.cancelled() => Answer::Cancelled { now_ms: self.clock.now_ms() },
                    _ = tokio::time::sleep(Duration::from_millis(ms)) => Answer::Slept { now_ms: self.clock.now_ms() },
                }
            }
            Step::ValidateOutput { output } => {
                let v = output.as_json()?;
                match hooks.and_then(|h| h.output_validator.as_ref()) {
                    Some(val) => match unless_panicked(|| val.validate(v)).await {
                        Some(Ok(v)) => Answer::OutputValid(Payload::Json(v)),
                        Some(Err(m)) => Answer::OutputInvalid(m),
                        None => Answer::OutputInvalid(String::new()),
                    },
                    None => Answer::OutputInvalid(String::new()),
                }
            }
            Step::RedactOutput { output, info } => {
                let v = output.as_json()?;
                match hooks.and_then(|h| h.redact_output.as_ref()) {
                    Some(r) => match unless_panicked(|| r.redact(v, info, cx)).await {
                        Some(Ok(v)) => Answer::Redacted(Payload::Json(v)),
                        Some(Err(_)) | None => Answer::RedactorFailed,
                    },
                    None => Answer::RedactorFailed,
                }
            }
            Step::Audit(record) => {
                if let Some(sink) = &self.audit {
                    // A subscriber that panics loses its record and changes
                    // nothing else: the outcome stands and nothing runs
                    // twice (as a raising subscriber in the bindings).
                    let delivered = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        sink.record(record);
                    }));
                    drop(delivered);
                }
                Answer::Audited
            }
            Step::ExportInput | Step::ExportOutput | Step::Done(_) => return None,
        })
    }

    #[allow(clippy::too_many_arguments)]
    async fn run_handler(
        &self,
        handler: &dyn Handler,
        input: &Value,
        capability: &Capability,
        inv: &Invocation,
        attempt: u32,
        deadline_at_ms: u64,
        call: &Host,
    ) -> Answer {
        let token = call.cancel.child_token();
        // `drive` told the machine the time just before this step, so a
        // deadline already past never reaches here (`Invocation::at`).
        let remaining = deadline_at_ms.saturating_sub(self.clock.now_ms());
        let cx = HandlerContext {
            cancel: token.clone(),
            attempt,
            deadline_at_ms,
            frame: inv.frame(),
            capability,
            context: call.context.as_ref(),
        };
        let run = unless_panicked(|| handler.call(input, cx));
        // Order matters: at the deadline instant the timer wins, so a result
        // that is exactly on time or late is discarded, never delivered.
        let answer = tokio::select! {
            biased;
            _ = call.cancel.cancelled() => Answer::Cancelled { now_ms: self.clock.now_ms() },
            _ = tokio::time::sleep(Duration::from_millis(remaining)) => {
                Answer::HandlerTimedOut { now_ms: self.clock.now_ms() }
            }
            r = run => match r {
                Some(Ok(v)) => Answer::HandlerOk { output: Payload::Json(v), now_ms: self.clock.now_ms() },
                // A Rust host's thrown error: a plain failure (never
                // retryable, its text only in the panic hook's output).
                None => Answer::HandlerError {
                    code: None,
                    message: "panicked".to_owned(),
                    retryable: false,
                    details: None,
                    now_ms: self.clock.now_ms(),
                },
                Some(Err(e)) => Answer::HandlerError {
                    code: e.code,
                    // A plain failure's answer carries its class, never its
                    // message (the audit record keeps it: see AuditRecord).
                    message: if e.code.is_some() { e.message } else { "thrown".to_owned() },
                    retryable: e.retryable,
                    details: e.details.map(Box::new),
                    now_ms: self.clock.now_ms(),
                },
            },
        };
        // The handler's future is dropped by now; tell any work it spawned.
        token.cancel();
        answer
    }
}

/// Runs a host hook's future to its end, `None` if making it or polling it
/// panicked: the driver's host is Rust, whose thrown error is a panic, and a
/// panicking hook (validator, handler, redactor, host policy) must end its
/// call as a throwing one does in Node, Python or Swift — audited — not
/// unwind through the caller's task.
async fn unless_panicked<'a, T>(make: impl FnOnce() -> BoxFuture<'a, T>) -> Option<T> {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::task::Poll;
    let mut fut = catch_unwind(AssertUnwindSafe(make)).ok()?;
    std::future::poll_fn(
        move |cx| match catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx))) {
            Ok(Poll::Ready(v)) => Poll::Ready(Some(v)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(_) => Poll::Ready(None),
        },
    )
    .await
}
