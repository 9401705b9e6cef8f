//! The host protocol a binding wraps, written once (the manner of cedar's
//! `ffi` module): building a registry from JSON declarations, opening the
//! approval store a host names, running store steps of the pipeline, and
//! the approval operations of approval UIs.
//!
//! Bindings (Node, Python, Swift) convert host values to and from the JSON
//! shapes here and run host code when a step asks; nothing in this module
//! decides governance (that is the pipeline's and the registry's: even
//! "never start a handler past its deadline" is `Invocation::at`), it only
//! saves three bindings from re-writing the same plumbing three ways.
//! (Named `host` before: the name collided with host policies and
//! `Payload::Host`.)

pub mod act;
mod answer;
mod approvals;
mod measure;
mod step;
pub use answer::{
    answer, answer_code, exported_input, handler_error, handler_error_with, orpc_handler_error,
};
pub use approvals::{ApprovalView, ResumeLimit, approval_view_code};
pub use measure::measured_input;
pub use step::{outcome_code, reported_kind, step_aux, step_json, step_kind_names};
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "postgres")]
pub use postgres::{
    open_postgres, open_postgres_audit, postgres_options_from_json, postgres_runtime,
};

use std::future::Future;
use std::path::PathBuf;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use serde_json::{Map, Value};

/// What a binding's glue returns in place of a [`StepKind`] (whose values
/// are 1–13): one set for every binding, mirrored in the generated protocol
/// files (`cargo run -p orpc-agent-core --example mirrors`).
pub mod sentinel {
    /// Done, ok, and the output is the value the host holds: no JSON of it
    /// crossed, and no outcome needs reading (every kind Node's and Swift's
    /// glue return, through [`super::reported_kind`]; Python's eager path).
    pub const DONE_OK_HOST: u8 = 14;
    /// An eager call went on asynchronously: the host awaits what it got.
    pub const SUSPENDED: u8 = 100;
    /// An eager call's input validator raised: the host reports it.
    pub const VALIDATOR_RAISED: u8 = 101;
    /// An eager call's handler raised: the host reports it.
    pub const HANDLER_RAISED: u8 = 102;
}

/// The one numeric encoding of a host policy's answer, for bindings that
/// answer `EvaluatePolicy` with primitives (Node and Python; Swift's uniffi
/// enum converts to the same [`Decision`](crate::pipeline::Decision)).
/// Mirrored in the generated protocol files and Python's module.
pub mod decision_code {
    use crate::pipeline::Decision;

    pub const ALLOW: u8 = 0;
    pub const DENY: u8 = 1;
    pub const REQUIRE_APPROVAL: u8 = 2;
    pub const ABSTAIN: u8 = 3;

    /// Every code, in order.
    pub const ALL: [u8; 4] = [ALLOW, DENY, REQUIRE_APPROVAL, ABSTAIN];

    /// The decision a host answered with `code` and the fields it gave;
    /// `None` for a code that names none.
    pub fn decision(
        code: u8,
        reason: Option<String>,
        approval_type: Option<String>,
        expires_in_ms: Option<u64>,
    ) -> Option<Decision> {
        Some(match code {
            ALLOW => Decision::Allow,
            DENY => Decision::Deny { reason },
            REQUIRE_APPROVAL => Decision::RequireApproval {
                approval_type,
                reason,
                expires_in_ms,
            },
            ABSTAIN => Decision::Abstain,
            _ => return None,
        })
    }

    /// The wire name of `code` (`allow`, `deny`, `requireApproval`,
    /// `abstain`), as a policy written in a host language spells it.
    pub fn name(code: u8) -> Option<&'static str> {
        decision(code, None, None, None).map(|d| d.as_str())
    }
}

/// The answer to `ValidateInput` for a validator's issues as JSON text,
/// `[{path?: [string], message: string}]`: the issues (the core writes the
/// model's message from them), or — for text of any other shape — a
/// validator that failed.
pub fn input_issues_answer(issues_json: &str) -> Answer {
    let issues = || -> Option<Vec<crate::pipeline::InputIssue>> {
        let v: Value = serde_json::from_str(issues_json).ok()?;
        v.as_array()?
            .iter()
            .map(|i| {
                let path = match i.get("path") {
                    None => Vec::new(),
                    Some(p) => p
                        .as_array()?
                        .iter()
                        .map(|s| s.as_str().map(str::to_owned))
                        .collect::<Option<Vec<_>>>()?,
                };
                let message = i.get("message")?.as_str()?.to_owned();
                Some(crate::pipeline::InputIssue { path, message })
            })
            .collect()
    };
    issues().map_or(Answer::InputValidatorFailed, Answer::InputIssues)
}

/// The answer to `EvaluatePolicy` for a host's decision `code` with its
/// fields: the decision, or a failed policy (which denies) for a code that
/// names none.
pub fn policy_answer(
    code: u32,
    reason: Option<String>,
    approval_type: Option<String>,
    expires_in_ms: Option<u64>,
) -> Answer {
    u8::try_from(code)
        .ok()
        .and_then(|c| decision_code::decision(c, reason, approval_type, expires_in_ms))
        .map_or_else(
            || Answer::PolicyFailed(String::new()),
            Answer::PolicyDecision,
        )
}

use crate::approval::{
    ApprovalRequest, ApprovalStore, Decision as ApprovalDecision, EffectiveStatus, ListFilter,
    MemoryApprovalStore, SqliteApprovalStore,
};
use crate::error::{CapabilityError, ErrorCode};
use crate::meta::RegistryError;
#[cfg(feature = "tokio-driver")]
use crate::pipeline::driver::AuditSink;
use crate::pipeline::gate::{consume_answer, persist_answer};
use crate::pipeline::{Answer, Invocation, Step, StepKind};
use crate::registry::{CapabilityDecl, CapabilityRegistry, HostHooks, ValidatedInputSchema};

/// Where approvals live, as a host names it: `"memory"`,
/// `{"sqlite": "/path/approvals.db"}` or `{"postgres": "postgres://…"}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreConfig {
    Memory,
    Sqlite(PathBuf),
    Postgres(String),
}

