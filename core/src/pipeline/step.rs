//! What the machine asks of the host ([`Step`]) and what the host may
//! answer ([`Answer`]). Each step accepts only the answers listed on it;
//! any other answer is an `INTERNAL` error that ends the invocation.

use serde_json::Value;

use super::audit::AuditRecord;
use super::policies::PolicyScope;
use super::redaction::RedactionInfo;
use super::{Outcome, Payload};
use crate::approval::ApprovalRequest;
use crate::error::{CapabilityError, ErrorCode};

/// A policy's decision: what a host policy answers, and what a declarative
/// policy evaluates to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// Stops the call (when enforced). The reason is shown to the caller,
    /// so write it for a model: what was refused and what to do instead.
    Deny {
        reason: Option<String>,
    },
    /// Gates the call at stage 8 (when enforced and no deny follows).
    RequireApproval {
        approval_type: Option<String>,
        reason: Option<String>,
        expires_in_ms: Option<u64>,
    },
    /// The policy has no opinion.
    Abstain,
}

impl Decision {
    /// The decision with its reason cut to
    /// [`crate::approval::MAX_DECISION_REASON_BYTES`] (at a character
    /// boundary, ending in `…`): a host policy's reason is the app's text at
    /// run time, shown to the model, audited and stored with a request, and
    /// an unbounded one (megabytes) would be all three.
    pub fn with_bounded_reason(mut self) -> Decision {
        const MAX: usize = crate::approval::MAX_DECISION_REASON_BYTES;
        if let Decision::Deny { reason: Some(r) }
        | Decision::RequireApproval {
            reason: Some(r), ..
        } = &mut self
            && r.len() > MAX
        {
            let mut end = MAX - '…'.len_utf8();
            while !r.is_char_boundary(end) {
                end -= 1;
            }
            r.truncate(end);
            r.push('…');
        }
        self
    }

    /// The wire spelling used in audit records.
    pub const fn as_str(&self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Deny { .. } => "deny",
            Decision::RequireApproval { .. } => "requireApproval",
            Decision::Abstain => "abstain",
        }
    }
}

