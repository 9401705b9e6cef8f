//! The answers Swift gives an invocation's steps. Each feeds the answer,
//! with the time Swift's clock read when it was made, and advances through
//! the steps the core performs itself (synchronous approval-store steps),
//! returning the next step kind Swift must perform: one crossing per host
//! step. An answer that does not fit the step, or one the core cannot read
//! (`ffi::answer`), ends the invocation in `Done` with an INTERNAL error
//! (the core's rule); the next kind says so.

use orpc_agent_core::ffi;

use crate::convert::{FfiHostInput, export_answer};
use crate::invocation::FfiInvocation;

#[uniffi::export]
impl FfiInvocation {
    // ----- answers: each returns the next step kind -----------------------

    /// Any answer without text, by its code (`ffi::answer_code`, generated
    /// into `AnswerCode`); `flag` is `RetryOn`'s verdict. The core reads
    /// it (`ffi::answer`): one it cannot read ends the call INTERNAL.
    pub fn answer(&self, code: u8, flag: bool, now_ms: u64) -> u8 {
        self.apply(ffi::answer(code, None, flag, now_ms), now_ms)
    }

    /// An answer with its text (`ffi::answer` says which answer reads it:
    /// a message for the model, issues as JSON, an output as JSON).
    pub fn answer_text(&self, code: u8, text: Option<String>, now_ms: u64) -> u8 {
        self.apply(ffi::answer(code, text, false, now_ms), now_ms)
    }

    /// `ExportInput`: the validated input as Swift measured it
    /// (`HostJSON.measure`). One with no JSON form the core can bind — a
    /// NaN or infinity, nesting past the hash's depth, text serde refuses —
    /// answers `InputNotExportable` (INVALID_INPUT, audited), as Node and
    /// Python do.
    pub fn answer_input_exported(&self, input: FfiHostInput, now_ms: u64) -> u8 {
        self.apply(export_answer(input), now_ms)
    }

    /// The driver cannot perform the current step: a kind Swift's mirror of
    /// `StepKind` does not know (it drifted from the core's), or a value of
    /// the core's it could not read or convert. The core ends the call
    /// (INTERNAL with its own message, unless the outcome was settled) and
    /// its finished audit record is delivered here, as for Node and Python
    /// (`Invocation::abandon`): the binding picks no code and no words.
    pub fn abandon(&self, now_ms: u64) -> u8 {
        self.run_core(move |inv, host, audit| {
            // The core says whether a finished record is newly owed: one
            // already pending went to the sink when it was reached, and is
            // left for the driver to deliver (never twice), as in Node.
            if !inv.abandon(now_ms) {
                return inv.step_kind();
            }
            audit.advance(host, inv, now_ms)
        })
    }

    /// `EvaluatePolicy`: the host policy's decision by its code
    /// (`ffi::decision_code`, generated into `DecisionCode`) with its
    /// fields; the core reads it (`ffi::policy_answer`), as it does
    /// Node's and Python's, and a code it does not know is a failed policy.
    pub fn answer_policy(
        &self,
        code: u8,
        reason: Option<String>,
        approval_type: Option<String>,
        expires_in_ms: Option<u64>,
        now_ms: u64,
    ) -> u8 {
        let answer = ffi::policy_answer(u32::from(code), reason, approval_type, expires_in_ms);
        self.apply(answer, now_ms)
    }

    /// `RunHandler`: the handler failed (`ffi::handler_error`). `code` is
    /// the handler's own `CapabilityError` code, or `None` for a plain
    /// thrown error (a generic EXECUTION_FAILED; `message` never reaches
    /// the caller). `details_json`: the error's details as JSON text, which
    /// the core keeps within its limits.
    pub fn answer_handler_error(
        &self,
        code: Option<String>,
        message: String,
        retryable: bool,
        details_json: Option<String>,
        now_ms: u64,
    ) -> u8 {
        let details = details_json.as_deref();
        let answer = ffi::handler_error(code.as_deref(), message, retryable, details, now_ms);
        self.apply(answer, now_ms)
    }
}