impl StoreConfig {
    /// Parses the JSON form; `null` means memory.
    pub fn from_json(v: &Value) -> Result<StoreConfig, CapabilityError> {
        let bad = || {
            CapabilityError::new(
                ErrorCode::InvalidInput,
                "approvalStore must be \"memory\", {\"sqlite\": path} or {\"postgres\": url}",
            )
        };
        match v {
            Value::Null => Ok(StoreConfig::Memory),
            Value::String(s) if s == "memory" => Ok(StoreConfig::Memory),
            Value::Object(m) if m.len() == 1 => match m.iter().next() {
                Some((k, Value::String(p))) if k == "sqlite" && !p.is_empty() => {
                    Ok(StoreConfig::Sqlite(PathBuf::from(p)))
                }
                Some((k, Value::String(u))) if k == "postgres" && !u.is_empty() => {
                    Ok(StoreConfig::Postgres(u.clone()))
                }
                _ => Err(bad()),
            },
            _ => Err(bad()),
        }
    }

    /// Opens the store. Memory and SQLite open here, synchronously; a
    /// PostgreSQL store needs an async runtime and is opened by
    /// [`open_postgres`] where the `postgres` feature is on.
    pub fn open_sync(&self) -> Result<Arc<dyn ApprovalStore>, CapabilityError> {
        match self {
            StoreConfig::Memory => Ok(Arc::new(MemoryApprovalStore::new())),
            StoreConfig::Sqlite(path) => SqliteApprovalStore::open(path)
                .map(|s| Arc::new(s) as Arc<dyn ApprovalStore>)
                .map_err(|e| e.to_capability_error()),
            StoreConfig::Postgres(_) => Err(CapabilityError::new(
                ErrorCode::Internal,
                "a PostgreSQL approval store is opened asynchronously",
            )),
        }
    }

    /// Whether the store's operations complete without waiting, so a
    /// binding may run them inside a synchronous call.
    pub fn is_sync(&self) -> bool {
        !matches!(self, StoreConfig::Postgres(_))
    }
}

/// Polls a future once; `Some` if it completed. The memory and SQLite
/// stores never wait (their futures finish on the first poll), which lets a
/// binding perform their steps in a synchronous call instead of paying an
/// async round trip (DESIGN §4). `None` means the future would wait: the
/// caller must drive it on a runtime instead.
pub fn run_ready<F: Future>(f: F) -> Option<F::Output> {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    match f.as_mut().poll(&mut cx) {
        Poll::Ready(v) => Some(v),
        Poll::Pending => None,
    }
}

fn would_block() -> CapabilityError {
    CapabilityError::new(
        ErrorCode::Internal,
        "this approval store waits; use the asynchronous call",
    )
}

/// A capability declaration in the JSON form bindings send:
/// `{"id", "meta", "inputSchema"?, "outputSchema"?, "validateInput"?,
/// "validateOutput"?, "hostHooks"?, "validatedInputSchema"?}` (absent: the
/// validated input is described by `inputSchema`; `null`: the host cannot
/// describe it), where `hostHooks` is
/// `{"redactOutput"?, "redactApprovalInput"?, "retryOn"?: bool,
/// "policies"?: [positions]}` — the hooks the binding holds; with it, a
/// declared hook not held is a MISSING_HOOK problem at build.
pub fn decl_from_json(v: &Value) -> Result<CapabilityDecl, CapabilityError> {
    let obj = v.as_object().ok_or_else(|| {
        CapabilityError::new(ErrorCode::InvalidInput, "a declaration must be an object")
    })?;
    let id = obj.get("id").and_then(Value::as_str).ok_or_else(|| {
        CapabilityError::new(ErrorCode::InvalidInput, "a declaration needs a string `id`")
    })?;
    let flag = |k: &str| obj.get(k).and_then(Value::as_bool);
    let schema = |k: &str| obj.get(k).filter(|s| !s.is_null()).cloned();
    let input_schema = schema("inputSchema");
    let output_schema = schema("outputSchema");
    Ok(CapabilityDecl {
        id: id.to_owned(),
        meta: obj.get("meta").cloned().unwrap_or(Value::Null),
        validate_input: flag("validateInput").unwrap_or(input_schema.is_some()),
        validate_output: flag("validateOutput").unwrap_or(output_schema.is_some()),
        input_schema,
        output_schema,
        host_hooks: obj.get("hostHooks").map(host_hooks_from_json).transpose()?,
        validated_input_schema: match obj.get("validatedInputSchema") {
            None => ValidatedInputSchema::SameAsInput,
            Some(Value::Null) => ValidatedInputSchema::Unknown,
            Some(s) => ValidatedInputSchema::Schema(s.clone()),
        },
    })
}