/// What the host must do next. Borrowed from the invocation: reading a step
/// clones nothing.
#[derive(Debug)]
pub enum Step<'a> {
    /// Stage 4: validate (and apply defaults to) the input. Answer
    /// [`Answer::InputValid`] with the validated input, or
    /// [`Answer::InputInvalid`] with a message for the model.
    ValidateInput { input: &'a Payload },
    /// Stages 5–6: evaluate host policy `index` of `scope` (the position in
    /// the registry's runtime `policies`, or in the capability's
    /// `policies`). Answer [`Answer::PolicyDecision`], or
    /// [`Answer::PolicyFailed`] if it threw or ran past `timeout_ms` — a
    /// failed policy denies.
    EvaluatePolicy {
        scope: PolicyScope,
        index: u32,
        timeout_ms: u64,
        input: &'a Payload,
    },
    /// The core needs the validated input as JSON (declarative input
    /// predicates, the approval hash). Answer [`Answer::InputExported`].
    ExportInput,
    /// Stage 8: store this request. Answer [`Answer::Persisted`] or
    /// [`Answer::StoreFailed`].
    PersistApproval(&'a ApprovalRequest),
    /// Stage 7 (resume): consume this approval atomically in the store —
    /// with [`ApprovalStore::consume_for`](crate::approval::ApprovalStore::consume_for)
    /// when the resume is limited to the `requester`. Answer
    /// [`Answer::Consumed`].
    ConsumeApproval {
        id: &'a str,
        requester: Option<&'a crate::approval::Requester>,
    },
    /// Stage 11: run the handler. Arm a timer for `deadline_at_ms` and
    /// give the handler an abort signal that fires at it; answer
    /// [`Answer::HandlerOk`], [`Answer::HandlerError`],
    /// [`Answer::HandlerTimedOut`] or [`Answer::Cancelled`]. A result that
    /// arrives after the timer fired is discarded by the host.
    RunHandler {
        /// 1 for the first attempt.
        attempt: u32,
        deadline_at_ms: u64,
        input: &'a Payload,
    },
    /// Stage 11: a retryable error happened and the capability declares a
    /// host `retryOn` predicate. Answer [`Answer::RetryOn`].
    AskRetryOn { error: &'a CapabilityError },
    /// Stage 11: wait `ms` before the next attempt. Answer
    /// [`Answer::Slept`], or [`Answer::Cancelled`] if the caller cancelled.
    Sleep { ms: u64 },
    /// Stage 12: validate the handler's output. Answer
    /// [`Answer::OutputValid`] or [`Answer::OutputInvalid`].
    ValidateOutput { output: &'a Payload },
    /// Stage 13: apply the capability's output redactor. Answer
    /// [`Answer::Redacted`] or [`Answer::RedactorFailed`].
    RedactOutput {
        output: &'a Payload,
        info: RedactionInfo<'a>,
    },
    /// Stage 14: the core needs the (redacted) output as JSON for an
    /// opted-in audit payload. Answer [`Answer::OutputExported`].
    ExportOutput,
    /// Stages 10 and 14: deliver this record to the audit subscriber.
    /// Answer [`Answer::Audited`].
    Audit(&'a AuditRecord),
    /// The invocation is over. Take the outcome with
    /// [`super::Invocation::take_outcome`].
    Done(&'a Outcome),
}

/// The kind of a [`Step`] as a small integer, for FFI hosts: reading an
/// integer across Node-API costs ~0.05 µs, an object ~0.6 µs (DESIGN §4).
/// Details are read with the invocation's accessors (`attempt()`,
/// `deadline_at_ms()`, `sleep_ms()`, `policy_scope()`, `policy_index()`…).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum StepKind {
    ValidateInput = 1,
    EvaluatePolicy = 2,
    ExportInput = 3,
    PersistApproval = 4,
    ConsumeApproval = 5,
    RunHandler = 6,
    AskRetryOn = 7,
    Sleep = 8,
    ValidateOutput = 9,
    RedactOutput = 10,
    ExportOutput = 11,
    Audit = 12,
    Done = 13,
}

impl StepKind {
    /// Every kind, in numeric order (`ALL[i]` is kind `i + 1`). Bindings
    /// that mirror the numbers assert them against this list.
    pub const ALL: [StepKind; 13] = [
        StepKind::ValidateInput,
        StepKind::EvaluatePolicy,
        StepKind::ExportInput,
        StepKind::PersistApproval,
        StepKind::ConsumeApproval,
        StepKind::RunHandler,
        StepKind::AskRetryOn,
        StepKind::Sleep,
        StepKind::ValidateOutput,
        StepKind::RedactOutput,
        StepKind::ExportOutput,
        StepKind::Audit,
        StepKind::Done,
    ];

    pub const fn as_u8(self) -> u8 {
        self as u8
    }

    /// The variant's name, as bindings spell their mirrors of it.
    pub const fn name(self) -> &'static str {
        match self {
            StepKind::ValidateInput => "ValidateInput",
            StepKind::EvaluatePolicy => "EvaluatePolicy",
            StepKind::ExportInput => "ExportInput",
            StepKind::PersistApproval => "PersistApproval",
            StepKind::ConsumeApproval => "ConsumeApproval",
            StepKind::RunHandler => "RunHandler",
            StepKind::AskRetryOn => "AskRetryOn",
            StepKind::Sleep => "Sleep",
            StepKind::ValidateOutput => "ValidateOutput",
            StepKind::RedactOutput => "RedactOutput",
            StepKind::ExportOutput => "ExportOutput",
            StepKind::Audit => "Audit",
            StepKind::Done => "Done",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::StepKind;

    #[test]
    fn all_is_in_numeric_order() {
        for (i, k) in StepKind::ALL.iter().enumerate() {
            assert_eq!(usize::from(k.as_u8()), i + 1, "{}", k.name());
        }
    }
}

impl Step<'_> {
    pub fn kind(&self) -> StepKind {
        match self {
            Step::ValidateInput { .. } => StepKind::ValidateInput,
            Step::EvaluatePolicy { .. } => StepKind::EvaluatePolicy,
            Step::ExportInput => StepKind::ExportInput,
            Step::PersistApproval(_) => StepKind::PersistApproval,
            Step::ConsumeApproval { .. } => StepKind::ConsumeApproval,
            Step::RunHandler { .. } => StepKind::RunHandler,
            Step::AskRetryOn { .. } => StepKind::AskRetryOn,
            Step::Sleep { .. } => StepKind::Sleep,
            Step::ValidateOutput { .. } => StepKind::ValidateOutput,
            Step::RedactOutput { .. } => StepKind::RedactOutput,
            Step::ExportOutput => StepKind::ExportOutput,
            Step::Audit(_) => StepKind::Audit,
            Step::Done(_) => StepKind::Done,
        }
    }
}

/// The host's answer to the current step.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// To `ValidateInput`: the validated input (defaults applied).
    InputValid(Payload),
    /// To `ValidateInput`: why the input is invalid, written for the model
    /// (Rust hosts, and a validator's own `CapabilityError`; a binding
    /// reports [`Answer::InputIssues`] otherwise). Also to `RunHandler`, as
    /// [`Answer::InputIssues`].
    InputInvalid(String),
    /// To `ValidateInput`: the problems the host's validator found; the core
    /// writes the model's message from them
    /// ([`super::issues::invalid_input_message`]). Also to `RunHandler` of
    /// a fresh call, from a host that converts the input to the handler's
    /// type only there (no validator declared) and could not: the input is
    /// refused as at stage 4 and no handler starts.
    InputIssues(Vec<super::issues::InputIssue>),
    /// To `ValidateInput`: the validator threw instead of answering. Its
    /// text never leaves (it may quote the input). Also to `RunHandler`, as
    /// [`Answer::InputIssues`], for a conversion that failed without issues.
    InputValidatorFailed,
    /// To `ValidateInput`, `ValidateOutput` or `RedactOutput`: the hook had
    /// not answered at [`super::Invocation::call_deadline_ms`]. The call
    /// is TIMEOUT (every hook is bounded by the deadline).
    DeadlinePassed { now_ms: u64 },
    /// To `EvaluatePolicy`.
    PolicyDecision(Decision),
    /// To `EvaluatePolicy`: the policy threw or timed out. The message is
    /// not shown to the caller nor recorded (it may quote the input).
    PolicyFailed(String),
    /// To `ExportInput`.
    InputExported(Value),
    /// To `ExportInput`: the host value has no JSON form (NaN, a function,
    /// a cycle…). The call fails with INVALID_INPUT, as an input the
    /// approval hash cannot bind does. The reason is the library's own
    /// (a converter's, naming a path and a hash sub-code), or one of
    /// [`Answer::input_not_exportable`] and [`Answer::input_not_rebuilt`].
    InputNotExportable(String),
    /// To `PersistApproval`.
    Persisted,
    /// To `PersistApproval` when the call repeats an earlier one
    /// ([`crate::Invocation::persist_repeats`]): the store found the
    /// caller's earlier request for the same call, pending or approved,
    /// and stored nothing ([`crate::approval::ApprovalStore::create_or_repeat`]).
    RepeatedApproval(Box<ApprovalRequest>),
    /// To `PersistApproval`: the store refused or failed.
    StoreFailed(CapabilityError),
    /// To `ConsumeApproval`: the consumed request, or why it cannot be used
    /// (`APPROVAL_NOT_FOUND`, `_PENDING`, `_REJECTED`, `_EXPIRED`,
    /// `_CONSUMED`, or a store failure).
    Consumed(Result<Box<ApprovalRequest>, CapabilityError>),
    /// To `ConsumeApproval`: the request exists but cannot be used
    /// (pending, rejected, expired, already consumed) — with the request as
    /// stored, so the audit record names its capability, surface and actor,
    /// as a refused grant check does. See [`super::gate::consume_answer`].
    ConsumeRefused {
        error: CapabilityError,
        request: Box<ApprovalRequest>,
    },
    /// To `RunHandler`: the handler returned.
    HandlerOk { output: Payload, now_ms: u64 },
    /// To `RunHandler`: the handler failed. `code: None` is a plain thrown
    /// error: it becomes `EXECUTION_FAILED` with a generic message, and
    /// `message` is the error's class (`TypeError`), which only the
    /// operator's audit record keeps; the host sends its message, which
    /// may quote data, to its own logger and never here. A handler's own
    /// `CapabilityError` keeps its code and message, and its `details`
    /// when they are within [`crate::limits::ERROR_DETAILS`] (the core
    /// drops them otherwise, and always for a plain throw).
    HandlerError {
        code: Option<ErrorCode>,
        message: String,
        retryable: bool,
        details: Option<Box<Value>>,
        now_ms: u64,
    },
    /// To `RunHandler`: the deadline timer fired first.
    HandlerTimedOut { now_ms: u64 },
    /// To `RunHandler` of a resumed call: the host cannot turn the approved
    /// input the core holds into the handler's input type (the app's types
    /// changed since the request was made), so the handler was not started.
    /// EXECUTION_FAILED, not retried, no attempt counted; the approval was
    /// consumed by the resume. The one rule for every binding that decodes
    /// a stored input (issue 14).
    StoredInputUnusable { now_ms: u64 },
    /// To `RunHandler` or `Sleep`: the caller cancelled.
    Cancelled { now_ms: u64 },
    /// To `AskRetryOn`: whether the host's `retryOn` wants a retry.
    RetryOn(bool),
    /// To `Sleep`: the wait is over.
    Slept { now_ms: u64 },
    /// To `ValidateOutput`: the validated output.
    OutputValid(Payload),
    /// To `ValidateOutput`: the output is invalid. The message is dropped:
    /// it may quote the unredacted output (SI-10).
    OutputInvalid(String),
    /// To `RedactOutput`.
    Redacted(Payload),
    /// To `RedactOutput`: the redactor threw. The output is dropped.
    RedactorFailed,
    /// To `ExportOutput`.
    OutputExported(Value),
    /// To `Audit`.
    Audited,
    /// An answer a binding built from primitives the core cannot read: an
    /// unknown code, or one without the text it needs
    /// ([`crate::ffi::answer`]). It fits no step: the call ends INTERNAL.
    Malformed { code: u8 },
}

/// Why a validated input has no JSON form when application code raised
/// while converting it (a `toJSON`, a getter, an `encode(to:)`, a
/// serializer): its text may quote the input, so it is not shown.
pub const NO_JSON_FORM: &str = "a value in it has no JSON form.";

/// Why a validated input is not bound when its JSON form does not give the
/// value back (Python: a lossy serializer, an excluded field that was set,
/// a value its field's type does not carry back; Node: a Date, a Map or a
/// BigInt the JSON form reads back as text, an object or a number): a
/// resumed handler could not get the value the hash would bind.
pub const NOT_REBUILT: &str = "its JSON form does not give the validated value back when rebuilt \
     (a lossy serializer, an excluded field, or a value that reads back as another type, \
     such as a date as its text)";

impl Answer {
    /// `ExportInput` when converting the validated input raised: the
    /// application's own `CapabilityError` message if it threw one (written
    /// for the caller), otherwise [`NO_JSON_FORM`] — in every binding.
    pub fn input_not_exportable(app_message: Option<String>) -> Answer {
        Answer::InputNotExportable(app_message.unwrap_or_else(|| NO_JSON_FORM.to_owned()))
    }

    /// `ExportInput` when the input's JSON form does not rebuild it
    /// ([`NOT_REBUILT`]).
    pub fn input_not_rebuilt() -> Answer {
        Answer::InputNotExportable(NOT_REBUILT.to_owned())
    }

    /// `ExportInput` with the validated input's JSON form, or the core's
    /// reason it has none (a refusal of the conversion: INVALID_INPUT).
    pub fn input_exported(value: Result<Value, CapabilityError>) -> Answer {
        match value {
            Ok(v) => Answer::InputExported(v),
            Err(e) => Answer::InputNotExportable(e.message),
        }
    }

    /// `ExportOutput` with the redacted output's JSON form for the audit
    /// payload; an output with none (`None`) is recorded as `null`, in every
    /// binding: the call's outcome stands.
    pub fn output_exported(value: Option<Value>) -> Answer {
        Answer::OutputExported(value.unwrap_or(Value::Null))
    }

    /// A short name for error messages (never the payload).
    pub const fn name(&self) -> &'static str {
        match self {
            Answer::InputValid(_) => "InputValid",
            Answer::InputInvalid(_) => "InputInvalid",
            Answer::InputIssues(_) => "InputIssues",
            Answer::InputValidatorFailed => "InputValidatorFailed",
            Answer::DeadlinePassed { .. } => "DeadlinePassed",
            Answer::PolicyDecision(_) => "PolicyDecision",
            Answer::PolicyFailed(_) => "PolicyFailed",
            Answer::InputExported(_) => "InputExported",
            Answer::InputNotExportable(_) => "InputNotExportable",
            Answer::Persisted => "Persisted",
            Answer::RepeatedApproval(_) => "RepeatedApproval",
            Answer::StoreFailed(_) => "StoreFailed",
            Answer::Consumed(_) => "Consumed",
            Answer::ConsumeRefused { .. } => "ConsumeRefused",
            Answer::HandlerOk { .. } => "HandlerOk",
            Answer::HandlerError { .. } => "HandlerError",
            Answer::HandlerTimedOut { .. } => "HandlerTimedOut",
            Answer::StoredInputUnusable { .. } => "StoredInputUnusable",
            Answer::Cancelled { .. } => "Cancelled",
            Answer::RetryOn(_) => "RetryOn",
            Answer::Slept { .. } => "Slept",
            Answer::OutputValid(_) => "OutputValid",
            Answer::OutputInvalid(_) => "OutputInvalid",
            Answer::Redacted(_) => "Redacted",
            Answer::RedactorFailed => "RedactorFailed",
            Answer::OutputExported(_) => "OutputExported",
            Answer::Audited => "Audited",
            Answer::Malformed { .. } => "Malformed",
        }
    }
}

#[cfg(test)]
mod reason_bound_tests {
    use super::Decision;
    use crate::approval::MAX_DECISION_REASON_BYTES as MAX;

    #[test]
    fn a_host_policys_reason_is_cut_to_the_bound_at_a_character_boundary() {
        let long = "é".repeat(MAX); // two bytes each
        let Decision::Deny { reason: Some(r) } =
            (Decision::Deny { reason: Some(long) }).with_bounded_reason()
        else {
            panic!("not a deny")
        };
        assert!(r.len() <= MAX && r.ends_with('…'), "{}", r.len());
        let short = Decision::RequireApproval {
            approval_type: None,
            reason: Some("why".into()),
            expires_in_ms: None,
        };
        assert_eq!(short.clone().with_bounded_reason(), short);
        assert_eq!(Decision::Allow.with_bounded_reason(), Decision::Allow);
    }
}
