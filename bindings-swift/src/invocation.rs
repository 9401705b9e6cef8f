//! One governed invocation, driven from Swift with synchronous calls: the
//! step it is at and how it ended. Its answers are in `answers.rs`.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use orpc_agent_core::ffi::{self, AuditRoute, BindingRegistry, StoreOp};
use orpc_agent_core::pipeline::PolicyScope;
use orpc_agent_core::pipeline::progress::ProgressChecker;
use orpc_agent_core::{
    Answer, CapabilityError, ErrorCode, Invocation, Outcome, Payload, Step, StepKind,
};

use crate::records::{
    FfiApprovalRequest, FfiAuditRecord, FfiErrorInfo, FfiFrame, FfiRedactionInfo, ProgressReport,
};

/// Which host policy an `EvaluatePolicy` step names.
#[derive(Debug, uniffi::Record)]
pub struct FfiPolicyAt {
    /// true: the registry's runtime `policies`; false: the capability's.
    pub runtime: bool,
    pub index: u32,
    /// How long the policy may run before it counts as failed (denies).
    pub timeout_ms: u64,
}

/// A running invocation. Swift holds it for the duration of one call.
#[derive(uniffi::Object)]
pub struct FfiInvocation {
    host: Arc<BindingRegistry>,
    audit: AuditRoute,
    inv: Mutex<Invocation>,
    /// The core panicked while running this invocation (it must not; the
    /// panic is caught here so it never unwinds into Swift or aborts the
    /// app). The invocation then ends in INTERNAL.
    panicked: AtomicBool,
    /// The handler's progress reports so far (`report_progress`).
    progress: Mutex<ProgressChecker>,
}

fn panic_error() -> CapabilityError {
    CapabilityError::new(
        ErrorCode::Internal,
        orpc_agent_core::error::INTERNAL_MESSAGE,
    )
}

impl FfiInvocation {
    pub(crate) fn new(
        host: Arc<BindingRegistry>,
        inv: Invocation,
        now_ms: u64,
        audit: AuditRoute,
    ) -> Arc<Self> {
        let this = FfiInvocation {
            host,
            audit,
            inv: Mutex::new(inv),
            panicked: AtomicBool::new(false),
            progress: Mutex::new(ProgressChecker::new()),
        };
        this.run_core(|inv, host, audit| audit.advance(host, inv, now_ms));
        Arc::new(this)
    }

    /// The invocation. A poisoned lock (a panic in an earlier call, caught
    /// by uniffi) still holds a consistent machine: each answer is applied
    /// by one `answer` call that either ran or did not.
    fn lock(&self) -> MutexGuard<'_, Invocation> {
        self.inv.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Applies `answer` (Swift's, or one a store step made off this
    /// object), runs the core's own store steps, returns the next
    /// step kind for Swift. `now_ms` is Swift's clock when the answer was
    /// made: the core ends the attempt in TIMEOUT instead of handing out a
    /// handler step at or past its deadline (`Invocation::at`, applied by
    /// `BindingRegistry::advance`), so a validator, policy or audit
    /// subscriber that spent the deadline never lets a handler start.
    pub(crate) fn apply(&self, answer: Answer, now_ms: u64) -> u8 {
        self.run_core(move |inv, host, audit| {
            // An out-of-turn answer ends the machine in Done(INTERNAL); the
            // returned kind (Done) and the outcome report it.
            let _ = inv.answer(answer);
            audit.advance(host, inv, now_ms)
        })
    }

    /// The store step this invocation waits on, detached, and its kind.
    pub(crate) fn store_op(&self, now_ms: u64) -> Option<(StoreOp, StepKind)> {
        let inv = self.lock();
        let kind = inv.step_kind();
        self.host.store_op(&inv, now_ms).map(|op| (op, kind))
    }

    /// Runs core code on the invocation, catching a panic (then `Done`,
    /// INTERNAL), and reports its kind as Swift reads it: DONE_OK_HOST for
    /// `Done` when Swift holds the output (`ffi::reported_kind`).
    pub(crate) fn run_core(
        &self,
        f: impl FnOnce(&mut Invocation, &BindingRegistry, &AuditRoute) -> StepKind,
    ) -> u8 {
        if self.panicked.load(Ordering::Relaxed) {
            return StepKind::Done.as_u8();
        }
        let mut inv = self.lock();
        let run = || f(&mut inv, &self.host, &self.audit);
        match catch_unwind(AssertUnwindSafe(run)).map(|kind| ffi::reported_kind(&inv, kind)) {
            Ok(kind) => kind,
            Err(_) => {
                self.panicked.store(true, Ordering::Relaxed);
                StepKind::Done.as_u8()
            }
        }
    }
}

#[uniffi::export]
impl FfiInvocation {
    /// A progress report of the handler, checked by the core
    /// (`pipeline::progress`: `done` increases, `done <= total`, a total is
    /// fixed once given). The accepted report, or `None` when it is dropped.
    /// Callable from the handler's task while the driver waits.
    pub fn report_progress(&self, done: u64, total: Option<u64>) -> Option<ProgressReport> {
        let mut checker = self.progress.lock().unwrap_or_else(|p| p.into_inner());
        checker.report(done, total).ok().map(|e| ProgressReport {
            done: e.done,
            total: e.total,
        })
    }

