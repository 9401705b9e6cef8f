//! The in-memory store: for tests, examples and single-process hosts that
//! accept losing pending approvals on restart. One mutex makes every
//! operation atomic; nothing awaits while it is held.
//!
//! Retention: a finished request (consumed, rejected, expired) is kept for
//! [`MEMORY_RETENTION_MS`] after it could last have been used — its expiry or its
//! decision, whichever is later — so a replay in that window is told
//! APPROVAL_CONSUMED (or REJECTED/EXPIRED); after it, the request is
//! dropped and a replay is APPROVAL_NOT_FOUND — never a second run. The
//! sweep runs every [`MEMORY_SWEEP_EVERY`] creations, so memory stays bounded by
//! the rate of requests, not the process's lifetime.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::{
    ApprovalRequest, ApprovalStatus, ApprovalStore, BoxFuture, ConsumeRefusal, Created, Decision,
    EffectiveStatus, ListFilter, ListStart, MAX_PENDING_PER_ACTOR, StoreError, apply_decision,
    check_consume, check_new,
};

/// How long a finished request is kept (24 hours), see the module doc.
pub const MEMORY_RETENTION_MS: u64 = 24 * 60 * 60 * 1000;
/// Creations between two retention sweeps.
pub const MEMORY_SWEEP_EVERY: usize = 1024;

/// Approval requests in a `HashMap` behind a mutex.
#[derive(Debug)]
pub struct MemoryApprovalStore {
    state: Mutex<State>,
    max_pending_per_actor: usize,
    retention_ms: u64,
}

#[derive(Debug, Default)]
struct State {
    requests: HashMap<String, ApprovalRequest>,
    /// Pending requests per quota key (`ApprovalRequest::quota_key`), ordered by
    /// `(expires_at_ms, id)`, so the pending limit counts only the unexpired
    /// ones without scanning every request: `create` stays cheap however
    /// many decided requests the store holds.
    pending: HashMap<String, BTreeSet<(u64, String)>>,
    /// Each request's creation sequence number, so requests created in the
    /// same millisecond list in the order they were created.
    seq: HashMap<String, u64>,
    /// The sequence number the next creation gets.
    next_seq: u64,
    /// Creations since the last retention sweep.
    created_since_sweep: usize,
}

impl State {
    /// Drops the requests finished more than `retention_ms` before `now_ms`.
    fn sweep(&mut self, now_ms: u64, retention_ms: u64) {
        self.created_since_sweep = 0;
        // Ids only: a request (its input up to the size limit) is not copied
        // to be dropped.
        let gone: Vec<String> = self
            .requests
            .values()
            .filter(|r| {
                let finished = matches!(
                    r.effective_status(now_ms),
                    EffectiveStatus::Consumed
                        | EffectiveStatus::Rejected
                        | EffectiveStatus::Expired
                );
                let last_use = r.expires_at_ms.max(r.decided_at_ms.unwrap_or(0));
                finished && last_use.saturating_add(retention_ms) <= now_ms
            })
            .map(|r| r.id.clone())
            .collect();
        for id in gone {
            if let Some(r) = self.requests.remove(&id) {
                self.seq.remove(&id);
                self.unpend(&r);
            }
        }
    }

    fn unpend(&mut self, req: &ApprovalRequest) {
        let key = req.quota_key();
        if let Some(set) = self.pending.get_mut(&key) {
            set.remove(&(req.expires_at_ms, req.id.clone()));
            if set.is_empty() {
                self.pending.remove(&key);
            }
        }
    }
}

impl Default for MemoryApprovalStore {
    fn default() -> Self {
        MemoryApprovalStore::new()
    }
}

impl MemoryApprovalStore {
    /// An empty store with the default [`MAX_PENDING_PER_ACTOR`].
    pub fn new() -> MemoryApprovalStore {
        MemoryApprovalStore {
            state: Mutex::new(State::default()),
            max_pending_per_actor: MAX_PENDING_PER_ACTOR,
            retention_ms: MEMORY_RETENTION_MS,
        }
    }

    /// Changes how long finished requests are kept (tests use a short one).
    pub fn with_retention_ms(mut self, retention_ms: u64) -> MemoryApprovalStore {
        self.retention_ms = retention_ms;
        self
    }

    /// How many requests the store holds, finished ones included.
    pub fn len(&self) -> usize {
        self.lock().requests.len()
    }

    /// Whether the store holds no request.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Changes the per-actor pending limit (tests use a small one).
    pub fn with_max_pending_per_actor(mut self, limit: usize) -> MemoryApprovalStore {
        self.max_pending_per_actor = limit;
        self
    }

