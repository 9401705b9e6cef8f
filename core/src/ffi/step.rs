//! What a binding reports of the step an invocation is at, as numbers: the
//! step kind (or the sentinel for "done, the host holds the output"), the
//! one number the host needs to perform it, the JSON the core holds for
//! it, and how a finished call ended. Written once so no binding keeps its
//! own reading of [`Step`].

use serde_json::Value;

use super::sentinel;
use crate::pipeline::{Invocation, Outcome, Payload, PolicyScope, Step, StepKind};

/// The step kind a binding hands its host for `kind` (the kind `inv` is
/// at): [`sentinel::DONE_OK_HOST`] in place of `Done` when the call ended
/// ok with the output the host holds (nothing of it crossed, so the host
/// returns its own value without reading an outcome).
pub fn reported_kind(inv: &Invocation, kind: StepKind) -> u8 {
    if kind == StepKind::Done && matches!(inv.step(), Step::Done(Outcome::Ok(Payload::Host))) {
        return sentinel::DONE_OK_HOST;
    }
    kind.as_u8()
}

/// The one number the host needs for step `kind`, so it needs no second
/// crossing: `RunHandler` the deadline (unix ms: arm the timer at it),
/// `Sleep` the milliseconds to wait, `EvaluatePolicy` `index × 2 + scope`
/// (scope 0 runtime, 1 capability); 0 for any other step.
pub fn step_aux(inv: &Invocation, kind: StepKind) -> u64 {
    match kind {
        StepKind::RunHandler => inv.deadline_at_ms(),
        StepKind::Sleep => inv.sleep_ms(),
        StepKind::EvaluatePolicy => {
            let (scope, index) = inv.policy_at().unwrap_or((PolicyScope::Runtime, 0));
            u64::from(index) * 2 + u64::from(scope == PolicyScope::Capability)
        }
        _ => 0,
    }
}

/// The value the current step shows when the core holds it as JSON (a
/// resumed call's approved input; an output the core produced); `None`
/// when the host holds it, or the step shows none.
pub fn step_json(inv: &Invocation) -> Option<&Value> {
    match inv.step() {
        Step::ValidateInput { input }
        | Step::EvaluatePolicy { input, .. }
        | Step::RunHandler { input, .. } => input.as_json(),
        Step::ValidateOutput { output } | Step::RedactOutput { output, .. } => output.as_json(),
        _ => None,
    }
}

/// How a call ended, as one number (the hot path reads no record).
pub mod outcome_code {
    /// Ok, and the output is the value the host holds.
    pub const OK_HOST: u8 = 0;
    /// Ok, and the core holds the output as JSON.
    pub const OK_JSON: u8 = 1;
    /// An approval is required: the outcome holds the request.
    pub const APPROVAL_REQUIRED: u8 = 2;
    /// An error.
    pub const ERROR: u8 = 3;
    /// The call has not finished (or its outcome was taken).
    pub const NOT_DONE: u8 = 255;

    /// Every code with its name as the generated mirrors spell it.
    pub const ALL: [(u8, &str); 5] = [
        (OK_HOST, "OkHost"),
        (OK_JSON, "OkJson"),
        (APPROVAL_REQUIRED, "ApprovalRequired"),
        (ERROR, "Error"),
        (NOT_DONE, "NotDone"),
    ];
}

/// [`outcome_code`] of `inv`.
pub fn outcome_code(inv: &Invocation) -> u8 {
    match inv.step() {
        Step::Done(Outcome::Ok(Payload::Host)) => outcome_code::OK_HOST,
        Step::Done(Outcome::Ok(Payload::Json(_))) => outcome_code::OK_JSON,
        Step::Done(Outcome::ApprovalRequired(_)) => outcome_code::APPROVAL_REQUIRED,
        Step::Done(Outcome::Error(_)) => outcome_code::ERROR,
        _ => outcome_code::NOT_DONE,
    }
}

/// The step kinds' names in numeric order (position `i` is kind `i + 1`):
/// what each binding's drift test compares its mirror with.
pub fn step_kind_names() -> Vec<String> {
    StepKind::ALL.iter().map(|k| k.name().to_owned()).collect()
}