fn host_hooks_from_json(v: &Value) -> Result<HostHooks, CapabilityError> {
    let bad = || {
        CapabilityError::new(
            ErrorCode::InvalidInput,
            "`hostHooks` must be {redactOutput?, redactApprovalInput?, retryOn?: boolean, policies?: [index]}",
        )
    };
    let obj = v.as_object().ok_or_else(bad)?;
    let flag = |k: &str| match obj.get(k) {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(bad()),
    };
    let policies = match obj.get("policies") {
        None => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|i| {
                i.as_u64()
                    .and_then(|i| u32::try_from(i).ok())
                    .ok_or_else(bad)
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(bad()),
    };
    if obj.keys().any(|k| {
        !["redactOutput", "redactApprovalInput", "retryOn", "policies"].contains(&k.as_str())
    }) {
        return Err(bad());
    }
    Ok(HostHooks {
        redact_output: flag("redactOutput")?,
        redact_approval_input: flag("redactApprovalInput")?,
        retry_on: flag("retryOn")?,
        policies,
    })
}

/// Why a host registry could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The declarations have problems: all of them, at once (SI-4).
    #[error(transparent)]
    Invalid(#[from] RegistryError),
    /// The declarations or options are not in the expected JSON shape, or
    /// the store could not be opened.
    #[error(transparent)]
    Setup(#[from] CapabilityError),
}

/// Where a call's audit records go besides the host's own subscriber: a
/// sink the core writes to itself (the PostgreSQL audit sink: queued from
/// Rust, never waiting), and whether the host sees the `Audit` steps at
/// all (it has a subscriber, or telemetry that reads the records). Written
/// once for every binding, so a record never crosses into the host and
/// back only to reach the sink.
#[cfg(feature = "tokio-driver")]
#[derive(Clone, Default)]
pub struct AuditRoute {
    pub sink: Option<Arc<dyn AuditSink>>,
    pub to_host: bool,
}

#[cfg(feature = "tokio-driver")]
impl AuditRoute {
    /// [`BindingRegistry::advance`], handing each `Audit` step's record to
    /// the sink and answering the steps the host does not see.
    pub fn advance(&self, host: &BindingRegistry, inv: &mut Invocation, now_ms: u64) -> StepKind {
        loop {
            let kind = host.advance(inv, now_ms);
            if kind != StepKind::Audit {
                return kind;
            }
            self.record(inv);
            if self.to_host {
                return kind;
            }
            // An out-of-turn answer cannot happen (the step is Audit).
            let _ = inv.answer(Answer::Audited);
        }
    }

    /// Hands the record of the `Audit` step `inv` is at to the sink: for
    /// [`AuditRoute::advance`], and for the finished record an abandoned
    /// call still owes (`Invocation::abandon`).
    pub fn record(&self, inv: &Invocation) {
        if let (Some(sink), Step::Audit(record)) = (&self.sink, inv.step()) {
            sink.record(record);
        }
    }
}

/// A registry and its approval store: the object a binding holds.
pub struct BindingRegistry {
    registry: Arc<CapabilityRegistry>,
    store: Arc<dyn ApprovalStore>,
}

impl BindingRegistry {
    /// Builds from the bindings' JSON: an array of declarations (see
    /// [`decl_from_json`]) and the options `{defaults, policies,
    /// approverMustDiffer}`, with an already opened store.
    pub fn build(
        decls: &Value,
        options: &Value,
        store: Arc<dyn ApprovalStore>,
    ) -> Result<BindingRegistry, BuildError> {
        let list = decls.as_array().ok_or_else(|| {
            CapabilityError::new(ErrorCode::InvalidInput, "declarations must be an array")
        })?;
        let decls = list
            .iter()
            .map(decl_from_json)
            .collect::<Result<Vec<_>, _>>()?;
        let registry = CapabilityRegistry::build_with_json_options(decls, options)?;
        Ok(BindingRegistry {
            registry: Arc::new(registry),
            store,
        })
    }

    pub fn registry(&self) -> &Arc<CapabilityRegistry> {
        &self.registry
    }

    pub fn store(&self) -> &Arc<dyn ApprovalStore> {
        &self.store
    }

    /// Performs the store steps of `inv` (persist an approval request,
    /// consume one on resume) with a store that does not wait, and returns
    /// the first step the host itself must perform. With a store that
    /// would wait, returns the store step unperformed.
    ///
    /// Each step is first shown the time (`Invocation::at`), which is where
    /// the pipeline decides that a handler whose deadline has already
    /// passed at `now_ms` (a slow audit subscriber, validator or policy
    /// spent it) is not started but timed out, as under the tokio driver:
    /// no binding runs a write after its deadline (SI-9). This function
    /// only passes the time on. A `now_ms` of 0 (a host that did not read
    /// its clock) never triggers it.
    pub fn advance(&self, inv: &mut Invocation, now_ms: u64) -> StepKind {
        if self.store.waits() {
            // Never poll a waiting store's future here (see
            // `ApprovalStore::waits`): its steps go to the host as they are.
            inv.at(now_ms);
            return inv.step_kind();
        }
        loop {
            inv.at(now_ms);
            let answer = match inv.step() {
                Step::PersistApproval(request) => {
                    let repeats = inv.persist_repeats();
                    match run_ready(persist_answer(self.store.as_ref(), request, repeats)) {
                        Some(answer) => answer,
                        None => return StepKind::PersistApproval,
                    }
                }
                Step::ConsumeApproval { id, requester } => {
                    let consumed = consume_answer(self.store.as_ref(), id, now_ms, requester);
                    match run_ready(consumed) {
                        Some(answer) => answer,
                        None => return StepKind::ConsumeApproval,
                    }
                }
                step => return step.kind(),
            };
            // An out-of-turn answer cannot happen here (the answer matches
            // the step just read); if it did, the machine ends in INTERNAL.
            let _ = inv.answer(answer);
        }
    }

    /// The store step `inv` is waiting on (after [`advance`](Self::advance)
    /// returned `PersistApproval` or `ConsumeApproval`) as an owned
    /// operation: run it on an async runtime, feed its answer back with
    /// `inv.answer(..)` and `advance` again. `None` when the current step is
    /// not a store step. Bindings use it for stores that wait (PostgreSQL),
    /// so the store call needs no borrow of the invocation while it runs.
    pub fn store_op(&self, inv: &Invocation, now_ms: u64) -> Option<StoreOp> {
        let kind = match inv.step() {
            Step::PersistApproval(request) => {
                StoreOpKind::Persist(Box::new(request.clone()), inv.persist_repeats())
            }
            Step::ConsumeApproval { id, requester } => {
                StoreOpKind::Consume(id.to_string(), requester.cloned().map(Box::new))
            }
            _ => return None,
        };
        Some(StoreOp {
            store: Arc::clone(&self.store),
            kind,
            now_ms,
        })
    }

    /// Refuses a synchronous call on a store that waits.
    fn sync_store(&self) -> Result<(), CapabilityError> {
        if self.store.waits() {
            Err(would_block())
        } else {
            Ok(())
        }
    }

    /// One request, as stored (synchronous stores).
    pub fn approval(&self, id: &str) -> Result<Option<ApprovalRequest>, CapabilityError> {
        self.sync_store()?;
        run_ready(self.store.get(id))
            .ok_or_else(would_block)?
            .map_err(CapabilityError::from)
    }

    /// The request `id`, or the store's APPROVAL_NOT_FOUND for one it does
    /// not hold (for a binding whose API takes an id where the request must
    /// exist: the same error and text as a decide on that id).
    pub fn existing_approval(&self, id: &str) -> Result<ApprovalRequest, CapabilityError> {
        self.approval(id)?
            .ok_or_else(|| crate::approval::StoreError::NotFound(id.to_owned()).into())
    }

    /// A page of requests for an approval UI (synchronous stores).
    pub fn approvals(&self, filter: &ListFilter) -> Result<Vec<ApprovalRequest>, CapabilityError> {
        self.sync_store()?;
        run_ready(self.store.list(filter))
            .ok_or_else(would_block)?
            .map_err(CapabilityError::from)
    }

    /// Approve or reject, with the registry's `approverMustDiffer` rule
    /// (synchronous stores).
    pub fn decide(
        &self,
        id: &str,
        decision: ApprovalDecision,
        approver: Option<&str>,
        reason: Option<&str>,
        now_ms: u64,
    ) -> Result<ApprovalRequest, CapabilityError> {
        self.sync_store()?;
        run_ready(self.decide_owned(
            id.to_owned(),
            decision,
            approver.map(str::to_owned),
            reason.map(str::to_owned),
            now_ms,
        ))
        .ok_or_else(would_block)?
    }

    /// [`Self::existing_approval`] for any store, stores that wait
    /// included, as an owned future (`Send + 'static`) a binding runs on
    /// its async runtime.
    pub fn existing_approval_owned(
        &self,
        id: String,
    ) -> impl Future<Output = Result<ApprovalRequest, CapabilityError>> + Send + use<> {
        let store = Arc::clone(&self.store);
        async move {
            store
                .get(&id)
                .await?
                .ok_or_else(|| crate::approval::StoreError::NotFound(id).into())
        }
    }

    /// [`Self::decide`] for any store, stores that wait included: the
    /// decision with the registry's `approverMustDiffer` rule as an owned
    /// future (`Send + 'static`) a binding runs on its async runtime.
    pub fn decide_owned(
        &self,
        id: String,
        decision: ApprovalDecision,
        approver: Option<String>,
        reason: Option<String>,
        now_ms: u64,
    ) -> impl Future<Output = Result<ApprovalRequest, CapabilityError>> + Send + use<> {
        let store = Arc::clone(&self.store);
        let must_differ = self.registry.options().approver_must_differ;
        async move {
            store
                .decide(
                    &id,
                    decision,
                    approver.as_deref(),
                    reason.as_deref(),
                    now_ms,
                    must_differ,
                )
                .await
                .map_err(CapabilityError::from)
        }
    }
}

/// A pending store step, detached from its invocation (see
/// [`BindingRegistry::store_op`]). `Send + 'static`: it can run on any runtime
/// thread.
pub struct StoreOp {
    store: Arc<dyn ApprovalStore>,
    kind: StoreOpKind,
    now_ms: u64,
}

enum StoreOpKind {
    /// The request, and whether it may repeat an earlier one.
    Persist(Box<ApprovalRequest>, bool),
    Consume(String, Option<Box<crate::approval::Requester>>),
}

impl StoreOp {
    /// Performs the operation and returns the invocation's answer, mapped
    /// exactly as [`BindingRegistry::advance`] maps a store that does not wait.
    pub async fn run(self) -> Answer {
        match self.kind {
            StoreOpKind::Persist(request, repeats) => {
                persist_answer(self.store.as_ref(), &request, repeats).await
            }
            StoreOpKind::Consume(id, requester) => {
                consume_answer(self.store.as_ref(), &id, self.now_ms, requester.as_deref()).await
            }
        }
    }
}

/// A caller's frame from the JSON text a binding writes of the host's
/// frame. A frame that is not one is INVALID_INPUT in words that name the
/// fields' types and never quote a value: the frame comes from the app's
/// frame factory (its actor may hold an email address), and an adapter
/// shows a `CapabilityError`'s message to the model.
pub fn frame_from_json(text: &str) -> Result<crate::Frame, CapabilityError> {
    serde_json::from_str(text).map_err(|_| {
        CapabilityError::new(
            ErrorCode::InvalidInput,
            "invalid frame: a field is not of its type (surface: one of direct, aiSdk, mcp, \
             workflow, test; actor: {id?: string, roles?: [string], attributes?: object}; \
             trace: {traceparent: string, tracestate?: string}; requestId, agentId, \
             sessionId: strings)",
        )
    })
}

/// The next page's cursor: the last request's when the page is full
/// (there may be more), else `None` (this was the last page).
pub fn next_cursor(page: &[ApprovalRequest], filter: &ListFilter) -> Option<String> {
    let full = u32::try_from(page.len()).unwrap_or(u32::MAX) >= filter.effective_limit();
    page.last().filter(|_| full).map(ApprovalRequest::cursor)
}

/// One page as an approval UI reads it: `{requests, nextCursor}`, the
/// requests as of the filter's `now_ms` ([`ApprovalRequest::to_json_at`]),
/// `nextCursor` null on the last page.
pub fn page_json(page: &[ApprovalRequest], filter: &ListFilter) -> Value {
    serde_json::json!({
        "requests": ApprovalRequest::views_json(page, filter.now_ms),
        "nextCursor": next_cursor(page, filter),
    })
}

/// A list filter from the JSON an approval UI sends:
/// `{capabilityId?, actorId?, status?, limit?, cursor?}`; `status` is the
/// effective one (`pending`, `approved`, `rejected`, `consumed`,
/// `expired`), judged at `now_ms`. `null` means absent. An unknown key or a
/// value of the wrong type is INVALID_INPUT naming the key: a filter the
/// caller misspelt (`actorID`) or mistyped (`actorId: 5`) must not list
/// every actor's requests.
pub fn list_filter_from_json(v: &Value, now_ms: u64) -> Result<ListFilter, CapabilityError> {
    const KEYS: [&str; 6] = [
        "capabilityId",
        "actorId",
        "surface",
        "status",
        "limit",
        "cursor",
    ];
    let bad = |m: String| CapabilityError::new(ErrorCode::InvalidInput, m);
    let empty = Map::new();
    let obj = match v {
        Value::Null => &empty,
        Value::Object(o) => o,
        _ => return Err(bad("a list filter must be an object".into())),
    };
    if let Some(k) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(bad(format!(
            "unknown list filter key `{k}` (known: {})",
            KEYS.join(", ")
        )));
    }
    let text = |k: &str| -> Result<Option<String>, CapabilityError> {
        match obj.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(bad(format!("list filter `{k}` must be a string"))),
        }
    };
    let status = match text("status")? {
        None => None,
        Some(s) => Some(
            EffectiveStatus::parse(&s)
                .ok_or_else(|| bad(format!("unknown approval status `{s}`")))?,
        ),
    };
    let surface = match text("surface")? {
        None => None,
        Some(s) => Some(
            crate::meta::Surface::parse(&s).ok_or_else(|| bad(format!("unknown surface `{s}`")))?,
        ),
    };
    let limit = match obj.get("limit") {
        None | Some(Value::Null) => 0,
        // A whole number however a language spells it (Python's `2.0` is
        // JavaScript's `2`, and a number past 2^64 a float), as progress
        // counts are read; the store caps the page size.
        Some(l) => l
            .as_u64()
            .or_else(|| {
                l.as_f64()
                    .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                    .map(|f| {
                        if f >= u64::MAX as f64 {
                            u64::MAX
                        } else {
                            f as u64
                        }
                    })
            })
            .map(|l| u32::try_from(l).unwrap_or(u32::MAX))
            .ok_or_else(|| bad("list filter `limit` must be a non-negative integer".into()))?,
    };
    Ok(ListFilter {
        capability_id: text("capabilityId")?,
        actor_id: text("actorId")?,
        surface,
        status,
        now_ms,
        limit,
        after_id_or_cursor: text("cursor")?,
    })
}

