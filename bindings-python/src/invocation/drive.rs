//! How an [`Invocation`] moves: it feeds an answer to the core's machine,
//! then performs the steps the host need not see (approval-store steps with
//! the GIL released, audit delivery, the deadline check before a handler)
//! until one is the host's. Also the eager fast path's answers
//! (`registry/fast.rs`), which read the clock only where the core needs it.

use std::sync::Arc;

use orpc_agent_core::ffi;
use orpc_agent_core::pipeline::progress::ProgressChecker;
use orpc_agent_core::pipeline::{Answer, StepKind};
use orpc_agent_core::{Invocation as CoreInvocation, Payload};
use pyo3::prelude::*;

use super::{DONE_OK, Invocation};
use crate::registry::Shared;

impl Invocation {
    #[inline(always)]
    pub(crate) fn new(shared: Arc<Shared>, inv: CoreInvocation, resumed: bool) -> Invocation {
        Invocation {
            shared,
            inv,
            resumed,
            progress: ProgressChecker::new(),
            waited: false,
        }
    }

    /// Performs store and audit steps until the host has work to do.
    pub(crate) fn first_step(&mut self, py: Python<'_>) -> PyResult<u8> {
        self.next(py)
    }

    /// Feeds `answer` (the host's, or one a store step made on the
    /// runtime), then performs store and audit steps until the host has
    /// work to do; returns that step's kind.
    pub(crate) fn feed(&mut self, py: Python<'_>, answer: Answer) -> PyResult<u8> {
        // An out-of-turn answer ends the machine in Done(INTERNAL); the
        // outcome carries the error, so nothing is lost by ignoring it here.
        let _ = self.inv.answer(answer);
        self.next(py)
    }

    pub(super) fn next(&mut self, py: Python<'_>) -> PyResult<u8> {
        loop {
            match self.inv.step_kind() {
                StepKind::PersistApproval | StepKind::ConsumeApproval => {
                    let now = self.shared.now_ms(py);
                    if cancel_requested(py)? {
                        // The calling task was asked to cancel: the core
                        // stores and consumes nothing for it (a repeated
                        // MCP call's approval stays for its next call).
                        self.inv.caller_cancelled(now);
                        continue;
                    }
                    let (host, inv) = (&self.shared.host, &mut self.inv);
                    let kind = py.detach(|| host.advance(inv, now));
                    if matches!(kind, StepKind::PersistApproval | StepKind::ConsumeApproval) {
                        // A store that waits (PostgreSQL): the host awaits
                        // `store_step` (src/postgres.rs).
                        return Ok(kind.as_u8());
                    }
                }
                StepKind::Audit => {
                    self.waited = true;
                    crate::audit::deliver(py, &self.shared, &self.inv);
                    let _ = self.inv.answer(Answer::Audited);
                }
                StepKind::Done => {
                    // Hot path: an ok outcome is reported by the kind alone
                    // (the host holds the output), saving a `finish` call.
                    let reported = ffi::reported_kind(&self.inv, StepKind::Done);
                    if reported == DONE_OK {
                        let _ = self.inv.take_outcome();
                    }
                    return Ok(reported);
                }
                StepKind::RunHandler if self.waited => {
                    // Time passed between steps (an async host policy, a slow
                    // audit subscriber): the machine is told the time, and
                    // ends the attempt itself if the deadline has passed.
                    self.inv.at(self.shared.now_ms(py));
                    if self.inv.step_kind() != StepKind::RunHandler {
                        continue;
                    }
                    return Ok(StepKind::RunHandler.as_u8());
                }
                kind => return Ok(kind.as_u8()),
            }
        }
    }

    pub(super) fn now(&self, py: Python<'_>) -> u64 {
        self.shared.now_ms(py)
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    pub(crate) fn core(&self) -> &CoreInvocation {
        &self.inv
    }

    // The answers of the eager fast path.

    pub(crate) fn input_valid(&mut self, py: Python<'_>) -> PyResult<u8> {
        // The validator ran in this thread for as long as it took: the
        // machine is told the time before a handler starts (SI-9; Node and
        // Swift send it with this answer).
        self.waited = true;
        self.feed(py, Answer::InputValid(Payload::Host))
    }

    /// The handler returned, at the registry's clock: the core judges a
    /// result at or after the deadline late (TIMEOUT).
    pub(crate) fn handler_ok(&mut self, py: Python<'_>) -> PyResult<u8> {
        let now_ms = self.now(py);
        let output = Payload::Host;
        self.feed(py, Answer::HandlerOk { output, now_ms })
    }

    pub(crate) fn output_valid(&mut self, py: Python<'_>) -> PyResult<u8> {
        self.feed(py, Answer::OutputValid(Payload::Host))
    }

    pub(crate) fn output_invalid(&mut self, py: Python<'_>) -> PyResult<u8> {
        self.feed(py, Answer::OutputInvalid(String::new()))
    }
}

/// Whether the calling task has been asked to cancel (`Task.cancelling`,
/// Python 3.11+: `_run_sync.cancel_requested`). Asked only before an
/// approval-store step, never on the hot path.
fn cancel_requested(py: Python<'_>) -> PyResult<bool> {
    py.import("orpc_agent._run_sync")?
        .getattr("cancel_requested")?
        .call0()?
        .is_truthy()
}