    /// Every operation leaves the map consistent before it could panic, so
    /// a poisoned lock still guards valid data: take it rather than fail.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn create_now(&self, req: &ApprovalRequest) -> Result<(), StoreError> {
        check_new(req)?;
        let mut state = self.lock();
        self.create_locked(&mut state, req)
    }

    /// A repeat (see `ApprovalStore::create_or_repeat`) looks the earlier
    /// request up and stores the new one under one lock. The scan is over
    /// the requests of the store (this store is for tests and one process).
    fn create_or_repeat_now(&self, req: &ApprovalRequest) -> Result<Created, StoreError> {
        check_new(req)?;
        let mut state = self.lock();
        let mut earlier: Vec<(u64, &ApprovalRequest)> = state
            .requests
            .values()
            .filter(|r| req.repeats(r))
            .map(|r| (state.seq.get(&r.id).copied().unwrap_or(0), r))
            .collect();
        earlier.sort_by_key(|(seq, _)| *seq);
        match Created::pick(earlier.into_iter().map(|(_, r)| r.clone())) {
            Created::New => self.create_locked(&mut state, req).map(|()| Created::New),
            found => Ok(found),
        }
    }

    fn create_locked(&self, state: &mut State, req: &ApprovalRequest) -> Result<(), StoreError> {
        if state.requests.contains_key(&req.id) {
            return Err(StoreError::Duplicate(req.id.clone()));
        }
        let actor = req.quota_key();
        // Unexpired at creation time: expires_at_ms > created_at_ms.
        let live = state.pending.get(&actor).map_or(0, |set| {
            set.range((req.created_at_ms.saturating_add(1), String::new())..)
                .take(self.max_pending_per_actor)
                .count()
        });
        if live >= self.max_pending_per_actor {
            return Err(StoreError::LimitExceeded {
                limit: self.max_pending_per_actor,
            });
        }
        state
            .pending
            .entry(actor)
            .or_default()
            .insert((req.expires_at_ms, req.id.clone()));
        state.requests.insert(req.id.clone(), req.clone());
        let seq = state.next_seq;
        state.next_seq += 1;
        state.seq.insert(req.id.clone(), seq);
        state.created_since_sweep += 1;
        if state.created_since_sweep >= MEMORY_SWEEP_EVERY {
            state.sweep(req.created_at_ms, self.retention_ms);
        }
        Ok(())
    }

    fn list_now(&self, filter: &ListFilter) -> Result<Vec<ApprovalRequest>, StoreError> {
        let state = self.lock();
        let map = &state.requests;
        // A request's place in the list: creation time, then creation
        // sequence (a total order: requests of one millisecond keep the
        // order they were created in).
        let position = |r: &ApprovalRequest| (r.created_at_ms, state.seq.get(&r.id).copied());
        let after = match ListStart::of(filter)? {
            ListStart::Beginning => None,
            // A cursor whose request has been swept resumes at its
            // millisecond: nothing is skipped (`None` sorts first).
            ListStart::After(at, id) => Some((at, state.seq.get(&id).copied())),
            ListStart::AfterId(id) => match map.get(&id) {
                Some(r) => Some(position(r)),
                None => return Err(StoreError::BadCursor(format!("no request `{id}`"))),
            },
        };
        let mut page: Vec<&ApprovalRequest> = map
            .values()
            .filter(|r| filter.matches(r))
            .filter(|r| after.is_none_or(|start| position(r) > start))
            .collect();
        page.sort_by_key(|r| position(r));
        let limit = usize::try_from(filter.effective_limit()).unwrap_or(usize::MAX);
        Ok(page.into_iter().take(limit).cloned().collect())
    }
}

impl ApprovalStore for MemoryApprovalStore {
    fn create<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move { self.create_now(request) })
    }

    fn create_or_repeat<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> BoxFuture<'a, Result<Created, StoreError>> {
        Box::pin(async move { self.create_or_repeat_now(request) })
    }

    fn get<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<ApprovalRequest>, StoreError>> {
        Box::pin(async move { Ok(self.lock().requests.get(id).cloned()) })
    }

    fn list<'a>(
        &'a self,
        filter: &'a ListFilter,
    ) -> BoxFuture<'a, Result<Vec<ApprovalRequest>, StoreError>> {
        Box::pin(async move { self.list_now(filter) })
    }

    fn decide<'a>(
        &'a self,
        id: &'a str,
        decision: Decision,
        approver: Option<&'a str>,
        reason: Option<&'a str>,
        now_ms: u64,
        approver_must_differ: bool,
    ) -> BoxFuture<'a, Result<ApprovalRequest, StoreError>> {
        Box::pin(async move {
            let mut state = self.lock();
            let Some(slot) = state.requests.get_mut(id) else {
                return Err(StoreError::NotFound(id.to_owned()));
            };
            let decided = apply_decision(
                slot,
                decision,
                approver,
                reason,
                now_ms,
                approver_must_differ,
            )?;
            *slot = decided.clone();
            state.unpend(&decided);
            Ok(decided)
        })
    }

    fn consume<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Result<ApprovalRequest, ConsumeRefusal>, StoreError>> {
        Box::pin(async move {
            let mut state = self.lock();
            let slot = state.requests.get_mut(id);
            if let Err(refusal) = check_consume(slot.as_deref(), now_ms) {
                return Ok(Err(refusal));
            }
            match slot {
                Some(req) => {
                    req.status = ApprovalStatus::Consumed;
                    Ok(Ok(req.clone()))
                }
                None => Ok(Err(ConsumeRefusal::NotFound)),
            }
        })
    }
}