/// The JSON form of a registry error: `{message, problems: [...]}`.
pub fn registry_error_json(e: &RegistryError) -> Value {
    serde_json::json!({
        "message": e.to_string(),
        "problems": e.problems.iter().map(crate::meta::Problem::to_json).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval::ApprovalStatus;

    #[test]
    fn a_decision_code_is_a_decision_or_a_failed_policy() {
        use crate::pipeline::Decision;
        for code in decision_code::ALL {
            let name = decision_code::name(code).unwrap();
            let answer = policy_answer(u32::from(code), Some("r".into()), None, Some(5));
            assert!(
                matches!(&answer, Answer::PolicyDecision(d) if d.as_str() == name),
                "{code}: {answer:?}"
            );
        }
        assert!(matches!(
            policy_answer(
                u32::from(decision_code::REQUIRE_APPROVAL),
                None,
                Some("t".into()),
                Some(5)
            ),
            Answer::PolicyDecision(Decision::RequireApproval {
                expires_in_ms: Some(5),
                ..
            })
        ));
        for unknown in [4, 255, 256, u32::MAX] {
            assert!(matches!(
                policy_answer(unknown, None, None, None),
                Answer::PolicyFailed(_)
            ));
        }
    }

    #[test]
    fn input_issues_of_another_shape_are_a_failed_validator() {
        let ok = input_issues_answer(
            r#"[{"path": ["a", "0"], "message": "Required"}, {"message": "m"}]"#,
        );
        assert!(
            matches!(&ok, Answer::InputIssues(i) if i.len() == 2 && i[0].path == ["a", "0"] && i[1].path.is_empty())
        );
        for bad in [
            "",
            "{}",
            r#"[{"path": "a", "message": "m"}]"#,
            r#"[{"path": [1], "message": "m"}]"#,
            r#"[{"path": []}]"#,
        ] {
            assert!(
                matches!(input_issues_answer(bad), Answer::InputValidatorFailed),
                "{bad}"
            );
        }
    }

    /// A misspelt or mistyped filter is refused, naming the key, instead of
    /// silently listing every actor's requests.
    #[test]
    fn list_filters_refuse_unknown_keys_and_wrong_types() {
        let f = list_filter_from_json(
            &json!({"actorId": "u", "status": "pending", "limit": 5, "cursor": null, "capabilityId": null}),
            7,
        )
        .unwrap();
        assert_eq!(f.actor_id.as_deref(), Some("u"));
        assert_eq!(f.limit, 5);
        assert_eq!(f.now_ms, 7);
        for (bad, key) in [
            (json!({"actorID": "u"}), "actorID"),
            (json!({"actorId": 5}), "actorId"),
            (json!({"capabilityId": ["x"]}), "capabilityId"),
            (json!({"limit": -1}), "limit"),
            (json!({"limit": "10"}), "limit"),
            (json!({"status": true}), "status"),
            (json!({"cursor": {}}), "cursor"),
        ] {
            let e = list_filter_from_json(&bad, 0).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidInput, "{bad}");
            assert!(e.message.contains(key), "{bad}: {}", e.message);
        }
    }

    #[test]
    fn unix_now_ms_is_the_system_clock() {
        let std_ms = || {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| u64::try_from(d.as_millis()).unwrap())
                .unwrap()
        };
        let before = std_ms();
        let now = crate::clock::unix_now_ms();
        let after = std_ms();
        assert!(
            before <= now && now <= after,
            "{before} <= {now} <= {after}"
        );
    }
    use serde_json::json;

    #[test]
    fn store_config_forms() {
        assert_eq!(
            StoreConfig::from_json(&json!("memory")).unwrap(),
            StoreConfig::Memory
        );
        assert_eq!(
            StoreConfig::from_json(&Value::Null).unwrap(),
            StoreConfig::Memory
        );
        assert_eq!(
            StoreConfig::from_json(&json!({"sqlite": "/tmp/a.db"})).unwrap(),
            StoreConfig::Sqlite("/tmp/a.db".into())
        );
        assert!(
            !StoreConfig::from_json(&json!({"postgres": "postgres://x"}))
                .unwrap()
                .is_sync()
        );
        for bad in [
            json!("disk"),
            json!({"sqlite": 3}),
            json!({"sqlite": ""}),
            json!([]),
        ] {
            assert_eq!(
                StoreConfig::from_json(&bad).unwrap_err().code,
                ErrorCode::InvalidInput
            );
        }
    }

    /// A resume limited to the requester: another actor, another surface
    /// or no actor at all is APPROVAL_NOT_FOUND and leaves the request
    /// approved; the requester on its surface runs it once. Through
    /// `advance` (stores that answer at once) and `store_op` (stores that
    /// wait), on memory and SQLite.
    #[test]
    fn resume_by_requester_refuses_everyone_else_without_consuming() {
        let dir = std::env::temp_dir().join(format!("orpc-requester-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        for store in [StoreConfig::Memory, StoreConfig::Sqlite(dir.join("a.db"))] {
            let _ = std::fs::remove_file(dir.join("a.db"));
            let host = BindingRegistry::build(
                &json!([{"id": "orders.cancel", "meta": {
                    "description": "Cancel.", "expose": {"mcp": true, "direct": true},
                    "sideEffect": "destructive", "risk": "medium",
                    "approval": {"required": true}}, "validateInput": false},
                    {"id": "orders.get", "meta": {
                    "description": "Get.", "expose": {"mcp": true},
                    "sideEffect": "read", "risk": "low"}, "validateInput": false}]),
                &json!({}),
                store.open_sync().unwrap(),
            )
            .unwrap();
            let (cancel_tool, get_tool) = (Some(0), Some(1));
            let frame = |surface, actor: Option<&str>| {
                crate::Frame::new(surface).with_actor(crate::Actor {
                    id: actor.map(str::to_owned),
                    ..crate::Actor::default()
                })
            };
            let mut inv = Invocation::start(
                Arc::clone(host.registry()),
                "orders.cancel",
                crate::pipeline::Payload::Json(json!({"order": 1})),
                frame(crate::Surface::Mcp, Some("alice")),
                crate::pipeline::InvokeOptions::at(1_000),
            );
            while inv.step_kind() != StepKind::Done {
                let a = match inv.step() {
                    Step::ExportInput => Answer::InputExported(json!({"order": 1})),
                    _ => {
                        host.advance(&mut inv, 1_000);
                        continue;
                    }
                };
                inv.answer(a).unwrap();
            }
            let Some(crate::pipeline::Outcome::ApprovalRequired(request)) = inv.take_outcome()
            else {
                panic!("expected an approval request");
            };
            host.decide(
                &request.id,
                ApprovalDecision::Approve,
                Some("bob"),
                None,
                1_001,
            )
            .unwrap();
            // Without a tool: `resume_by_requester` (the gateway); with one:
            // `resume_through_tool` (MCP).
            let resume = |f: crate::Frame, by_store_op: bool, tool: Option<u32>| {
                let registry = Arc::clone(host.registry());
                let opts = crate::pipeline::InvokeOptions::at(1_002);
                let mut inv = match tool {
                    None => Invocation::resume_by_requester(registry, &request.id, f, opts),
                    Some(index) => {
                        Invocation::resume_through_tool(registry, &request.id, index, f, opts)
                    }
                };
                if by_store_op && inv.step_kind() == StepKind::ConsumeApproval {
                    let op = host.store_op(&inv, 1_002).unwrap();
                    inv.answer(run_ready(op.run()).unwrap()).unwrap();
                }
                let kind = host.advance(&mut inv, 1_002);
                (kind, inv)
            };
            for (f, by_store_op, tool) in [
                (frame(crate::Surface::Mcp, Some("mallory")), false, None),
                (frame(crate::Surface::Direct, Some("alice")), true, None),
                (frame(crate::Surface::Mcp, None), false, None),
                // Through a tool: another actor, another capability's tool
                // (a read tool must not run alice's cancel), or no actor.
                (
                    frame(crate::Surface::Mcp, Some("mallory")),
                    false,
                    cancel_tool,
                ),
                (frame(crate::Surface::Mcp, Some("alice")), true, get_tool),
                (frame(crate::Surface::Mcp, None), false, cancel_tool),
                (
                    frame(crate::Surface::Direct, Some("alice")),
                    false,
                    cancel_tool,
                ),
            ] {
                let (kind, mut inv) = resume(f, by_store_op, tool);
                assert_eq!(kind, StepKind::Done);
                match inv.take_outcome() {
                    Some(crate::pipeline::Outcome::Error(e)) => {
                        assert_eq!(e.code, ErrorCode::ApprovalNotFound);
                    }
                    other => panic!("expected APPROVAL_NOT_FOUND, got {other:?}"),
                }
                assert_eq!(
                    host.approval(&request.id).unwrap().unwrap().status,
                    ApprovalStatus::Approved,
                    "a refused resume consumed nothing"
                );
            }
            let (kind, _) = resume(frame(crate::Surface::Mcp, Some("alice")), true, cancel_tool);
            assert_eq!(
                kind,
                StepKind::RunHandler,
                "the requester resumes it through its tool"
            );
            assert_eq!(
                host.approval(&request.id).unwrap().unwrap().status,
                ApprovalStatus::Consumed
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn store_op_answers_like_advance() {
        let host = BindingRegistry::build(
            &json!([{"id": "orders.cancel", "meta": {
                "description": "Cancel.", "expose": {"direct": true}, "sideEffect": "destructive",
                "risk": "medium", "approval": {"required": true}}, "validateInput": false}]),
            &json!({}),
            StoreConfig::Memory.open_sync().unwrap(),
        )
        .unwrap();
        let mut inv = Invocation::start(
            Arc::clone(host.registry()),
            "orders.cancel",
            crate::pipeline::Payload::Json(json!({"order": 1})),
            crate::Frame::new(crate::Surface::Direct),
            crate::pipeline::InvokeOptions::at(1_000),
        );
        // Walk the machine by hand up to its store step.
        while inv.step_kind() != StepKind::PersistApproval {
            assert_ne!(inv.step_kind(), StepKind::Done);
            let a = match inv.step() {
                Step::ExportInput => Answer::InputExported(json!({"order": 1})),
                other => panic!("unexpected step {:?}", other.kind()),
            };
            inv.answer(a).unwrap();
        }
        let op = host.store_op(&inv, 1_000).unwrap();
        assert_eq!(run_ready(op.run()), Some(Answer::Persisted));
        assert!(host.store_op(&inv, 1_000).is_some(), "still the same step");
        inv.answer(Answer::Persisted).unwrap();
        assert!(host.store_op(&inv, 1_000).is_none());
        assert_eq!(host.advance(&mut inv, 1_000), StepKind::Done);
        let page = host
            .approvals(&ListFilter {
                limit: 1,
                ..ListFilter::default()
            })
            .unwrap();
        assert_eq!(
            next_cursor(
                &page,
                &ListFilter {
                    limit: 1,
                    ..ListFilter::default()
                }
            ),
            Some(page[0].cursor())
        );
        assert_eq!(next_cursor(&page, &ListFilter::default()), None);
    }

    /// A slow audit subscriber spent the deadline before the handler's
    /// step: `advance` answers the attempt TIMEOUT instead of handing the
    /// host a handler to start (issue 10, as the tokio driver does).
    #[test]
    fn advance_does_not_start_a_handler_past_its_deadline() {
        let host = BindingRegistry::build(
            &json!([{"id": "docs.write", "meta": {
                "description": "Write.", "expose": {"direct": true}, "sideEffect": "write",
                "risk": "low", "timeoutMs": 20}, "validateInput": false}]),
            &json!({}),
            StoreConfig::Memory.open_sync().unwrap(),
        )
        .unwrap();
        let start = |at: u64| {
            let mut opts = crate::pipeline::InvokeOptions::at(at);
            opts.audit = true;
            Invocation::start(
                Arc::clone(host.registry()),
                "docs.write",
                crate::pipeline::Payload::Json(json!({})),
                crate::Frame::new(crate::Surface::Direct),
                opts,
            )
        };
        // In time: the handler's step reaches the host.
        let mut inv = start(1_000);
        assert_eq!(host.advance(&mut inv, 1_000), StepKind::Audit);
        inv.answer(Answer::Audited).unwrap();
        assert_eq!(host.advance(&mut inv, 1_019), StepKind::RunHandler);
        // The `started` subscriber blocked 60 ms: TIMEOUT, no handler step.
        let mut inv = start(1_000);
        assert_eq!(host.advance(&mut inv, 1_000), StepKind::Audit);
        inv.answer(Answer::Audited).unwrap();
        assert_eq!(
            host.advance(&mut inv, 1_060),
            StepKind::Audit,
            "the finished record"
        );
        inv.answer(Answer::Audited).unwrap();
        assert_eq!(host.advance(&mut inv, 1_060), StepKind::Done);
        match inv.take_outcome() {
            Some(crate::pipeline::Outcome::Error(e)) => assert_eq!(e.code, ErrorCode::Timeout),
            other => panic!("expected TIMEOUT, got {other:?}"),
        }
        // A host that passes no clock (0) is never timed out here.
        let mut inv = start(1_000);
        host.advance(&mut inv, 0);
        inv.answer(Answer::Audited).unwrap();
        assert_eq!(host.advance(&mut inv, 0), StepKind::RunHandler);
    }

    /// The memory store, declared as one that waits (like PostgreSQL).
    struct Waiting(MemoryApprovalStore);

    impl ApprovalStore for Waiting {
        fn create<'a>(
            &'a self,
            r: &'a ApprovalRequest,
        ) -> crate::approval::BoxFuture<'a, Result<(), crate::approval::StoreError>> {
            self.0.create(r)
        }
        fn get<'a>(
            &'a self,
            id: &'a str,
        ) -> crate::approval::BoxFuture<
            'a,
            Result<Option<ApprovalRequest>, crate::approval::StoreError>,
        > {
            self.0.get(id)
        }
        fn list<'a>(
            &'a self,
            f: &'a ListFilter,
        ) -> crate::approval::BoxFuture<'a, Result<Vec<ApprovalRequest>, crate::approval::StoreError>>
        {
            self.0.list(f)
        }
        fn decide<'a>(
            &'a self,
            id: &'a str,
            d: ApprovalDecision,
            approver: Option<&'a str>,
            reason: Option<&'a str>,
            now_ms: u64,
            must_differ: bool,
        ) -> crate::approval::BoxFuture<'a, Result<ApprovalRequest, crate::approval::StoreError>>
        {
            self.0.decide(id, d, approver, reason, now_ms, must_differ)
        }
        fn consume<'a>(
            &'a self,
            id: &'a str,
            now_ms: u64,
        ) -> crate::approval::BoxFuture<
            'a,
            Result<
                Result<ApprovalRequest, crate::approval::ConsumeRefusal>,
                crate::approval::StoreError,
            >,
        > {
            self.0.consume(id, now_ms)
        }
        fn waits(&self) -> bool {
            true
        }
    }

    #[test]
    fn a_waiting_store_is_never_polled_synchronously() {
        let host = BindingRegistry::build(
            &json!([{"id": "orders.cancel", "meta": {
                "description": "Cancel.", "expose": {"direct": true}, "sideEffect": "destructive",
                "risk": "medium", "approval": {"required": true}}, "validateInput": false}]),
            &json!({}),
            Arc::new(Waiting(MemoryApprovalStore::new())),
        )
        .unwrap();
        let mut inv = Invocation::start(
            Arc::clone(host.registry()),
            "orders.cancel",
            crate::pipeline::Payload::Json(json!({"order": 1})),
            crate::Frame::new(crate::Surface::Direct),
            crate::pipeline::InvokeOptions::at(1_000),
        );
        // The memory store would finish on the first poll: `advance` still
        // hands the step back because the store says it waits.
        assert_eq!(host.advance(&mut inv, 1_000), StepKind::PersistApproval);
        assert!(host.approvals(&ListFilter::default()).is_err());
        let answer = run_ready(host.store_op(&inv, 1_000).unwrap().run()).unwrap();
        inv.answer(answer).unwrap();
        assert_eq!(host.advance(&mut inv, 1_000), StepKind::Done);
        assert_eq!(
            host.approval("apr_x").unwrap_err().code,
            ErrorCode::Internal
        );
        assert_eq!(
            run_ready(host.store().list(&ListFilter::default()))
                .unwrap()
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn run_ready_reports_waiting_futures() {
        assert_eq!(run_ready(async { 3 }), Some(3));
        assert_eq!(run_ready(std::future::pending::<()>()), None);
    }

    #[test]
    fn build_and_store_steps_run_synchronously() {
        let store = StoreConfig::Memory.open_sync().unwrap();
        let decls = json!([{"id": "orders.cancel", "meta": {
            "description": "Cancel.", "expose": {"direct": true}, "sideEffect": "destructive",
            "risk": "medium", "approval": {"required": true}}, "validateInput": false}]);
        let host = BindingRegistry::build(&decls, &json!({}), store).unwrap();
        let mut inv = Invocation::start(
            Arc::clone(host.registry()),
            "orders.cancel",
            crate::pipeline::Payload::Json(json!({"order": 42})),
            crate::Frame::new(crate::Surface::Direct),
            crate::pipeline::InvokeOptions::at(1_000),
        );
        // The gate persisted the request without the host's help.
        assert_eq!(host.advance(&mut inv, 1_000), StepKind::Done);
        let Some(crate::pipeline::Outcome::ApprovalRequired(req)) = inv.take_outcome() else {
            panic!("expected an approval request")
        };
        assert_eq!(host.approval(&req.id).unwrap().unwrap().id, req.id);
        let page = host
            .approvals(&list_filter_from_json(&json!({"status": "pending"}), 1_000).unwrap())
            .unwrap();
        assert_eq!(page.len(), 1);
        let decided = host
            .decide(
                &req.id,
                ApprovalDecision::Approve,
                Some("boss"),
                None,
                2_000,
            )
            .unwrap();
        assert_eq!(decided.status, ApprovalStatus::Approved);
        let bad = BindingRegistry::build(
            &json!([{"id": "a", "meta": {}}]),
            &json!({}),
            StoreConfig::Memory.open_sync().unwrap(),
        );
        match bad {
            Err(BuildError::Invalid(e)) => {
                assert_eq!(
                    registry_error_json(&e)["problems"]
                        .as_array()
                        .unwrap()
                        .len(),
                    4
                )
            }
            _ => panic!("expected the aggregate error"),
        }
    }

    #[test]
    fn declared_hooks_the_binding_does_not_hold_are_problems_with_the_rest() {
        let meta = json!({"description": "D.", "expose": {"mcp": true}, "sideEffect": "read",
            "risk": "low", "redact": {"output": true, "approvalInput": true},
            "retry": {"maxAttempts": 1, "retryOn": true},
            "policies": [{"host": true}, {"host": true, "name": "held"}]});
        let decls = json!([
            {"id": "a", "meta": meta, "hostHooks": {"redactApprovalInput": true, "policies": [1]}},
            {"id": "b", "meta": meta},
            {"id": "c", "meta": {"description": ""}, "hostHooks": {}},
        ]);
        let options = json!({"policies": [{"host": true}, {"host": true}], "hostPolicies": [1]});
        let Err(BuildError::Invalid(e)) =
            BindingRegistry::build(&decls, &options, StoreConfig::Memory.open_sync().unwrap())
        else {
            panic!("expected the aggregate error");
        };
        let mut got: Vec<String> = e
            .problems
            .iter()
            .filter(|p| {
                p.code == crate::meta::ProblemCode::MissingHook
                    || p.capability.as_deref() == Some("c")
            })
            .map(|p| {
                format!(
                    "{}:{}:{}",
                    p.capability.as_deref().unwrap_or("-"),
                    p.path,
                    p.code.as_str()
                )
            })
            .collect();
        got.sort();
        // `b` says nothing of its hooks (a declaration file): no problem.
        // `c`'s other problems are reported in the same error.
        assert_eq!(
            got,
            [
                "-:policies[0]:MISSING_HOOK",
                "a:policies[0]:MISSING_HOOK",
                "a:redact.output:MISSING_HOOK",
                "a:retry.retryOn:MISSING_HOOK",
                "c:description:MISSING_FIELD",
                "c:expose:MISSING_FIELD",
                "c:risk:MISSING_FIELD",
                "c:sideEffect:MISSING_FIELD",
            ]
        );
        let bad = BindingRegistry::build(
            &json!([{"id": "a", "meta": meta, "hostHooks": {"retryOn": "yes"}}]),
            &json!({}),
            StoreConfig::Memory.open_sync().unwrap(),
        );
        assert!(matches!(bad, Err(BuildError::Setup(_))));
    }

    /// A repeated MCP call finds its request (issue 18): the same call
    /// again while pending gets the same request; once approved, the same
    /// call runs it — once — with no `_meta`; then the same call is a new
    /// request. On `direct` every call is a new request. On memory and
    /// SQLite, through `advance`.
    #[test]
    fn a_repeated_mcp_call_runs_its_approved_request_once() {
        let dir = std::env::temp_dir().join(format!("orpc-repeat-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        for store in [StoreConfig::Memory, StoreConfig::Sqlite(dir.join("r.db"))] {
            let _ = std::fs::remove_file(dir.join("r.db"));
            let host = BindingRegistry::build(
                &json!([{"id": "orders.cancel", "meta": {
                    "description": "Cancel.", "expose": {"mcp": true, "direct": true},
                    "sideEffect": "destructive", "risk": "medium",
                    "approval": {"required": true}}, "validateInput": false}]),
                &json!({}),
                store.open_sync().unwrap(),
            )
            .unwrap();
            // Runs one call to its end; the outcome, and whether the
            // handler ran (it answers ok at once).
            let call = |surface, order: u64| {
                let frame = crate::Frame::new(surface).with_actor(crate::Actor {
                    id: Some("alice".into()),
                    ..crate::Actor::default()
                });
                let mut inv = Invocation::start(
                    Arc::clone(host.registry()),
                    "orders.cancel",
                    crate::pipeline::Payload::Json(json!({"order": order})),
                    frame,
                    crate::pipeline::InvokeOptions::at(1_000),
                );
                let mut ran = 0;
                while inv.step_kind() != StepKind::Done {
                    let a = match inv.step() {
                        Step::ExportInput => Answer::InputExported(json!({"order": order})),
                        Step::RunHandler { .. } => {
                            ran += 1;
                            Answer::HandlerOk {
                                output: crate::pipeline::Payload::Json(json!("cancelled")),
                                now_ms: 1_002,
                            }
                        }
                        Step::ExportOutput => Answer::OutputExported(json!("cancelled")),
                        _ => {
                            host.advance(&mut inv, 1_002);
                            continue;
                        }
                    };
                    inv.answer(a).unwrap();
                }
                (inv.take_outcome().unwrap(), ran)
            };
            let pending_id = |o: &crate::pipeline::Outcome| match o {
                crate::pipeline::Outcome::ApprovalRequired(r) => r.id.clone(),
                other => panic!("expected an approval request, got {other:?}"),
            };
            let (first, _) = call(crate::Surface::Mcp, 1);
            let id = pending_id(&first);
            let (again, ran) = call(crate::Surface::Mcp, 1);
            assert_eq!(pending_id(&again), id, "the same pending request");
            assert_eq!(ran, 0);
            let (other, _) = call(crate::Surface::Mcp, 2);
            assert_ne!(pending_id(&other), id, "other arguments: a new request");
            host.decide(&id, ApprovalDecision::Approve, Some("bob"), None, 1_001)
                .unwrap();
            let (done, ran) = call(crate::Surface::Mcp, 1);
            assert!(matches!(done, crate::pipeline::Outcome::Ok(_)), "{done:?}");
            assert_eq!(ran, 1, "the approved request ran once");
            assert_eq!(
                host.approval(&id).unwrap().unwrap().status,
                crate::approval::ApprovalStatus::Consumed
            );
            let (after, ran) = call(crate::Surface::Mcp, 1);
            assert_ne!(pending_id(&after), id, "consumed: a new request");
            assert_eq!(ran, 0);
            // Direct callers name the request they resume: no repeats.
            let (d1, _) = call(crate::Surface::Direct, 9);
            let (d2, _) = call(crate::Surface::Direct, 9);
            assert_ne!(pending_id(&d1), pending_id(&d2));
        }
    }
}
