//! [`Invocation`]: the state machine that runs stages 1–14.
//!
//! Internally the machine alternates between running native stages (resolve,
//! exposure, declarative policies, the gate, deadlines, retry decisions)
//! until it needs the host, and parking in a [`State`] that is the step the
//! host must answer. Data a step shows lives inside its state, so a step can
//! never refer to something missing.

use std::sync::Arc;

use serde_json::Value;

use super::audit::{AuditEvent, AuditRecord, PolicyRecord};
use super::gate::{ApprovalDraft, approval_request_for, not_found, verify_grant};
use super::policies::{self, PolicyScope};
use super::redaction::RedactionInfo;
use super::retry;
use super::stage::Stage;
use super::step::{Answer, Decision, Step, StepKind};
use super::trace::freeze_trace;

/// The outcome of a call its host abandoned ([`Invocation::abandon`]).
pub const ABANDONED_MESSAGE: &str = "The call could not be completed.";

/// The caller's cancellation, at whichever step it arrived.
fn cancelled_error() -> CapabilityError {
    CapabilityError::new(
        ErrorCode::Cancelled,
        "The call was cancelled by the caller.",
    )
}

/// EXECUTION_FAILED's message when a binding cannot give a resumed handler
/// the approved input ([`Answer::StoredInputUnusable`]).
pub const STORED_INPUT_UNUSABLE_MESSAGE: &str =
    "The approved input could not be given to the capability's handler; it did not run.";
use super::{InvokeOptions, Outcome, Payload};
use crate::approval::{ApprovalRequest, ApprovalStatus};
use crate::error::{CapabilityError, ErrorCode};
use crate::frame::{Actor, Frame};
use crate::policy::{CedarCall, MatchContext, PolicyMode, PolicyRule, PolicySpec};
use crate::registry::{Capability, CapabilityRegistry};
use crate::vocab::Surface;

static NULL: Value = Value::Null;

/// What `step()` shows after the outcome was taken or while an answer is
/// being applied (never observable: `answer` always sets a state).
static NO_OUTCOME: Outcome = Outcome::Error(CapabilityError {
    code: ErrorCode::Internal,
    message: String::new(),
    retryable: false,
    details: None,
});

/// Where to continue once the host exported the input.
#[derive(Clone, Copy, Debug)]
enum AfterExport {
    Policies { scope: PolicyScope, index: u32 },
    Gate,
}

/// What follows an audit record's delivery.
#[derive(Debug)]
enum AfterAudit {
    Execute,
    Finish(Outcome),
}

/// The step the host must answer, with the data it shows.
#[derive(Debug)]
enum State {
    ValidateInput,
    EvaluatePolicy {
        scope: PolicyScope,
        index: u32,
    },
    ExportInput(AfterExport),
    PersistApproval(Box<ApprovalRequest>),
    ConsumeApproval,
    RunHandler,
    AskRetryOn(CapabilityError),
    Sleep {
        ms: u64,
    },
    ValidateOutput(Payload),
    RedactOutput(Payload),
    ExportOutput(Payload),
    Audit {
        record: Box<AuditRecord>,
        then: AfterAudit,
    },
    Done(Outcome),
    /// Between taking the old state and setting the new one in `answer`,
    /// and after `take_outcome`.
    Vacant,
}

impl State {
    fn kind(&self) -> StepKind {
        match self {
            State::ValidateInput => StepKind::ValidateInput,
            State::EvaluatePolicy { .. } => StepKind::EvaluatePolicy,
            State::ExportInput(_) => StepKind::ExportInput,
            State::PersistApproval(_) => StepKind::PersistApproval,
            State::ConsumeApproval => StepKind::ConsumeApproval,
            State::RunHandler => StepKind::RunHandler,
            State::AskRetryOn(_) => StepKind::AskRetryOn,
            State::Sleep { .. } => StepKind::Sleep,
            State::ValidateOutput(_) => StepKind::ValidateOutput,
            State::RedactOutput(_) => StepKind::RedactOutput,
            State::ExportOutput(_) => StepKind::ExportOutput,
            State::Audit { .. } => StepKind::Audit,
            State::Done(_) | State::Vacant => StepKind::Done,
        }
    }
}

/// Whether policy evaluation goes on after one decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    Continue,
    Stop,
}

/// One governed invocation. See the [module docs](super) for the host loop.
///
/// Fields most calls never set (a requester limit, a limits failure, an
/// approval draft) are boxed: the invocation is moved between the core and
/// a binding's glue on every call, and its size is what each move copies.
#[derive(Debug)]
pub struct Invocation {
    registry: Arc<CapabilityRegistry>,
    capability: Option<u32>,
    /// The name asked for, kept only for the audit record.
    requested: Option<String>,
    /// Frozen at construction: no `&mut` access leaves this type. On resume,
    /// surface and actor are replaced by the recorded ones (SI-3). Shared:
    /// a host that keeps its frame (Python's `Frame`) hands the same one to
    /// every call without copying it; a change copies it first.
    frame: Arc<Frame>,
    opts: InvokeOptions,
    /// The latest host clock reading.
    now_ms: u64,
    resume_id: Option<String>,
    /// A resume limited to the requester ([`Self::resume_by_requester`]).
    requester: Option<Box<crate::approval::Requester>>,
    /// The host's input-limits verdict on a raw input it holds
    /// ([`Self::start_measured`]), applied when stage 4 begins.
    host_limits: Option<Result<(), Box<CapabilityError>>>,
    /// A frame field past its limit ([`Frame::refuse_oversized`]): the
    /// call ends with it at stage 3 (after exposure, SI-8).
    frame_refusal: Option<Box<CapabilityError>>,
    /// The input as the host gave it, replaced by the validated one.
    input: Payload,
    /// The validated input as JSON, when the host exported it.
    input_json: Option<Value>,
    /// The input limits were checked on a JSON form of the input.
    input_checked: bool,
    /// The caller was cancelled before the call started
    /// ([`Self::caller_cancelled`]): nothing is stored, consumed or run.
    caller_cancelled: bool,
    input_hash: Option<String>,
    policy_records: Vec<PolicyRecord>,
    draft: Option<Box<ApprovalDraft>>,
    approval_id: Option<String>,
    attempts: u32,
    deadline_at_ms: u64,
    output_json: Option<Value>,
    /// A handler's plain-error text, for the operator's audit record only.
    failure: Option<String>,
    stage: Stage,
    state: State,
}

/// The INVALID_INPUT a refusing stage-4 answer stands for, in the core's
/// words: the validator's own message, the host's issues written out, or
/// the generic text for a validator that threw.
fn input_refusal(answer: Answer) -> CapabilityError {
    let message = match answer {
        Answer::InputInvalid(message) => message,
        Answer::InputIssues(issues) => super::issues::invalid_input_message(&issues),
        _ => super::issues::VALIDATOR_FAILED.to_owned(),
    };
    CapabilityError::new(ErrorCode::InvalidInput, message)
}