    /// The current step kind, as every kind this object returns
    /// (`run_core`).
    pub fn step_kind(&self) -> u8 {
        self.run_core(|inv, _, _| inv.step_kind())
    }

    /// The capability's registry index (on resume: once stage 7 ran).
    pub fn capability_index(&self) -> Option<u32> {
        self.lock().capability().map(|c| c.index)
    }

    /// `RunHandler`: the attempt (1-based).
    pub fn attempt(&self) -> u32 {
        self.lock().attempt()
    }

    /// `RunHandler`: the deadline in unix ms; arm a timer for it.
    pub fn deadline_at_ms(&self) -> u64 {
        self.lock().deadline_at_ms()
    }

    /// The time every hook of this call is bounded by (unix ms): a
    /// validator, output validator or redactor still running then is
    /// answered `DeadlinePassed` (`Invocation::call_deadline_ms`;
    /// 0 before the capability is resolved).
    pub fn call_deadline_ms(&self) -> u64 {
        self.lock().call_deadline_ms()
    }

    /// `Sleep`: how long to wait before the next attempt.
    pub fn sleep_ms(&self) -> u64 {
        self.lock().sleep_ms()
    }

    /// `EvaluatePolicy`: which host policy, and its time limit.
    pub fn policy_at(&self) -> Option<FfiPolicyAt> {
        let inv = self.lock();
        inv.policy_at().map(|(scope, index)| FfiPolicyAt {
            runtime: scope == PolicyScope::Runtime,
            index,
            timeout_ms: inv.policy_timeout_ms(),
        })
    }

    /// The current step's input when the core holds it as JSON (a resumed
    /// approval's stored input); `None` when Swift holds it.
    pub fn input_json(&self) -> Option<String> {
        ffi::step_json(&self.lock()).map(|v| v.to_string())
    }

    /// The frozen frame (on resume: the recorded surface and actor).
    pub fn frame(&self) -> FfiFrame {
        self.lock().frame().into()
    }

    /// `RedactOutput`: what the redactor is told.
    pub fn redaction_info(&self) -> FfiRedactionInfo {
        self.lock().redaction_info().into()
    }

    /// `AskRetryOn`: the error the host's `retryOn` is asked about.
    pub fn retry_error(&self) -> Option<FfiErrorInfo> {
        match self.lock().step() {
            Step::AskRetryOn { error } => Some(error.into()),
            _ => None,
        }
    }

    /// `Audit`: the record.
    pub fn audit_record(&self) -> Option<FfiAuditRecord> {
        match self.lock().step() {
            Step::Audit(record) => Some(record.into()),
            _ => None,
        }
    }

    /// How the invocation ended, once the step is `Done`, as one integer
    /// (`ffi::outcome_code`; the hot path reads no record): 0 ok with the
    /// output in Swift, 1 ok with the output held by the core
    /// (`outcome_output_json`), 2 approval required (`outcome_approval`),
    /// 3 error (`outcome_error`), 255 not finished.
    pub fn outcome_kind(&self) -> u8 {
        if self.panicked.load(Ordering::Relaxed) {
            return ffi::outcome_code::ERROR;
        }
        ffi::outcome_code(&self.lock())
    }

    /// `outcome_kind` 1: the output as JSON.
    pub fn outcome_output_json(&self) -> Option<String> {
        match self.lock().step() {
            Step::Done(Outcome::Ok(Payload::Json(v))) => Some(v.to_string()),
            _ => None,
        }
    }

    /// `outcome_kind` 2: the approval request, as stored.
    pub fn outcome_approval(&self) -> Option<FfiApprovalRequest> {
        match self.lock().step() {
            Step::Done(Outcome::ApprovalRequired(r)) => Some(FfiApprovalRequest::as_stored(r)),
            _ => None,
        }
    }

    /// `outcome_kind` 3: the error.
    pub fn outcome_error(&self) -> Option<FfiErrorInfo> {
        if self.panicked.load(Ordering::Relaxed) {
            return Some((&panic_error()).into());
        }
        match self.lock().step() {
            Step::Done(Outcome::Error(e)) => Some(e.into()),
            _ => None,
        }
    }
}
