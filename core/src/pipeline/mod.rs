//! The governed invocation pipeline of DESIGN §4: a sans-I/O state machine.
//!
//! An [`Invocation`] is created from a registry, a capability id (or adapter
//! tool name), an input and a [`Frame`](crate::Frame). The host then loops:
//! read [`Invocation::step`], perform it (validate, evaluate a host policy,
//! persist an approval, run the handler, sleep, redact, deliver an audit
//! record), and feed the result back with [`Invocation::answer`], until the
//! step is [`Step::Done`]. Every decision — stage order, which policies
//! run, first-deny-wins, fail-closed rules, the approval gate and its hash,
//! retry eligibility, backoff, deadlines, what may leak — is made here, once.
//! Nothing in this module awaits, reads a clock or does I/O: the host passes
//! `now_ms` (unix milliseconds) at the start and with the answers that need
//! it, so a binding's driver loop crosses into Rust only synchronously.
//!
//! [`driver`] (feature `tokio-driver`) is the reference driver for Rust
//! hosts; the pipeline vectors in `tests/vectors/pipeline/` are checked
//! through it.
//!
//! Module map: [`stage`] (the 14 stages), [`step`] (what the host is asked
//! and may answer), [`machine`] (the state machine), [`policies`] (stages
//! 5–6), [`gate`] (stages 7–8), [`retry`] (stage 11's SI-11 rules),
//! [`audit`] (records), [`redaction`] (`RedactionInfo`), [`trace`] (stage 3).

pub mod audit;
#[cfg(feature = "postgres")]
pub mod audit_postgres;
#[cfg(feature = "tokio-driver")]
pub mod driver;
pub mod gate;
pub mod issues;
pub mod machine;
pub mod policies;
pub mod progress;
pub mod redaction;
mod resume_limit;
pub mod retry;
pub mod stage;
pub mod step;
pub mod trace;

pub use audit::{AuditEvent, AuditRecord, AuditRow, PolicyRecord};
pub use gate::{approval_request_for, verify_grant};
pub use issues::{InputIssue, invalid_input_message};
pub use machine::Invocation;
pub use policies::PolicyScope;
pub use redaction::{ApprovalInputView, RedactionInfo, approval_input_redaction};
pub use resume_limit::ResumeLimit;
pub use retry::backoff_delay_ms;
pub use stage::Stage;
pub use step::{Answer, Decision, Step, StepKind};

use serde_json::Value;

use crate::approval::ApprovalRequest;
use crate::error::CapabilityError;

/// A value that crosses the pipeline: either held by the core as JSON, or
/// kept by the host (`Host`) because the core does not need to read it.
///
/// The core reads the input only for declarative input predicates, the
/// approval hash and (never) audit payloads, and the output only for
/// opted-in audit payloads after redaction; for those it asks with
/// [`Step::ExportInput`] / [`Step::ExportOutput`]. A host whose values are
/// not JSON (a JS object, a pydantic model) answers `Host` and keeps them,
/// so the hot path converts nothing.
#[derive(Clone, Debug, PartialEq)]
pub enum Payload {
    Json(Value),
    Host,
}

impl Payload {
    /// The JSON value, when the core holds one.
    pub fn as_json(&self) -> Option<&Value> {
        match self {
            Payload::Json(v) => Some(v),
            Payload::Host => None,
        }
    }
}

/// Per-invocation options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvokeOptions {
    /// The host's clock at the start of the invocation (unix ms). The
    /// deadline (stage 9) is `now_ms + timeoutMs`, so the timeout bounds the
    /// whole governed call as its caller experiences it.
    pub now_ms: u64,
    /// An audit subscriber exists: the machine emits [`Step::Audit`].
    pub audit: bool,
    /// Audit records carry the (redacted) output.
    pub audit_payloads: bool,
    /// The finished record carries the (redacted) output for the call's
    /// span (`AuditRecord::span_output`), not for audit.
    pub span_payloads: bool,
}

impl InvokeOptions {
    /// No audit, at `now_ms`.
    pub fn at(now_ms: u64) -> InvokeOptions {
        InvokeOptions {
            now_ms,
            audit: false,
            audit_payloads: false,
            span_payloads: false,
        }
    }
}

/// How an invocation ends.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The redacted output (`Payload::Host` when the host holds it).
    Ok(Payload),
    /// Stage 8 gated the call; the request is persisted. Not an error for
    /// the application: a pending outcome.
    ApprovalRequired(Box<ApprovalRequest>),
    Error(CapabilityError),
}

impl Outcome {
    /// `"ok"`, `"approval_required"` or the error code: what audit records
    /// and vectors compare.
    pub fn code(&self) -> &'static str {
        match self {
            Outcome::Ok(_) => "ok",
            Outcome::ApprovalRequired(_) => "approval_required",
            Outcome::Error(e) => e.code.as_str(),
        }
    }
}