/// Stage 3's rules for a caller's frame, before anything reads it (every
/// record, a resume's requester): the trace validated, and an empty id no
/// id. Idempotent; a frame that needs neither is not copied.
fn stage3(mut frame: Arc<Frame>) -> Arc<Frame> {
    if frame.trace.is_some() {
        let f = Arc::make_mut(&mut frame);
        f.trace = freeze_trace(f.trace.take());
    }
    if frame.has_empty_ids() {
        Arc::make_mut(&mut frame).drop_empty_ids();
    }
    frame
}

impl Invocation {
    fn blank(
        registry: Arc<CapabilityRegistry>,
        mut frame: Arc<Frame>,
        input: Payload,
        opts: InvokeOptions,
        stage: Stage,
    ) -> Invocation {
        // Stage 3's rules apply to every record, even early failures.
        frame = stage3(frame);
        let oversized = frame.oversized_fields();
        let frame_refusal = (!oversized.is_empty())
            .then(|| Box::new(Arc::make_mut(&mut frame).refuse_oversized(&oversized)));
        Invocation {
            registry,
            capability: None,
            requested: None,
            frame,
            opts,
            now_ms: opts.now_ms,
            resume_id: None,
            requester: None,
            host_limits: None,
            frame_refusal,
            input,
            input_json: None,
            input_checked: false,
            caller_cancelled: false,
            input_hash: None,
            policy_records: Vec::new(),
            draft: None,
            approval_id: None,
            attempts: 0,
            deadline_at_ms: 0,
            output_json: None,
            failure: None,
            stage,
            state: State::Vacant,
        }
    }

    /// Like [`Self::start`] for a capability the host already resolved to
    /// its registry index (bindings resolve ids to integers once). An index
    /// the registry does not have is NOT_FOUND, like an unknown name.
    pub fn start_index(
        registry: Arc<CapabilityRegistry>,
        capability_index: u32,
        input: Payload,
        frame: impl Into<Arc<Frame>>,
        opts: InvokeOptions,
    ) -> Invocation {
        Invocation::started_at_index(registry, capability_index, input, None, frame.into(), opts)
    }

    /// [`Self::start_index`] for a raw input the host holds and measured
    /// itself against the input limits before the start — walking its own
    /// values through [`crate::limits::Meter`], or with
    /// [`crate::limits::check_serialized`] on its JSON text. An over-limit
    /// verdict ends the invocation when stage 4 begins, with the limit's
    /// error, audited, before any validator, policy, store or handler sees
    /// the input; exposure still comes first (SI-8). `None`: the host has
    /// no measure (a value with no JSON form, which only in-process code
    /// can hand over) — the pipeline then checks the first JSON form it
    /// is given, as for [`Self::start_index`].
    pub fn start_index_measured(
        registry: Arc<CapabilityRegistry>,
        capability_index: u32,
        frame: impl Into<Arc<Frame>>,
        opts: InvokeOptions,
        limits: Option<Result<(), CapabilityError>>,
    ) -> Invocation {
        Invocation::started_at_index(
            registry,
            capability_index,
            Payload::Host,
            limits,
            frame.into(),
            opts,
        )
    }

    fn started_at_index(
        registry: Arc<CapabilityRegistry>,
        capability_index: u32,
        input: Payload,
        host_limits: Option<Result<(), CapabilityError>>,
        frame: Arc<Frame>,
        opts: InvokeOptions,
    ) -> Invocation {
        let mut inv = Invocation::blank(registry, frame, input, opts, Stage::Resolve);
        inv.host_limits = host_limits.map(|r| r.map_err(Box::new));
        let Some(cap) = inv.registry.get(capability_index) else {
            inv.fail(not_found(""));
            return inv;
        };
        if opts.audit {
            inv.requested = Some(cap.id.clone());
        }
        inv.capability = Some(cap.index);
        inv.stage = Stage::Exposure;
        if !cap.exposed_on(inv.frame.surface) {
            inv.fail(not_found(""));
            return inv;
        }
        inv.stage = Stage::FreezeFrame;
        if inv.refused_frame() {
            return inv;
        }
        inv.enter_input_validation();
        inv
    }

    /// Stage 3's refusal of a frame field past its limit, if any: the
    /// invocation ends with it; `true` then.
    fn refused_frame(&mut self) -> bool {
        let Some(e) = self.frame_refusal.take() else {
            return false;
        };
        self.stage = Stage::FreezeFrame;
        self.fail(*e);
        true
    }

    /// Input limits ([`crate::limits`]) on a JSON input, checked once:
    /// before stage 4 for a JSON input, else on the first JSON form the
    /// host hands over (validated or exported input).
    fn check_limits(&self, input: &Value) -> Result<(), CapabilityError> {
        if self.input_checked {
            return Ok(());
        }
        crate::limits::check(input)
    }

    /// Records a limits verdict; `false` when the invocation failed with
    /// LIMIT_EXCEEDED (audited at stage 4, before any hook saw the input).
    fn limits_passed(&mut self, verdict: Result<(), CapabilityError>) -> bool {
        self.input_checked = true;
        match verdict {
            Ok(()) => true,
            Err(e) => {
                self.stage = Stage::ValidateInput;
                self.fail(e);
                false
            }
        }
    }

    /// Starts an invocation of `id_or_tool_name` (a capability id or any of
    /// its adapter tool names) with the raw `input` and the authenticated
    /// `frame`. Stages 1–3 run at once; read [`Self::step`] next.
    pub fn start(
        registry: Arc<CapabilityRegistry>,
        id_or_tool_name: &str,
        input: Payload,
        frame: impl Into<Arc<Frame>>,
        opts: InvokeOptions,
    ) -> Invocation {
        Invocation::started(registry, id_or_tool_name, input, None, frame.into(), opts)
    }

    /// [`Self::start`] for a raw input the host holds and measured itself
    /// (see [`Self::start_index_measured`]).
    pub fn start_measured(
        registry: Arc<CapabilityRegistry>,
        id_or_tool_name: &str,
        frame: impl Into<Arc<Frame>>,
        opts: InvokeOptions,
        limits: Option<Result<(), CapabilityError>>,
    ) -> Invocation {
        Invocation::started(
            registry,
            id_or_tool_name,
            Payload::Host,
            limits,
            frame.into(),
            opts,
        )
    }

    fn started(
        registry: Arc<CapabilityRegistry>,
        id_or_tool_name: &str,
        input: Payload,
        host_limits: Option<Result<(), CapabilityError>>,
        frame: Arc<Frame>,
        opts: InvokeOptions,
    ) -> Invocation {
        let mut inv = Invocation::blank(registry, frame, input, opts, Stage::Resolve);
        inv.host_limits = host_limits.map(|r| r.map_err(Box::new));
        if opts.audit {
            inv.requested = Some(requested_for_audit(id_or_tool_name));
        }
        // Stage 1.
        let Some(cap) = inv.registry.resolve(id_or_tool_name) else {
            inv.fail(not_found(id_or_tool_name));
            return inv;
        };
        inv.capability = Some(cap.index);
        // Stage 2: unexposed fails exactly like missing (SI-1, SI-8).
        inv.stage = Stage::Exposure;
        if !cap.exposed_on(inv.frame.surface) {
            inv.fail(not_found(id_or_tool_name));
            return inv;
        }
        // Stage 3: the frame is owned and never handed out mutably.
        inv.stage = Stage::FreezeFrame;
        if inv.refused_frame() {
            return inv;
        }
        inv.enter_input_validation();
        inv
    }

    /// Resumes an approved request: stage 7 (consume atomically, verify),
    /// then stages 9–14 with the surface and actor recorded in the request
    /// (SI-3). `frame` contributes only its trace, request, agent and
    /// session ids; its surface and actor are ignored — never checked,
    /// never recorded: the caller is the app itself (an approval UI); Node's
    /// trusted resume takes no actor at all. A
    /// record made before the consume (the request not found, the caller
    /// cancelled) shows surface `direct` and no actor, in every language.
    pub fn resume(
        registry: Arc<CapabilityRegistry>,
        approval_id: &str,
        frame: impl Into<Arc<Frame>>,
        opts: InvokeOptions,
    ) -> Invocation {
        let mut frame: Arc<Frame> = frame.into();
        if frame.surface != Surface::Direct || frame.actor != Actor::default() {
            let f = Arc::make_mut(&mut frame);
            f.surface = Surface::Direct;
            f.actor = Actor::default();
        }
        Invocation::resume_unlimited(registry, approval_id, frame, opts)
    }

    /// [`Self::resume`] with the frame as given: the limited resumes
    /// below check and record the caller's surface and actor.
    fn resume_unlimited(
        registry: Arc<CapabilityRegistry>,
        approval_id: &str,
        frame: Arc<Frame>,
        opts: InvokeOptions,
    ) -> Invocation {
        let mut inv = Invocation::blank(registry, frame, Payload::Host, opts, Stage::GrantCheck);
        // An id no store can hold (not `apr_` + 32 hex digits: a client's,
        // of any length) is not found, exactly as a missing one, before any
        // store is asked; it is not recorded either.
        let possible = crate::approval::is_valid_approval_id(approval_id);
        if possible {
            inv.resume_id = Some(approval_id.to_owned());
            inv.approval_id = Some(approval_id.to_owned());
        }
        // A frame past its limits consumes nothing.
        if !inv.refused_frame() {
            if possible {
                inv.state = State::ConsumeApproval;
            } else {
                inv.fail(crate::approval::ConsumeRefusal::NotFound.into());
            }
        }
        inv
    }

    /// [`Self::resume`] for a caller that may resume only its own
    /// requests (a remote client of the agent gateway): the frame's actor
    /// must have made the request, on the frame's surface; any other
    /// request — or a frame without an actor id — is APPROVAL_NOT_FOUND,
    /// exactly as a missing one, and is not consumed; its audit record
    /// shows the caller's surface and actor. The requester's own request
    /// refused (pending, expired…) is audited as recorded. A frame past
    /// its limits is refused first (stage 3), before any of this.
    pub fn resume_by_requester(
        registry: Arc<CapabilityRegistry>,
        approval_id: &str,
        frame: impl Into<Arc<Frame>>,
        opts: InvokeOptions,
    ) -> Invocation {
        // The requester is read from the frame as stage 3 leaves it.
        let frame = stage3(frame.into());
        let requester = crate::approval::Requester::of(frame.surface, frame.actor.id.as_deref());
        Invocation::resume_as(registry, approval_id, frame, opts, requester)
    }

    /// [`Self::resume`] through one capability's tool (MCP: the client
    /// calls the tool again with the request id): the request must be for
    /// `capability_index`'s capability and made on the frame's surface by
    /// the frame's actor id — or, when the frame's actor has no id, by an
    /// identical actor without one in the same session
    /// ([`crate::approval::Requester::for_tool`]). Any other request is
    /// APPROVAL_NOT_FOUND, exactly as a missing one, and is not consumed: a
    /// caller cannot run another actor's request, or a request for a
    /// capability that is not exposed to it, by naming its id.
    pub fn resume_through_tool(
        registry: Arc<CapabilityRegistry>,
        approval_id: &str,
        capability_index: u32,
        frame: impl Into<Arc<Frame>>,
        opts: InvokeOptions,
    ) -> Invocation {
        let frame = stage3(frame.into());
        let capability_id = registry.get(capability_index).map(|c| c.id.clone());
        let requester = capability_id.as_deref().map(|id| {
            crate::approval::Requester::for_tool(
                frame.surface,
                &frame.actor,
                frame.session_id.as_deref(),
                id,
            )
        });
        Invocation::resume_as(registry, approval_id, frame, opts, requester)
    }

    /// A resume limited to `requester`; without one (the caller cannot be
    /// a requester) it is APPROVAL_NOT_FOUND before any store is asked.
    fn resume_as(
        registry: Arc<CapabilityRegistry>,
        approval_id: &str,
        frame: Arc<Frame>,
        opts: InvokeOptions,
        requester: Option<crate::approval::Requester>,
    ) -> Invocation {
        let mut inv = Invocation::resume_unlimited(registry, approval_id, frame, opts);
        match requester {
            Some(r) => inv.requester = Some(Box::new(r)),
            // Ended already (a frame past its limits): that is its answer.
            None if !matches!(inv.state, State::ConsumeApproval) => {}
            None => inv.fail(CapabilityError::new(
                ErrorCode::ApprovalNotFound,
                "No approval request with this id is yours to resume.",
            )),
        }
        inv
    }

    // ----- what the host reads ------------------------------------------

    /// What the host must do next.
    pub fn step(&self) -> Step<'_> {
        match &self.state {
            State::ValidateInput => Step::ValidateInput { input: &self.input },
            State::EvaluatePolicy { scope, index } => Step::EvaluatePolicy {
                scope: *scope,
                index: *index,
                timeout_ms: self.policy_timeout_ms(),
                input: &self.input,
            },
            State::ExportInput(_) => Step::ExportInput,
            State::PersistApproval(r) => Step::PersistApproval(r),
            State::ConsumeApproval => Step::ConsumeApproval {
                id: self.resume_id.as_deref().unwrap_or(""),
                requester: self.requester.as_deref(),
            },
            State::RunHandler => Step::RunHandler {
                attempt: self.attempts,
                deadline_at_ms: self.deadline_at_ms,
                input: &self.input,
            },
            State::AskRetryOn(e) => Step::AskRetryOn { error: e },
            State::Sleep { ms } => Step::Sleep { ms: *ms },
            State::ValidateOutput(p) => Step::ValidateOutput { output: p },
            State::RedactOutput(p) => Step::RedactOutput {
                output: p,
                info: self.redaction_info(),
            },
            State::ExportOutput(_) => Step::ExportOutput,
            State::Audit { record, .. } => Step::Audit(record),
            State::Done(o) => Step::Done(o),
            State::Vacant => Step::Done(&NO_OUTCOME),
        }
    }

    /// The current step's kind as a small integer (FFI hot path).
    pub fn step_kind(&self) -> StepKind {
        self.state.kind()
    }

    /// `RunHandler`: the attempt number (1-based); otherwise attempts made.
    pub fn attempt(&self) -> u32 {
        self.attempts
    }

    /// The deadline (unix ms), once stage 9 ran; 0 before.
    pub fn deadline_at_ms(&self) -> u64 {
        self.deadline_at_ms
    }

    /// The time every host hook of this call is bounded by: the call's
    /// start plus the capability's `timeoutMs` — the same instant stage 9
    /// makes the handler's deadline. A validator, output validator or
    /// redactor still running then is answered [`Answer::DeadlinePassed`].
    /// 0 before the capability is resolved.
    pub fn call_deadline_ms(&self) -> u64 {
        self.capability()
            .map_or(0, |c| self.opts.now_ms.saturating_add(c.timeout_ms))
    }

    /// Tells the machine the time just before the host would act on the
    /// current step. A handler is never started at or past its deadline
    /// (a slow audit subscriber, validator or policy spent it): the attempt
    /// ends in TIMEOUT here, so no binding runs a write after its deadline
    /// (SI-9). Every driver calls this before it starts a handler; a
    /// `now_ms` of 0 (a host that did not read its clock) changes nothing.
    pub fn at(&mut self, now_ms: u64) {
        if matches!(self.state, State::RunHandler) && now_ms != 0 && now_ms >= self.deadline_at_ms {
            self.clock(now_ms);
            // This attempt's handler never starts; an earlier one may have.
            let e = self.timeout_after(self.attempts > 1);
            self.fail(e);
        }
    }

    /// The caller was cancelled before the call started (an aborted signal,
    /// a cancelled task), told right after the start and before the first
    /// step is performed. The call ends CANCELLED (audited) at its first
    /// step that waits on the caller — at once when it is at one now —
    /// and never stores a request, consumes an approval (a repeated MCP
    /// call that finds its approved request) or starts a handler: a
    /// consumed approval whose action never ran is the one outcome a
    /// repeat must not have, as for a resume ([`super::ResumeLimit::resume`]).
    pub fn caller_cancelled(&mut self, now_ms: u64) {
        self.caller_cancelled = true;
        if matches!(
            self.state,
            State::ValidateInput
                | State::EvaluatePolicy { .. }
                | State::PersistApproval(_)
                | State::ConsumeApproval
                | State::RunHandler
        ) {
            self.clock(now_ms);
            self.fail(cancelled_error());
        }
    }

    /// `Sleep`: how long; otherwise 0.
    pub fn sleep_ms(&self) -> u64 {
        match self.state {
            State::Sleep { ms } => ms,
            _ => 0,
        }
    }

    /// `EvaluatePolicy`: which list and position.
    pub fn policy_at(&self) -> Option<(PolicyScope, u32)> {
        match self.state {
            State::EvaluatePolicy { scope, index } => Some((scope, index)),
            _ => None,
        }
    }

    /// The resolved capability (after stage 1, or after stage 7 on resume).
    pub fn capability(&self) -> Option<&Capability> {
        self.capability.and_then(|i| self.registry.get(i))
    }

    /// The frozen frame: read-only (SI-2, SI-3).
    pub fn frame(&self) -> &Frame {
        &self.frame
    }

    /// The stage reached.
    pub fn stage(&self) -> Stage {
        self.stage
    }

    /// The approval input hash, once computed.
    pub fn input_hash(&self) -> Option<&str> {
        self.input_hash.as_deref()
    }

    /// The approval id created (stage 8) or consumed (stage 7).
    pub fn approval_id(&self) -> Option<&str> {
        self.approval_id.as_deref()
    }

    /// True once the step is `Done`.
    pub fn is_done(&self) -> bool {
        matches!(self.state, State::Done(_) | State::Vacant)
    }

    /// The outcome, once done; `None` before, and after it was taken.
    pub fn take_outcome(&mut self) -> Option<Outcome> {
        match std::mem::replace(&mut self.state, State::Vacant) {
            State::Done(o) => Some(o),
            other => {
                self.state = other;
                None
            }
        }
    }

    /// What a redactor is told: surface, capability id, actor (DESIGN §6).
    pub fn redaction_info(&self) -> RedactionInfo<'_> {
        RedactionInfo {
            surface: self.frame.surface,
            capability_id: self.capability().map_or("", |c| c.id.as_str()),
            actor: &self.frame.actor,
        }
    }

    /// `EvaluatePolicy`: how long the host policy may run. It gets the
    /// capability's timeout; running past it fails the policy, which denies.
    pub fn policy_timeout_ms(&self) -> u64 {
        self.capability().map_or(0, |c| c.timeout_ms)
    }

    // ----- answers ------------------------------------------------------

    /// Feeds the host's answer to the current step. An answer that does not
    /// fit the step ends the invocation with INTERNAL (and returns it).
    pub fn answer(&mut self, answer: Answer) -> Result<(), CapabilityError> {
        // A finished invocation keeps its outcome: a stray answer must not
        // turn an `Ok` whose handler already ran into an error a caller
        // would retry (the write would run twice), nor make a taken
        // outcome appear again.
        if self.is_done() {
            return Err(CapabilityError::new(
                ErrorCode::Internal,
                format!(
                    "host answered {} after the invocation finished",
                    answer.name()
                ),
            ));
        }
        let state = std::mem::replace(&mut self.state, State::Vacant);
        match (state, answer) {
            (State::ValidateInput, Answer::InputValid(p)) => {
                if let Payload::Json(v) = &p {
                    let verdict = self.check_limits(v);
                    if !self.limits_passed(verdict) {
                        return Ok(());
                    }
                }
                // The raw input is gone: everything after sees only the
                // validated one (SI-5).
                self.input = p;
                self.input_json = None;
                self.enter_policies();
            }
            // A hook the host waited for did not answer by the call's
            // deadline: the call is TIMEOUT, fail closed (the input is not
            // validated, the output not validated or redacted: nothing of
            // it leaves).
            (
                State::ValidateInput | State::ValidateOutput(_) | State::RedactOutput(_),
                Answer::DeadlinePassed { now_ms },
            ) => {
                self.clock(now_ms);
                let e = self.timeout_error();
                self.fail(e);
            }
            (
                State::ValidateInput,
                refused @ (Answer::InputInvalid(_)
                | Answer::InputIssues(_)
                | Answer::InputValidatorFailed),
            ) => {
                self.fail(input_refusal(refused));
            }
            (State::EvaluatePolicy { scope, index }, Answer::PolicyDecision(d)) => {
                // A host's requireApproval must give an expiry metadata
                // could declare (1 ms … one year); anything else (0, a
                // negative or NaN made 0, 1e308 made u64::MAX) is a failed
                // policy, fail closed, never a request born expired or one
                // that never expires (issue 15).
                let expiry_ok = match &d {
                    Decision::RequireApproval {
                        expires_in_ms: Some(ms),
                        ..
                    } => (1..=crate::meta::limits::MAX_EXPIRES_IN_MS).contains(ms),
                    _ => true,
                };
                if expiry_ok {
                    self.host_policy_answered(scope, index, d, false);
                } else {
                    self.host_policy_answered(scope, index, Decision::Deny { reason: None }, true);
                }
            }
            (State::EvaluatePolicy { scope, index }, Answer::PolicyFailed(_)) => {
                self.host_policy_answered(scope, index, Decision::Deny { reason: None }, true);
            }
            (State::ExportInput(then), Answer::InputExported(v)) => {
                // Always measured, whatever the raw input's verdict was: the
                // validated value is what is hashed, stored and resumed, and
                // a validator may have made it larger (a host model holding
                // a 2 MiB string was stored as a 2 MiB approval input).
                let verdict = crate::limits::check(&v);
                if !self.limits_passed(verdict) {
                    return Ok(());
                }
                self.input_json = Some(v);
                match then {
                    AfterExport::Policies { scope, index } => self.run_policies(scope, index),
                    AfterExport::Gate => self.gate(),
                }
            }
            (State::ExportInput(then), Answer::InputNotExportable(msg)) => {
                // Said as what needed the input's JSON form: a policy that
                // reads it, or the approval gate that hashes it.
                let what = match then {
                    AfterExport::Policies { .. } => "judged by a policy",
                    AfterExport::Gate => "bound to an approval",
                };
                self.fail(CapabilityError::new(
                    ErrorCode::InvalidInput,
                    format!("The input cannot be {what}: {msg}"),
                ));
            }
            (State::PersistApproval(req), Answer::Persisted) => {
                self.finish(Outcome::ApprovalRequired(req));
            }
            (State::PersistApproval(req), Answer::RepeatedApproval(earlier)) => {
                self.repeated(&req, *earlier);
            }
            (State::PersistApproval(_), Answer::StoreFailed(e)) => self.fail(e),
            // The caller cancelled before the store step ran: nothing is
            // stored and, for a resume, nothing consumed — a consumed
            // approval whose action never ran is the one outcome a resume
            // must not have (issue 15).
            //
            // At every other step the host awaits (a validator, a host
            // policy, the handler, a backoff, a redactor) the call ends at
            // once too: one rule for every binding, where Swift answered a
            // cancelled validator INVALID_INPUT and Python left a
            // cancelled policy with no finished record (issue 14).
            (
                State::PersistApproval(_)
                | State::ConsumeApproval
                | State::ValidateInput
                | State::EvaluatePolicy { .. }
                | State::RunHandler
                | State::Sleep { .. }
                | State::ValidateOutput(_)
                | State::RedactOutput(_),
                Answer::Cancelled { now_ms },
            ) => {
                self.clock(now_ms);
                self.fail(cancelled_error());
            }
            (State::ConsumeApproval, Answer::Consumed(result)) => self.grant_checked(result),
            (State::ConsumeApproval, Answer::ConsumeRefused { error, request }) => {
                self.refused_as_recorded(*request, error)
            }
            // A result (or an error) that arrives at or after the deadline
            // is late: the deadline's TIMEOUT, decided here from the time
            // the answer carries, whatever the host's timer did (a blocked
            // event loop, a busy executor: SI-9).
            (
                State::RunHandler,
                Answer::HandlerError {
                    code: None,
                    message,
                    now_ms,
                    ..
                },
            ) if now_ms >= self.deadline_at_ms => {
                self.keep_failure_text(&message);
                self.clock(now_ms);
                let e = self.timeout_error();
                self.fail(e);
            }
            (State::RunHandler, Answer::HandlerOk { now_ms, .. })
            | (State::RunHandler, Answer::HandlerError { now_ms, .. })
                if now_ms >= self.deadline_at_ms =>
            {
                self.clock(now_ms);
                let e = self.timeout_error();
                self.fail(e);
            }
            (State::RunHandler, Answer::HandlerOk { output, now_ms }) => {
                self.clock(now_ms);
                self.enter_output_validation(output);
            }
            (
                State::RunHandler,
                Answer::HandlerError {
                    code,
                    message,
                    retryable,
                    details,
                    now_ms,
                },
            ) => {
                self.clock(now_ms);
                let error = match code {
                    // The handler's own error, as it was thrown: its
                    // details too, within `limits::ERROR_DETAILS`.
                    Some(code) => {
                        let e = CapabilityError::new(code, message).with_retryable(retryable);
                        match details.and_then(|d| crate::limits::error_details(*d)) {
                            Some(d) => e.with_details(d),
                            None => e,
                        }
                    }
                    // A plain throw: its message may quote data (SI-10),
                    // and nothing vouches that it is worth retrying, so a
                    // host's `retryable` is ignored (issue 14). For a plain
                    // throw the host sends the error's class, which only the
                    // operator's audit record keeps (issue 15).
                    None => {
                        self.keep_failure_text(&message);
                        CapabilityError::new(
                            ErrorCode::ExecutionFailed,
                            crate::error::FAILED_MESSAGE,
                        )
                    }
                };
                self.attempt_failed(error);
            }
            // A host that converts the caller's input to the handler's type
            // only as the handler starts (Swift, for a capability that
            // declares no validator, so stage 4 had nothing to run): a
            // conversion that fails refuses the input as stage 4 would —
            // INVALID_INPUT in the core's words, no handler started, not an
            // attempt. A resumed call's approved input has its own rule,
            // whichever way the host reports the failed conversion: the
            // host need not know which call it runs.
            (
                State::RunHandler,
                refused @ (Answer::InputInvalid(_)
                | Answer::InputIssues(_)
                | Answer::InputValidatorFailed),
            ) if self.resume_id.is_none() => {
                self.attempts = self.attempts.saturating_sub(1);
                self.fail(input_refusal(refused));
            }
            (
                State::RunHandler,
                unusable @ (Answer::StoredInputUnusable { .. }
                | Answer::InputInvalid(_)
                | Answer::InputIssues(_)
                | Answer::InputValidatorFailed),
            ) if self.resume_id.is_some() => {
                if let Answer::StoredInputUnusable { now_ms } = unusable {
                    self.clock(now_ms);
                }
                // The handler was never started: not an attempt.
                self.attempts = self.attempts.saturating_sub(1);
                self.keep_failure_text("StoredInputUnusable");
                self.fail(CapabilityError::new(
                    ErrorCode::ExecutionFailed,
                    STORED_INPUT_UNUSABLE_MESSAGE,
                ));
            }
            (State::RunHandler, Answer::HandlerTimedOut { now_ms }) => {
                self.clock(now_ms);
                // The deadline is spent: no retry can run in time.
                let e = self.timeout_error();
                self.fail(e);
            }
            (State::AskRetryOn(error), Answer::RetryOn(yes)) => {
                if yes {
                    self.back_off(error);
                } else {
                    self.fail(error);
                }
            }
            (State::Sleep { .. }, Answer::Slept { now_ms }) => {
                self.clock(now_ms);
                if self.now_ms >= self.deadline_at_ms {
                    let e = self.timeout_error();
                    self.fail(e);
                } else {
                    self.next_attempt();
                }
            }
            (State::ValidateOutput(_), Answer::OutputValid(p)) => self.enter_redaction(p),
            (State::ValidateOutput(_), Answer::OutputInvalid(_)) => {
                // The validator's message may quote the unredacted output.
                self.fail(CapabilityError::new(
                    ErrorCode::OutputInvalid,
                    "The capability returned output that does not match its declared schema.",
                ));
            }
            (State::RedactOutput(_), Answer::Redacted(p)) => self.finish_ok(p),
            (State::RedactOutput(_), Answer::RedactorFailed) => {
                // The unredacted output was in the state just taken and is
                // dropped here: it reaches no result, error or record.
                self.fail(CapabilityError::new(
                    ErrorCode::ExecutionFailed,
                    "The capability's output could not be prepared for return.",
                ));
            }
            (State::ExportOutput(p), Answer::OutputExported(v)) => {
                self.output_json = Some(v);
                self.finish(Outcome::Ok(p));
            }
            (State::Audit { then, .. }, Answer::Audited) => match then {
                AfterAudit::Execute => self.next_attempt(),
                AfterAudit::Finish(o) => self.state = State::Done(o),
            },
            (state, answer) => {
                let e = CapabilityError::new(
                    ErrorCode::Internal,
                    format!(
                        "host answered {} to step {:?}; the invocation is aborted",
                        answer.name(),
                        state.kind()
                    ),
                );
                self.end_internal(state, e.clone());
                return Err(e);
            }
        }
        Ok(())
    }

    /// The host cannot perform the step it was shown (its driver failed on
    /// it: a value it could not convert, a step it does not know, an
    /// exception of its own): the call ends INTERNAL here, and the finished
    /// audit record is still owed — the next step is `Audit` when the call
    /// audits, else `Done` (every call that started is audited as finished,
    /// issue 14). A finished call, or one whose finished record is already
    /// pending, keeps its outcome.
    ///
    /// Returns whether the call now owes a finished record it did not owe
    /// before (the step is that record's `Audit`): a host that already
    /// holds the pending record, or a call that was over, gets `false`, so
    /// no record is delivered twice.
    pub fn abandon(&mut self, now_ms: u64) -> bool {
        self.clock(now_ms);
        let state = std::mem::replace(&mut self.state, State::Vacant);
        let settled = Self::settled(&state);
        self.end_internal(
            state,
            CapabilityError::new(ErrorCode::Internal, ABANDONED_MESSAGE),
        );
        !settled && matches!(self.state, State::Audit { .. })
    }

    /// Whether `state` already holds the call's outcome: done, taken, or
    /// its finished record pending.
    fn settled(state: &State) -> bool {
        matches!(
            state,
            State::Done(_)
                | State::Vacant
                | State::Audit {
                    then: AfterAudit::Finish(_),
                    ..
                }
        )
    }

    /// Ends the call in `error` from `state` (already taken), keeping an
    /// outcome that was settled before.
    fn end_internal(&mut self, state: State, error: CapabilityError) {
        // Vacant: the outcome was taken.
        if Self::settled(&state) {
            self.state = state;
        } else {
            self.fail(error);
        }
    }

    fn clock(&mut self, now_ms: u64) {
        // A clock that goes backwards does not move time back.
        self.now_ms = self.now_ms.max(now_ms);
    }

    fn internal(&mut self, what: &str) {
        self.fail(CapabilityError::new(ErrorCode::Internal, what));
    }

    // ----- stages 4–6 ---------------------------------------------------

    fn enter_input_validation(&mut self) {
        self.stage = Stage::ValidateInput;
        if let Some(verdict) = self.host_limits.take()
            && !self.limits_passed(verdict.map_err(|e| *e))
        {
            return;
        }
        if let Payload::Json(v) = &self.input {
            let verdict = self.check_limits(v);
            if !self.limits_passed(verdict) {
                return;
            }
        }
        match self.capability() {
            Some(c) if c.validate_input => self.state = State::ValidateInput,
            Some(_) => self.enter_policies(),
            None => self.internal("capability missing at stage 4"),
        }
    }

    fn enter_policies(&mut self) {
        self.stage = Stage::RuntimePolicies;
        let none = self.registry.options().policies.is_empty()
            && self
                .capability()
                .is_some_and(|c| c.meta.policies.is_empty());
        if none {
            self.stage = Stage::CapabilityPolicies;
            self.gate();
        } else {
            self.run_policies(PolicyScope::Runtime, 0);
        }
    }

    fn input_value(&self) -> Option<&Value> {
        self.input_json.as_ref().or(self.input.as_json())
    }

    /// Evaluates policies from (`scope`, `index`) on, natively, until a host
    /// policy, an input export, a deny, or the end of the lists.
    fn run_policies(&mut self, mut scope: PolicyScope, mut index: u32) {
        let registry = Arc::clone(&self.registry);
        loop {
            self.stage = match scope {
                PolicyScope::Runtime => Stage::RuntimePolicies,
                PolicyScope::Capability => Stage::CapabilityPolicies,
            };
            let Some(spec) = policy_at(&registry, self.capability, scope, index) else {
                match scope {
                    PolicyScope::Runtime => {
                        scope = PolicyScope::Capability;
                        index = 0;
                        continue;
                    }
                    PolicyScope::Capability => return self.gate(),
                }
            };
            if matches!(spec.rule, PolicyRule::Host) {
                self.state = State::EvaluatePolicy { scope, index };
                return;
            }
            if policies::needs_input(spec) && self.input_value().is_none() {
                self.state = State::ExportInput(AfterExport::Policies { scope, index });
                return;
            }
            let Some(cap) = self.capability() else {
                return self.internal("capability missing at stage 5");
            };
            let input = self.input_value().unwrap_or(&NULL);
            let cedar = CedarCall {
                capability_id: &cap.id,
                side_effect: cap.meta.side_effect,
                risk: cap.meta.risk,
                discovery: cap.meta.discovery,
                tags: &cap.meta.tags,
                frame: &self.frame,
                input,
                now_ms: self.now_ms,
                input_type: cap.cedar_input.as_ref(),
            };
            let (decision, failed) = match policies::evaluate_cedar(spec, &cedar) {
                Some(evaluated) => evaluated,
                None => {
                    let cx = MatchContext {
                        tags: &cap.meta.tags,
                        risk: cap.meta.risk,
                        side_effect: cap.meta.side_effect,
                        surface: self.frame.surface,
                        actor_roles: &self.frame.actor.roles,
                        input,
                    };
                    let d = policies::evaluate_declarative(spec, &cx).unwrap_or(Decision::Abstain);
                    (d, false)
                }
            };
            if self.apply_decision(spec, scope, index, decision, failed) == Flow::Stop {
                return;
            }
            index += 1;
        }
    }

    fn host_policy_answered(&mut self, scope: PolicyScope, index: u32, d: Decision, failed: bool) {
        let registry = Arc::clone(&self.registry);
        let Some(spec) = policy_at(&registry, self.capability, scope, index) else {
            return self.internal("policy missing");
        };
        let d = d.with_bounded_reason();
        if self.apply_decision(spec, scope, index, d, failed) == Flow::Continue {
            self.run_policies(scope, index + 1);
        }
    }

    /// Records one decision and enforces it (see [`policies`]).
    fn apply_decision(
        &mut self,
        spec: &PolicySpec,
        scope: PolicyScope,
        index: u32,
        decision: Decision,
        failed: bool,
    ) -> Flow {
        if self.opts.audit {
            let (reason, approval_type) = match &decision {
                Decision::Deny { reason } => (reason.clone(), None),
                Decision::RequireApproval {
                    approval_type,
                    reason,
                    ..
                } => (reason.clone(), approval_type.clone()),
                _ => (None, None),
            };
            self.policy_records.push(PolicyRecord {
                scope,
                index,
                name: spec.name.clone(),
                mode: spec.mode,
                host: matches!(spec.rule, PolicyRule::Host),
                decision: decision.as_str(),
                reason,
                approval_type,
                failed,
            });
        }
        if spec.mode == PolicyMode::Shadow {
            return Flow::Continue;
        }
        match &decision {
            Decision::Deny { reason } => {
                let name = spec.name.as_deref();
                let e = if failed {
                    policies::failed(name, scope, index)
                } else {
                    policies::denied(name, reason.as_deref(), scope, index)
                };
                self.fail(e);
                Flow::Stop
            }
            Decision::RequireApproval { .. } => {
                if self.draft.is_none() {
                    self.draft = ApprovalDraft::from_decision(&decision).map(Box::new);
                }
                Flow::Continue
            }
            Decision::Allow | Decision::Abstain => Flow::Continue,
        }
    }

    // ----- stages 7–8 ---------------------------------------------------

    fn gate(&mut self) {
        self.stage = Stage::ApprovalGate;
        let Some(cap) = self.capability() else {
            return self.internal("capability missing at stage 8");
        };
        let required = cap.meta.approval.as_ref().is_some_and(|a| a.required);
        if !required && self.draft.is_none() {
            return self.enter_execution();
        }
        if self.frame.surface.approvals_need_a_caller() && !self.frame.names_a_caller() {
            return self.fail(
                CapabilityError::new(
                    ErrorCode::CredentialRequired,
                    super::gate::CALLER_REQUIRED_MESSAGE,
                )
                .with_details(super::gate::caller_required_details()),
            );
        }
        let Some(input) = self.input_value() else {
            self.state = State::ExportInput(AfterExport::Gate);
            return;
        };
        let hash = match crate::act::input_hash(&cap.id, input) {
            Ok(h) => h,
            Err(e) => {
                let e = CapabilityError::new(
                    ErrorCode::InvalidInput,
                    format!("The input cannot be bound to an approval: {e}"),
                );
                return self.fail(e);
            }
        };
        let request = approval_request_for(
            cap,
            input.clone(),
            hash.clone(),
            &self.frame,
            self.draft.as_deref(),
            self.now_ms,
        );
        self.input_hash = Some(hash);
        if self.caller_cancelled {
            return self.fail(cancelled_error()); // nothing stored for a caller already gone
        }
        self.approval_id = Some(request.id.clone());
        self.state = State::PersistApproval(Box::new(request));
    }

    fn grant_checked(&mut self, consumed: Result<Box<ApprovalRequest>, CapabilityError>) {
        let request = match consumed {
            Ok(r) => *r,
            Err(e) => return self.fail(e),
        };
        let id = self.resume_id.as_deref().unwrap_or("");
        let registry = Arc::clone(&self.registry);
        match verify_grant(&registry, id, &request) {
            Ok(cap) => {
                let ApprovalRequest {
                    input,
                    input_hash,
                    surface,
                    actor,
                    ..
                } = request;
                self.capability = Some(cap.index);
                let frame = Arc::make_mut(&mut self.frame);
                frame.surface = surface;
                frame.actor = actor;
                self.input = Payload::Json(input);
                self.input_hash = Some(input_hash);
                self.enter_execution();
            }
            Err(e) => self.refused_as_recorded(request, e),
        }
    }

    /// A resume that cannot run: fails with `error`, and the audit record
    /// names the request's capability, surface and actor — what a
    /// successful resume would have run as (SI-3) — not the caller's
    /// stand-in frame.
    fn refused_as_recorded(&mut self, request: ApprovalRequest, error: CapabilityError) {
        self.capability = self
            .registry
            .resolve(&request.capability_id)
            .filter(|c| c.id == request.capability_id)
            .map(|c| c.index);
        let frame = Arc::make_mut(&mut self.frame);
        frame.surface = request.surface;
        frame.actor = request.actor;
        self.fail(error);
    }

    // ----- stages 9–11 --------------------------------------------------

    fn enter_execution(&mut self) {
        self.stage = Stage::Deadline;
        let Some(timeout) = self.capability().map(|c| c.timeout_ms) else {
            return self.internal("capability missing at stage 9");
        };
        self.deadline_at_ms = self.opts.now_ms.saturating_add(timeout);
        self.stage = Stage::AuditStarted;
        if self.opts.audit {
            let record = self.record(AuditEvent::Started, None);
            self.state = State::Audit {
                record: Box::new(record),
                then: AfterAudit::Execute,
            };
        } else {
            self.next_attempt();
        }
    }

    fn next_attempt(&mut self) {
        if self.caller_cancelled {
            return self.fail(cancelled_error()); // never started for a caller already gone
        }
        self.stage = Stage::Handler;
        self.attempts += 1;
        self.state = State::RunHandler;
    }

    /// TIMEOUT, once a handler attempt has started (it may have run).
    fn timeout_error(&self) -> CapabilityError {
        self.timeout_after(self.attempts > 0)
    }

    /// TIMEOUT. It tells the caller it may call again (`retryable`) unless
    /// a handler may have run and running it again is not safe: a write
    /// that is not idempotent may have done its work before the deadline,
    /// and a second call could do it twice.
    fn timeout_after(&self, handler_started: bool) -> CapabilityError {
        let cap = self.capability();
        let ms = cap.map_or(0, |c| c.timeout_ms);
        let repeatable = !handler_started || cap.is_some_and(|c| c.meta.safe_to_repeat());
        CapabilityError::new(
            ErrorCode::Timeout,
            format!("The capability did not finish within its {ms} ms deadline."),
        )
        .with_retryable(repeatable)
    }

    /// SI-11: retry only an eligible capability, only a retryable error,
    /// within `maxAttempts`, asking `retryOn` only then.
    fn attempt_failed(&mut self, error: CapabilityError) {
        let Some(cap) = self.capability() else {
            return self.internal("capability missing at stage 11");
        };
        if !retry::may_retry(cap, self.attempts, error.retryable) {
            return self.fail(error);
        }
        if retry::has_retry_on(cap) {
            self.state = State::AskRetryOn(error);
        } else {
            self.back_off(error);
        }
    }

    fn back_off(&mut self, error: CapabilityError) {
        let Some(cap) = self.capability() else {
            return self.internal("capability missing at stage 11");
        };
        match retry::next_delay(cap, self.attempts, self.now_ms, self.deadline_at_ms) {
            None => self.fail(error),
            Some(0) => self.next_attempt(),
            Some(ms) => self.state = State::Sleep { ms },
        }
    }

    // ----- stages 12–14 -------------------------------------------------

    fn enter_output_validation(&mut self, output: Payload) {
        self.stage = Stage::ValidateOutput;
        if self.capability().is_some_and(|c| c.validate_output) {
            self.state = State::ValidateOutput(output);
        } else {
            self.enter_redaction(output);
        }
    }

    fn enter_redaction(&mut self, output: Payload) {
        self.stage = Stage::RedactOutput;
        if self.capability().is_some_and(|c| c.meta.redact.output) {
            self.state = State::RedactOutput(output);
        } else {
            self.finish_ok(output);
        }
    }

    /// `output` is redacted (or the capability has no redactor).
    fn finish_ok(&mut self, output: Payload) {
        self.stage = Stage::Finished;
        if self.opts.audit && (self.opts.audit_payloads || self.opts.span_payloads) {
            match &output {
                Payload::Json(v) => self.output_json = Some(v.clone()),
                Payload::Host => {
                    self.state = State::ExportOutput(output);
                    return;
                }
            }
        }
        self.finish(Outcome::Ok(output));
    }

    /// Whether the pending `PersistApproval` step may find the caller's
    /// earlier request for the same call instead of storing a new one
    /// (`ApprovalStore::create_or_repeat`): on a surface where repeated
    /// calls find their request ([`Surface::repeated_calls_find_their_request`]).
    pub fn persist_repeats(&self) -> bool {
        matches!(self.state, State::PersistApproval(_))
            && self.frame.surface.repeated_calls_find_their_request()
    }

    /// The store found `earlier` for this call (`new`): a pending one is
    /// the outcome, as if just made; an approved one is consumed and run,
    /// as a resume limited to the caller (SI-3, single use: the consume is
    /// the store's atomic step).
    fn repeated(&mut self, new: &ApprovalRequest, earlier: ApprovalRequest) {
        if !new.same_call(&earlier) {
            return self.fail(CapabilityError::new(
                ErrorCode::Internal,
                "the approval store answered a request this call does not repeat",
            ));
        }
        self.approval_id = Some(earlier.id.clone());
        match earlier.status {
            ApprovalStatus::Pending => self.finish(Outcome::ApprovalRequired(Box::new(earlier))),
            ApprovalStatus::Approved if self.caller_cancelled => {
                // Not consumed: the approval stays for the caller's next call.
                self.fail(cancelled_error())
            }
            ApprovalStatus::Approved => {
                self.requester = Some(Box::new(crate::approval::Requester::for_tool(
                    earlier.surface,
                    &earlier.actor,
                    earlier.session_id.as_deref(),
                    &earlier.capability_id,
                )));
                self.resume_id = Some(earlier.id);
                self.stage = Stage::GrantCheck;
                self.state = State::ConsumeApproval;
            }
            _ => self.fail(CapabilityError::new(
                ErrorCode::Internal,
                "the approval store answered a request that is neither pending nor approved",
            )),
        }
    }

    /// A plain error's class, for the operator's audit record (issue 15).
    fn keep_failure_text(&mut self, class: &str) {
        if self.opts.audit {
            self.failure = super::audit::failure_text(class);
        }
    }

    fn fail(&mut self, error: CapabilityError) {
        self.finish(Outcome::Error(error));
    }

    fn finish(&mut self, outcome: Outcome) {
        if self.opts.audit {
            let record = self.record(AuditEvent::Finished, Some(outcome.code()));
            self.state = State::Audit {
                record: Box::new(record),
                then: AfterAudit::Finish(outcome),
            };
        } else {
            self.state = State::Done(outcome);
        }
    }

    fn record(&mut self, event: AuditEvent, outcome: Option<&'static str>) -> AuditRecord {
        let policies = match event {
            AuditEvent::Started => self.policy_records.clone(),
            AuditEvent::Finished => std::mem::take(&mut self.policy_records),
        };
        let trace = self.frame.trace.as_ref();
        // The redacted output, for audit and for the span, each only as
        // opted in (a started record has none: it was never taken).
        let taken = self.output_json.take();
        let (output, span_output) = match (self.opts.audit_payloads, self.opts.span_payloads) {
            (true, true) => (taken.clone(), taken),
            (true, false) => (taken, None),
            (false, true) => (None, taken),
            (false, false) => (None, None),
        };
        AuditRecord {
            event,
            capability_id: self.capability().map(|c| c.id.clone()),
            requested: self.requested.clone(),
            surface: self.frame.surface,
            actor_id: self.frame.actor.id.clone(),
            resumed: self.resume_id.is_some(),
            policies,
            approval_id: self.approval_id.clone(),
            attempts: self.attempts,
            started_at: self.opts.now_ms,
            duration_ms: self.now_ms.saturating_sub(self.opts.now_ms),
            outcome,
            stage: self.stage,
            traceparent: trace.map(|t| t.traceparent.clone()),
            tracestate: trace.and_then(|t| t.tracestate.clone()),
            request_id: self.frame.request_id.clone(),
            agent_id: self.frame.agent_id.clone(),
            session_id: self.frame.session_id.clone(),
            failure: self.failure.clone(),
            output,
            span_output,
        }
    }
}

fn policy_at(
    registry: &CapabilityRegistry,
    capability: Option<u32>,
    scope: PolicyScope,
    index: u32,
) -> Option<&PolicySpec> {
    let list = match scope {
        PolicyScope::Runtime => &registry.options().policies,
        PolicyScope::Capability => &registry.get(capability?)?.meta.policies,
    };
    list.get(usize::try_from(index).ok()?)
}

/// The name a caller asked for, as an audit record keeps it: at most
/// [`MAX_REQUESTED_CHARS`] characters, control characters replaced, so a
/// stranger's 5 MB name with newlines cannot bloat or forge audit lines.
fn requested_for_audit(name: &str) -> String {
    let mut out: String = name
        .chars()
        .take(MAX_REQUESTED_CHARS)
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect();
    if name.chars().nth(MAX_REQUESTED_CHARS).is_some() {
        out.push('…');
    }
    out
}

/// Longest requested name an audit record keeps (ids are at most 256).
pub const MAX_REQUESTED_CHARS: usize = 256;

#[cfg(test)]
mod audit_name_tests {
    use super::*;

    #[test]
    fn requested_names_are_bounded_and_single_line() {
        assert_eq!(requested_for_audit("orders.search"), "orders.search");
        let long = "a".repeat(5_000_000) + "\n";
        let kept = requested_for_audit(&long);
        assert_eq!(kept.chars().count(), MAX_REQUESTED_CHARS + 1);
        assert!(kept.ends_with('…'));
        assert_eq!(requested_for_audit("x\ny"), "x\u{fffd}y");
    }
}
