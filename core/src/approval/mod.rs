//! Approval requests and the stores they wait in (DESIGN §5, SI-3, SI-7).
//!
//! An [`ApprovalRequest`] binds one capability to one full validated input
//! (through its input hash), records the surface and actor of the call that
//! asked for it, and is single-use and time-limited. Every rule about what
//! may happen to a request — who may decide it, when it expires, when it may
//! be consumed and why not — lives here, once, in [`check_decision`],
//! [`apply_decision`] and [`check_consume`]. A store only persists, and
//! makes the two state changes (decide, consume) atomic in its own medium:
//! a mutex for [`MemoryApprovalStore`], one conditional `UPDATE` for
//! [`SqliteApprovalStore`] (and, later, for a PostgreSQL store).
//!
//! The store trait is asynchronous and object-safe so that a store on an
//! async database client fits behind the same `&dyn ApprovalStore` as the
//! embedded ones.

mod memory;
#[cfg(feature = "postgres")]
pub mod postgres;
mod sqlite;

pub use memory::{MEMORY_RETENTION_MS, MEMORY_SWEEP_EVERY, MemoryApprovalStore};
#[cfg(feature = "postgres")]
pub use postgres::{
    PG_SCHEMA_VERSION, PgClock, PostgresApprovalStore, PostgresOptions, PostgresTls,
};
pub use sqlite::{SCHEMA_VERSION, SqliteApprovalStore, SqliteOptions};

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{CapabilityError, ErrorCode};
use crate::frame::Actor;
use crate::meta::Surface;

/// How many pending, unexpired requests one principal may have waiting at
/// once. Requests are created by agent calls, so without a bound a looping
/// agent could fill the store and bury real requests in an approver's
/// queue. The principal is the actor id; an actor without one is counted
/// by the surface and session of its call ([`ApprovalRequest::quota_key`]),
/// so one anonymous client cannot block every other.
pub const MAX_PENDING_PER_ACTOR: usize = 1000;

/// Page size of [`ListFilter`] when its `limit` is 0.
pub const DEFAULT_LIST_LIMIT: u32 = 100;

/// Largest page [`ApprovalStore::list`] returns; larger limits are clamped
/// so one call cannot read a whole store into memory.
pub const MAX_LIST_LIMIT: u32 = 1000;

/// Every approval id starts with this, so an id is recognisable in logs and
/// cannot be confused with a capability id or a cursor.
pub const ID_PREFIX: &str = "apr_";

/// A boxed, sendable future: what every [`ApprovalStore`] method returns, so
/// the trait stays object-safe without an async-trait macro.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The stored state of a request. "Expired" is not stored: it is derived
/// from `expires_at_ms` and the caller's clock by
/// [`ApprovalRequest::effective_status`], so no sweeper has to run for a
/// request to stop being usable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalStatus {
    Pending,
    Approved,
    Rejected,
    Consumed,
}

impl ApprovalStatus {
    pub const ALL: [ApprovalStatus; 4] = [
        ApprovalStatus::Pending,
        ApprovalStatus::Approved,
        ApprovalStatus::Rejected,
        ApprovalStatus::Consumed,
    ];

    /// The wire spelling, also the value stored by the SQL stores.
    pub const fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::Pending => "pending",
            ApprovalStatus::Approved => "approved",
            ApprovalStatus::Rejected => "rejected",
            ApprovalStatus::Consumed => "consumed",
        }
    }

    pub fn parse(s: &str) -> Option<ApprovalStatus> {
        ApprovalStatus::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

impl fmt::Display for ApprovalStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The status an approval UI or the pipeline should act on at a given
/// instant: the stored status, except that a pending or approved request
/// whose `expires_at_ms <= now` is `Expired`. Rejected and consumed
/// requests keep their status after expiry: how they ended matters more
/// than when.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EffectiveStatus {
    Pending,
    Approved,
    Rejected,
    Consumed,
    Expired,
}

impl EffectiveStatus {
    pub const ALL: [EffectiveStatus; 5] = [
        EffectiveStatus::Pending,
        EffectiveStatus::Approved,
        EffectiveStatus::Rejected,
        EffectiveStatus::Consumed,
        EffectiveStatus::Expired,
    ];

    pub fn parse(s: &str) -> Option<EffectiveStatus> {
        EffectiveStatus::ALL.into_iter().find(|e| e.as_str() == s)
    }

    /// The stored status a request with this effective status has (an
    /// expired one was pending or approved).
    pub const fn stored(self) -> &'static [ApprovalStatus] {
        match self {
            EffectiveStatus::Pending => &[ApprovalStatus::Pending],
            EffectiveStatus::Approved => &[ApprovalStatus::Approved],
            EffectiveStatus::Rejected => &[ApprovalStatus::Rejected],
            EffectiveStatus::Consumed => &[ApprovalStatus::Consumed],
            EffectiveStatus::Expired => &[ApprovalStatus::Pending, ApprovalStatus::Approved],
        }
    }

    /// How expiry narrows a filter on this status: pending and approved
    /// requests must still be live, expired ones past their expiry, and
    /// rejected or consumed ones keep their status whatever the time.
    pub const fn expiry(self) -> Option<bool> {
        match self {
            EffectiveStatus::Pending | EffectiveStatus::Approved => Some(false),
            EffectiveStatus::Expired => Some(true),
            EffectiveStatus::Rejected | EffectiveStatus::Consumed => None,
        }
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            EffectiveStatus::Pending => "pending",
            EffectiveStatus::Approved => "approved",
            EffectiveStatus::Rejected => "rejected",
            EffectiveStatus::Consumed => "consumed",
            EffectiveStatus::Expired => "expired",
        }
    }
}

/// An approver's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Approve,
    Reject,
}

impl Decision {
    /// `Approve` when `approve`, else `Reject`: the form bindings receive
    /// (`approve(id)` / `reject(id)` share one native entry).
    pub const fn approving(approve: bool) -> Decision {
        if approve {
            Decision::Approve
        } else {
            Decision::Reject
        }
    }

    /// The status a pending request moves to.
    pub const fn status(self) -> ApprovalStatus {
        match self {
            Decision::Approve => ApprovalStatus::Approved,
            Decision::Reject => ApprovalStatus::Rejected,
        }
    }
}

/// One gated invocation waiting for (or past) a human decision.
///
/// Field names on the wire follow DESIGN §5 (`type`, `createdAt`,
/// `expiresAt`); times are unix milliseconds. `None` fields are omitted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequest {
    /// `apr_` + 32 lowercase hex digits: 128 random bits, so ids cannot be
    /// guessed by someone who wants to decide or consume another's request.
    pub id: String,
    pub capability_id: String,
    /// Lowercase hex SHA-256 binding capability + full validated input
    /// (SI-7). Internal: the store keeps it and the core checks it on
    /// resume, but no view, outcome or record shows it — it is an unsalted
    /// hash of the full input, so a redacted field with few possible values
    /// (a PIN) could be recovered from it by hashing candidates (issue 15).
    /// A request read back from a view has it empty.
    #[serde(skip_serializing, default)]
    pub input_hash: String,
    /// The full validated input. Approval UIs show it only through the
    /// host's `redactApprovalInput`; the hash binds this, not the redacted view.
    pub input: Value,
    /// Surface of the call that asked; a resume runs on it (SI-3).
    pub surface: Surface,
    /// Actor of the call that asked; a resume runs as it (SI-3).
    pub actor: Actor,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub approval_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(rename = "createdAt")]
    pub created_at_ms: u64,
    #[serde(rename = "expiresAt")]
    pub expires_at_ms: u64,
    pub status: ApprovalStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    #[serde(rename = "decidedAt", default, skip_serializing_if = "Option::is_none")]
    pub decided_at_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_reason: Option<String>,
    /// The session of the call that asked (`Frame::session_id`): what
    /// tells apart the pending quotas of actors without an id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

impl ApprovalRequest {
    /// A new pending request with a fresh random id, expiring
    /// `expires_in_ms` after `now_ms` (saturating, so a huge expiry cannot
    /// wrap into the past).
    ///
    /// If the operating system cannot supply randomness, the id is left
    /// empty rather than made guessable; every store refuses to create a
    /// request without a well-formed id, so the failure surfaces as a typed
    /// [`StoreError::Invalid`] at `create` instead of a panic here.
    // The argument list is the shape the pipeline codes against; a builder
    // would only move the same nine values around.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        capability_id: impl Into<String>,
        input: Value,
        input_hash: impl Into<String>,
        surface: Surface,
        actor: Actor,
        approval_type: Option<String>,
        reason: Option<String>,
        now_ms: u64,
        expires_in_ms: u64,
    ) -> ApprovalRequest {
        ApprovalRequest {
            id: new_approval_id().unwrap_or_default(),
            capability_id: capability_id.into(),
            input_hash: input_hash.into(),
            input,
            surface,
            actor,
            approval_type,
            reason,
            created_at_ms: now_ms,
            expires_at_ms: now_ms.saturating_add(expires_in_ms),
            status: ApprovalStatus::Pending,
            decided_by: None,
            decided_at_ms: None,
            decision_reason: None,
            session_id: None,
        }
    }

    /// Whether `self`, a new request, repeats `earlier`: the same capability
    /// and input hash, made on the same surface by the same actor id — or,
    /// for actors without an id, by an identical actor in the same session —
    /// and `earlier` is pending or approved and unexpired at `self`'s
    /// creation time. (The rule of [`ApprovalStore::create_or_repeat`].)
    pub fn repeats(&self, earlier: &ApprovalRequest) -> bool {
        self.same_call(earlier)
            && matches!(
                earlier.status,
                ApprovalStatus::Pending | ApprovalStatus::Approved
            )
            && !earlier.is_expired(self.created_at_ms)
    }

    /// The call part of [`Self::repeats`], for a store that judges status
    /// and expiry itself (by its own clock): same principal, capability,
    /// input hash and surface.
    pub fn same_call(&self, earlier: &ApprovalRequest) -> bool {
        let same_principal = match (&self.actor.id, &earlier.actor.id) {
            (Some(a), Some(b)) => a == b,
            (None, None) => self.actor == earlier.actor && self.session_id == earlier.session_id,
            _ => false,
        };
        same_principal
            && self.capability_id == earlier.capability_id
            && self.input_hash == earlier.input_hash
            && self.surface == earlier.surface
    }

    /// The same request, made in `session_id`'s session.
    pub fn with_session_id(mut self, session_id: Option<String>) -> ApprovalRequest {
        self.session_id = session_id;
        self
    }

    /// The pending-quota bucket ([`MAX_PENDING_PER_ACTOR`]): `id:<actor id>`,
    /// or for an actor without an id `anon:<surface>:<session id>` (an
    /// empty session when the call had none: anonymous calls without a
    /// session on one surface share a bucket, as they cannot be told apart).
    pub fn quota_key(&self) -> String {
        match &self.actor.id {
            Some(id) => format!("id:{id}"),
            None => format!(
                "anon:{}:{}",
                self.surface.as_str(),
                self.session_id.as_deref().unwrap_or("")
            ),
        }
    }

    /// True when the request can no longer be decided or consumed for
    /// reasons of time: `expires_at_ms <= now_ms` (the boundary instant is
    /// already expired).
    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.expires_at_ms <= now_ms
    }

    /// The status to act on at `now_ms` (see [`EffectiveStatus`]).
    pub fn effective_status(&self, now_ms: u64) -> EffectiveStatus {
        match self.status {
            ApprovalStatus::Rejected => EffectiveStatus::Rejected,
            ApprovalStatus::Consumed => EffectiveStatus::Consumed,
            _ if self.is_expired(now_ms) => EffectiveStatus::Expired,
            ApprovalStatus::Pending => EffectiveStatus::Pending,
            ApprovalStatus::Approved => EffectiveStatus::Approved,
        }
    }

    /// The request as JSON, as stored: what an `approval_required` outcome
    /// shows in every binding (the status the core gave it when it
    /// persisted or found it). Its fields are text, integers and JSON, so
    /// the conversion cannot fail.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The request as JSON for an approval UI at `now_ms`: as stored, but
    /// with `status` the effective one (`expired` for a pending or approved
    /// request past its expiry), what get, list and decide show in every
    /// binding.
    pub fn to_json_at(&self, now_ms: u64) -> Value {
        let mut v = self.to_json();
        if let Some(status) = v.get_mut("status") {
            *status = Value::from(self.effective_status(now_ms).as_str());
        }
        v
    }

    /// Reads a request as get, list and decide show it ([`Self::to_json_at`])
    /// — for calls that take one back, like the approval-input view. An
    /// `expired` status reads as `pending`: expiry is
    /// judged again from `expires_at_ms` wherever it matters, and what such
    /// calls read (capability, surface, actor, input) is unaffected.
    pub fn from_view_json(mut v: Value) -> Result<ApprovalRequest, serde_json::Error> {
        if let Some(status) = v.get_mut("status") {
            if status.as_str() == Some(EffectiveStatus::Expired.as_str()) {
                *status = Value::from(ApprovalStatus::Pending.as_str());
            }
        }
        serde_json::from_value(v)
    }

    /// Requests as an approval UI sees them at `now_ms`: a JSON array of
    /// [`Self::to_json_at`].
    pub fn views_json(requests: &[ApprovalRequest], now_ms: u64) -> Value {
        Value::Array(requests.iter().map(|r| r.to_json_at(now_ms)).collect())
    }

    /// The actor id recorded at creation, if the actor was not anonymous.
    pub fn actor_id(&self) -> Option<&str> {
        self.actor.id.as_deref()
    }

    /// An opaque paging cursor positioned at this request, for
    /// [`ListFilter::after_id_or_cursor`]. Unlike the bare id it still
    /// works against a store that has since lost the row (see
    /// [`ListStart::After`]).
    pub fn cursor(&self) -> String {
        format!("{}:{}", self.created_at_ms, self.id)
    }
}

/// A fresh approval id: `apr_` + 32 lowercase hex digits from the OS
/// random source. `None` only if the OS cannot supply randomness.
pub fn new_approval_id() -> Option<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    let mut id = String::with_capacity(ID_PREFIX.len() + 32);
    id.push_str(ID_PREFIX);
    for b in bytes {
        id.push(hex_digit(b >> 4));
        id.push(hex_digit(b & 0x0f));
    }
    Some(id)
}

fn hex_digit(n: u8) -> char {
    char::from(b"0123456789abcdef"[usize::from(n & 0x0f)])
}

fn is_lower_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Whether `id` has the shape of an approval id (`apr_` + 32 lowercase hex).
pub fn is_valid_approval_id(id: &str) -> bool {
    id.strip_prefix(ID_PREFIX)
        .is_some_and(|rest| is_lower_hex(rest, 32))
}

/// Which requests [`ApprovalStore::list`] returns, one page at a time, in
/// creation order (`created_at_ms`, then the store's creation sequence).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListFilter {
    pub capability_id: Option<String>,
    pub actor_id: Option<String>,
    /// Only requests made on this surface. With `actor_id`, exactly the
    /// requests [`Requester::made_on`] calls that requester's, so a caller
    /// who may see only its own requests pages through them in the store
    /// (the gateway's list) instead of scanning others'.
    pub surface: Option<Surface>,
    /// Matches the status a request has at [`Self::now_ms`]
    /// ([`ApprovalRequest::effective_status`]): `Pending` lists only live
    /// pending requests, `Expired` the pending or approved ones past their
    /// expiry. (A store on a shared database judges expiry by its own
    /// clock, as it does when deciding and consuming.)
    pub status: Option<EffectiveStatus>,
    /// When expiry is judged for a status filter (unix ms). 0: nothing has
    /// expired yet.
    pub now_ms: u64,
    /// Page size; 0 means [`DEFAULT_LIST_LIMIT`], larger than
    /// [`MAX_LIST_LIMIT`] is clamped.
    pub limit: u32,
    /// Start after this request: either its id (looked up) or its
    /// [`ApprovalRequest::cursor`]. Passing the last item of a page gives
    /// the next page.
    pub after_id_or_cursor: Option<String>,
}

impl ListFilter {
    /// The page size actually used.
    pub fn effective_limit(&self) -> u32 {
        match self.limit {
            0 => DEFAULT_LIST_LIMIT,
            n => n.min(MAX_LIST_LIMIT),
        }
    }

    /// Whether `req` passes the capability, actor, surface and status
    /// filters (not the cursor). Stores that filter in memory use this; SQL
    /// stores express the same equalities in `WHERE`.
    pub fn matches(&self, req: &ApprovalRequest) -> bool {
        self.capability_id
            .as_deref()
            .is_none_or(|c| c == req.capability_id)
            && self
                .actor_id
                .as_deref()
                .is_none_or(|a| Some(a) == req.actor_id())
            && self.surface.is_none_or(|s| s == req.surface)
            && self
                .status
                .is_none_or(|s| s == req.effective_status(self.now_ms))
    }
}

/// Where a page starts, parsed from [`ListFilter::after_id_or_cursor`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListStart {
    /// From the first request.
    Beginning,
    /// After the request with this id; the store looks up its position.
    AfterId(String),
    /// After the request a cursor names: created at `created_at_ms`, with
    /// this id. The store looks up its place in the creation sequence; if
    /// the request is gone (swept), the page resumes at the first request
    /// of that millisecond, so nothing is skipped (some may show twice).
    After(u64, String),
}

impl ListStart {
    /// Parses the filter's cursor. An id has the `apr_` shape; a cursor is
    /// `"<created_at_ms>:<id>"`; anything else is a caller error.
    pub fn of(filter: &ListFilter) -> Result<ListStart, StoreError> {
        let Some(s) = filter.after_id_or_cursor.as_deref() else {
            return Ok(ListStart::Beginning);
        };
        if is_valid_approval_id(s) {
            return Ok(ListStart::AfterId(s.to_owned()));
        }
        if let Some((at, id)) = s.split_once(':') {
            if let (Ok(at), true) = (at.parse::<u64>(), is_valid_approval_id(id)) {
                return Ok(ListStart::After(at, id.to_owned()));
            }
        }
        Err(StoreError::BadCursor(
            "neither an approval id nor a cursor".into(),
        ))
    }
}

/// Why an atomic consume did not happen. Each maps to its own error code so
/// a caller can tell "ask again later" from "never".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum ConsumeRefusal {
    #[error("no approval request with that id")]
    NotFound,
    #[error("the approval request is still pending: nobody has approved it yet")]
    Pending,
    #[error("the approval request was rejected")]
    Rejected,
    #[error("the approval request expired")]
    Expired,
    #[error("the approval request was already used; approvals are single-use")]
    AlreadyConsumed,
}

impl ConsumeRefusal {
    pub const fn code(self) -> ErrorCode {
        match self {
            ConsumeRefusal::NotFound => ErrorCode::ApprovalNotFound,
            ConsumeRefusal::Pending => ErrorCode::ApprovalPending,
            ConsumeRefusal::Rejected => ErrorCode::ApprovalRejected,
            ConsumeRefusal::Expired => ErrorCode::ApprovalExpired,
            ConsumeRefusal::AlreadyConsumed => ErrorCode::ApprovalConsumed,
        }
    }

    /// The error a resume ends in. A pending request may still be approved,
    /// so only that refusal is retryable.
    pub fn to_capability_error(self) -> CapabilityError {
        CapabilityError::new(self.code(), self.to_string())
            .with_retryable(self == ConsumeRefusal::Pending)
    }
}

impl From<ConsumeRefusal> for CapabilityError {
    fn from(r: ConsumeRefusal) -> CapabilityError {
        r.to_capability_error()
    }
}

/// What kind of backend failure a store hit. Only `Busy` is worth retrying
/// as is; the others need an operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BackendErrorKind {
    /// Another connection holds the lock past the busy timeout.
    Busy,
    /// The database or its file system is read-only.
    ReadOnly,
    /// The database could not be opened (missing directory, permissions).
    CannotOpen,
    /// A disk I/O error, or the disk is full.
    Io,
    /// The file is not a database, or its pages are damaged.
    Corrupt,
    /// The schema is from a newer version of this library.
    Schema,
    /// Anything else the backend reported.
    Other,
}

impl BackendErrorKind {
    pub const fn as_str(self) -> &'static str {
        match self {
            BackendErrorKind::Busy => "busy",
            BackendErrorKind::ReadOnly => "read-only",
            BackendErrorKind::CannotOpen => "cannot-open",
            BackendErrorKind::Io => "io",
            BackendErrorKind::Corrupt => "corrupt",
            BackendErrorKind::Schema => "schema",
            BackendErrorKind::Other => "other",
        }
    }
}

impl fmt::Display for BackendErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a store operation failed. Refusals that follow from the request's
/// state (not found, already decided, expired, approver rules, limits) are
/// distinct from the backend itself failing, so a caller never mistakes a
/// locked database for a missing request.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    #[error("no approval request with id `{0}`")]
    NotFound(String),
    /// Only pending requests can be decided.
    #[error("approval request `{id}` is already {status}")]
    AlreadyDecided { id: String, status: ApprovalStatus },
    #[error("approval request `{id}` expired")]
    Expired { id: String },
    /// `approver_must_differ` is on and the approver is the actor.
    #[error("approval request `{id}` cannot be decided by the actor who asked for it")]
    ApproverIsActor { id: String },
    /// `approver_must_differ` is on and no approver identity was given, so
    /// the rule cannot be checked: refuse rather than assume.
    #[error("approval request `{id}` needs an approver identity")]
    ApproverRequired { id: String },
    #[error("too many pending approval requests for this actor (limit {limit})")]
    LimitExceeded { limit: usize },
    #[error("approval request `{0}` already exists")]
    Duplicate(String),
    /// The caller passed something no store accepts (malformed id, a new
    /// request that is not pending): a bug in the caller, not bad input.
    #[error("invalid approval store call: {0}")]
    Invalid(String),
    /// A list cursor that is malformed or names no request: the approval
    /// UI's input, so reported as `INVALID_INPUT`.
    #[error("invalid list cursor: {0}")]
    BadCursor(String),
    /// A decision's approver or reason no store may keep (too long, or a
    /// NUL character, which PostgreSQL's `text` refuses): the approval
    /// UI's input, `INVALID_INPUT`, checked before the decision is applied
    /// (after the request is read: an unknown id is still not found).
    #[error("invalid decision: {0}")]
    BadDecision(String),
    /// The backend failed; nothing about the request is known.
    #[error("approval store failure ({kind}): {message}")]
    Backend {
        kind: BackendErrorKind,
        message: String,
    },
    /// A stored row could not be read back as a request.
    #[error("stored approval request `{id}` is unreadable: {reason}")]
    Corrupt { id: String, reason: String },
}

impl StoreError {
    /// True when the backend failed, as opposed to a refusal about the request.
    pub fn is_backend(&self) -> bool {
        matches!(
            self,
            StoreError::Backend { .. } | StoreError::Corrupt { .. }
        )
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            StoreError::NotFound(_) => ErrorCode::ApprovalNotFound,
            StoreError::AlreadyDecided { status, .. } => match status {
                ApprovalStatus::Rejected => ErrorCode::ApprovalRejected,
                ApprovalStatus::Consumed => ErrorCode::ApprovalConsumed,
                ApprovalStatus::Approved => ErrorCode::ApprovalInvalid,
                ApprovalStatus::Pending => ErrorCode::Internal,
            },
            StoreError::Expired { .. } => ErrorCode::ApprovalExpired,
            StoreError::ApproverIsActor { .. } | StoreError::ApproverRequired { .. } => {
                ErrorCode::PolicyDenied
            }
            StoreError::LimitExceeded { .. } => ErrorCode::LimitExceeded,
            StoreError::BadCursor(_) | StoreError::BadDecision(_) => ErrorCode::InvalidInput,
            StoreError::Duplicate(_)
            | StoreError::Invalid(_)
            | StoreError::Backend { .. }
            | StoreError::Corrupt { .. } => ErrorCode::Internal,
        }
    }

    /// The error an approval call ends in. Backend messages (file paths,
    /// SQL) stay out of it; only the failure kind is shown, in `details`.
    pub fn to_capability_error(&self) -> CapabilityError {
        match self {
            StoreError::Backend { kind, .. } => {
                CapabilityError::new(ErrorCode::Internal, "the approval store is unavailable")
                    .with_retryable(*kind == BackendErrorKind::Busy)
                    .with_details(serde_json::json!({ "store": kind.as_str() }))
            }
            StoreError::Corrupt { .. } => CapabilityError::new(
                ErrorCode::Internal,
                "the approval store holds an unreadable request",
            ),
            StoreError::AlreadyDecided { status, .. } => {
                CapabilityError::new(self.code(), self.to_string())
                    .with_details(serde_json::json!({ "status": status.as_str() }))
            }
            _ => CapabilityError::new(self.code(), self.to_string()),
        }
    }
}

impl From<StoreError> for CapabilityError {
    fn from(e: StoreError) -> CapabilityError {
        e.to_capability_error()
    }
}

/// Checks that `req` may be stored as a new request: a well-formed id and
/// hash, pending and undecided. Every store calls it in `create`.
pub fn check_new(req: &ApprovalRequest) -> Result<(), StoreError> {
    if !is_valid_approval_id(&req.id) {
        return Err(StoreError::Invalid(
            "an approval id must be `apr_` followed by 32 lowercase hex digits".into(),
        ));
    }
    if req.capability_id.is_empty() {
        return Err(StoreError::Invalid("the capability id is empty".into()));
    }
    if !is_lower_hex(&req.input_hash, 64) {
        return Err(StoreError::Invalid(
            "the input hash must be 64 lowercase hex digits (SHA-256)".into(),
        ));
    }
    if req.status != ApprovalStatus::Pending
        || req.decided_by.is_some()
        || req.decided_at_ms.is_some()
        || req.decision_reason.is_some()
    {
        return Err(StoreError::Invalid(
            "a new approval request must be pending and undecided".into(),
        ));
    }
    Ok(())
}

/// The decide rules, shared by every store: only a pending, unexpired
/// request can be decided; with `approver_must_differ`, the approver must be
/// named and must not be the actor recorded at creation. An anonymous actor
/// cannot be the same person as a named approver, so it passes.
pub fn check_decision(
    req: &ApprovalRequest,
    approver: Option<&str>,
    now_ms: u64,
    approver_must_differ: bool,
) -> Result<(), StoreError> {
    match req.effective_status(now_ms) {
        EffectiveStatus::Pending => {}
        EffectiveStatus::Expired => return Err(StoreError::Expired { id: req.id.clone() }),
        _ => {
            return Err(StoreError::AlreadyDecided {
                id: req.id.clone(),
                status: req.status,
            });
        }
    }
    if approver_must_differ {
        match approver {
            // An empty (or blank) name names nobody: it cannot show the
            // approver differs from the actor.
            None => return Err(StoreError::ApproverRequired { id: req.id.clone() }),
            Some(a) if a.trim().is_empty() => {
                return Err(StoreError::ApproverRequired { id: req.id.clone() });
            }
            Some(a) if Some(a) == req.actor_id() => {
                return Err(StoreError::ApproverIsActor { id: req.id.clone() });
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Longest approver id a decision may name (UTF-8 bytes).
pub const MAX_APPROVER_BYTES: usize = 1024;
/// Longest reason a decision may carry (UTF-8 bytes): it is stored, and
/// read back with the request on every `get` and list page.
pub const MAX_DECISION_REASON_BYTES: usize = 4096;

/// What every store may keep of a decision, the same in each: an approver
/// and a reason within their lengths and without a NUL character.
fn check_decision_fields(approver: Option<&str>, reason: Option<&str>) -> Result<(), StoreError> {
    for (what, value, max) in [
        ("approver", approver, MAX_APPROVER_BYTES),
        ("reason", reason, MAX_DECISION_REASON_BYTES),
    ] {
        let Some(v) = value else { continue };
        if v.len() > max {
            return Err(StoreError::BadDecision(format!(
                "the {what} is longer than {max} bytes"
            )));
        }
        if v.contains('\0') {
            return Err(StoreError::BadDecision(format!(
                "the {what} contains a NUL character"
            )));
        }
    }
    Ok(())
}

/// [`check_decision`], then the decided request. Stores write exactly the
/// fields of the returned value (status and the three `decided*` fields),
/// guarded by "still pending and unexpired" so a concurrent decision loses.
pub fn apply_decision(
    req: &ApprovalRequest,
    decision: Decision,
    approver: Option<&str>,
    reason: Option<&str>,
    now_ms: u64,
    approver_must_differ: bool,
) -> Result<ApprovalRequest, StoreError> {
    check_decision_fields(approver, reason)?;
    // An empty approver names nobody (as an empty actor id, stage 3).
    let approver = crate::frame::named(approver);
    check_decision(req, approver, now_ms, approver_must_differ)?;
    let mut out = req.clone();
    out.status = decision.status();
    out.decided_by = approver.map(str::to_owned);
    out.decided_at_ms = Some(now_ms);
    out.decision_reason = reason.map(str::to_owned);
    Ok(out)
}

/// Whether `req` (as read, `None` if absent) can be consumed at `now_ms`,
/// and if not, why. SQL stores call it only after their atomic `UPDATE`
/// matched no row, to explain the refusal.
pub fn check_consume(req: Option<&ApprovalRequest>, now_ms: u64) -> Result<(), ConsumeRefusal> {
    let Some(req) = req else {
        return Err(ConsumeRefusal::NotFound);
    };
    match req.effective_status(now_ms) {
        EffectiveStatus::Approved => Ok(()),
        EffectiveStatus::Pending => Err(ConsumeRefusal::Pending),
        EffectiveStatus::Rejected => Err(ConsumeRefusal::Rejected),
        EffectiveStatus::Expired => Err(ConsumeRefusal::Expired),
        EffectiveStatus::Consumed => Err(ConsumeRefusal::AlreadyConsumed),
    }
}

/// Who may resume a request when the caller is not trusted to resume any:
/// only the actor who made it, on the surface it was made on (the agent
/// gateway's rule for remote callers) and, when the resume comes through
/// one capability's tool (MCP), only a request for that capability.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requester {
    pub surface: Surface,
    /// `None` only for a tool call whose actor has no id
    /// ([`Requester::for_tool`]); see [`Self::actor_without_id`].
    pub actor_id: Option<String>,
    /// The capability the resuming tool runs, when the resume comes
    /// through a tool call: a request for another one is not this caller's.
    pub capability_id: Option<String>,
    /// With no actor id: the whole actor (roles and attributes) the request
    /// must have been made by, so that one id-less caller (`{roles:
    /// ["guest"]}`) cannot run another's (`{roles: ["admin"]}`) request.
    pub actor_without_id: Option<Actor>,
    /// With no actor id: the session the request must have been made in
    /// (two anonymous callers on two sessions are two callers, as for a
    /// repeated call: [`ApprovalRequest::repeats`]).
    pub session_without_id: Option<String>,
}

impl Requester {
    /// The requester a caller is, if it can be one: an actor without an id
    /// made no request it could be matched to.
    pub fn of(surface: Surface, actor_id: Option<&str>) -> Option<Requester> {
        // An empty id names nobody (stage 3's rule), so it is no requester.
        crate::frame::named(actor_id).map(|id| Requester {
            surface,
            actor_id: Some(id.to_owned()),
            capability_id: None,
            actor_without_id: None,
            session_without_id: None,
        })
    }

    /// The requester a tool call is (MCP: a client resumes by calling the
    /// tool again with the request id): the request must be for the tool's
    /// `capability_id`, made on `surface` by the same actor id — or, when
    /// the caller's actor has no id (a server that names no actor), by an
    /// identical actor with no id in the same session (`session_id`).
    pub fn for_tool(
        surface: Surface,
        actor: &Actor,
        session_id: Option<&str>,
        capability_id: &str,
    ) -> Requester {
        let anonymous = actor.id.is_none();
        Requester {
            surface,
            actor_id: actor.id.clone(),
            capability_id: Some(capability_id.to_owned()),
            actor_without_id: anonymous.then(|| actor.clone()),
            session_without_id: if anonymous {
                session_id.map(str::to_owned)
            } else {
                None
            },
        }
    }

    /// Whether `request` was made by this requester.
    pub fn made(&self, request: &ApprovalRequest) -> bool {
        self.made_on(request.surface, request.actor.id.as_deref())
            && self
                .capability_id
                .as_deref()
                .is_none_or(|id| id == request.capability_id)
            && self.actor_without_id.as_ref().is_none_or(|actor| {
                *actor == request.actor && self.session_without_id == request.session_id
            })
    }

    /// Whether a request made on `surface` by the actor `actor_id` is this
    /// requester's: the same surface and the same actor id. The one rule for
    /// "own request", used by resume ([`ApprovalStore::consume_for`]) and
    /// by what a gateway caller may read.
    pub fn made_on(&self, surface: Surface, actor_id: Option<&str>) -> bool {
        surface == self.surface && actor_id == self.actor_id.as_deref()
    }
}

/// What [`ApprovalStore::create_or_repeat`] did.
#[derive(Clone, Debug, PartialEq)]
pub enum Created {
    /// The request was stored.
    New,
    /// The caller already waits on this request (pending): nothing stored.
    Pending(ApprovalRequest),
    /// The caller's earlier request for this call is approved: nothing
    /// stored; consume it and run.
    Approved(ApprovalRequest),
}

impl Created {
    /// Of several earlier requests a new one repeats, the one a repeat
    /// gets: the first approved one, else the first pending one (in the
    /// order given, creation order), else none.
    pub fn pick(candidates: impl IntoIterator<Item = ApprovalRequest>) -> Created {
        let mut pending = None;
        for r in candidates {
            match r.status {
                ApprovalStatus::Approved => return Created::Approved(r),
                ApprovalStatus::Pending if pending.is_none() => pending = Some(r),
                _ => {}
            }
        }
        pending.map_or(Created::New, Created::Pending)
    }
}

/// Where approval requests live between the gated call and its resume.
///
/// Implementations persist and make `decide` and `consume` atomic; the
/// rules come from [`check_new`], [`apply_decision`] and [`check_consume`].
/// Times are passed in (`now_ms`) rather than read from a clock so the
/// pipeline, tests and vectors control them; a store on a shared database
/// may use the database's clock instead (issue 8).
pub trait ApprovalStore: Send + Sync {
    /// Stores a new pending request. Fails with `LimitExceeded` when the
    /// actor already has the maximum of pending, unexpired requests, and
    /// with `Duplicate` when the id exists.
    fn create<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Result<(), StoreError>>;

    /// The request with this id, as stored.
    fn get<'a>(&'a self, id: &'a str)
    -> BoxFuture<'a, Result<Option<ApprovalRequest>, StoreError>>;

    /// One page of requests matching `filter`, in creation order: by
    /// `created_at_ms`, then by the store's creation sequence, so requests
    /// created in the same millisecond keep the order they were created in.
    fn list<'a>(
        &'a self,
        filter: &'a ListFilter,
    ) -> BoxFuture<'a, Result<Vec<ApprovalRequest>, StoreError>>;

    /// Approves or rejects a pending, unexpired request, atomically: of two
    /// concurrent decisions exactly one wins and the other gets
    /// `AlreadyDecided`. `approver_must_differ` is the registry option of
    /// the same name, passed per call so a store carries no governance
    /// configuration of its own.
    fn decide<'a>(
        &'a self,
        id: &'a str,
        decision: Decision,
        approver: Option<&'a str>,
        reason: Option<&'a str>,
        now_ms: u64,
        approver_must_differ: bool,
    ) -> BoxFuture<'a, Result<ApprovalRequest, StoreError>>;

    /// Marks an approved, unexpired request consumed in one atomic step and
    /// returns it; of any number of concurrent calls at most one succeeds.
    /// The outer error is a backend failure; the inner one says why this
    /// request cannot be used.
    fn consume<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Result<ApprovalRequest, ConsumeRefusal>, StoreError>>;

    /// [`Self::consume`], for a caller that may only resume its own
    /// requests: a request `requester` did not make is `NotFound` (nothing
    /// about it leaks) and stays unconsumed. The request is read first; its
    /// surface and actor never change once it is stored, so only the
    /// consume itself needs to be atomic.
    fn consume_for<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
        requester: Option<&'a Requester>,
    ) -> BoxFuture<'a, Result<Result<ApprovalRequest, ConsumeRefusal>, StoreError>> {
        Box::pin(async move {
            if let Some(who) = requester {
                match self.get(id).await? {
                    Some(request) if who.made(&request) => {}
                    _ => return Ok(Err(ConsumeRefusal::NotFound)),
                }
            }
            self.consume(id, now_ms).await
        })
    }

    /// [`Self::create`] for a call that may repeat an earlier one (issue 18:
    /// an MCP client that calls the tool again after an approval, or while
    /// it waits for one): when the same principal already has a request for
    /// the same capability and input hash, made on the same surface, that
    /// is pending or approved and unexpired at the request's creation time
    /// ([`ApprovalRequest::repeats`]), that request is returned and
    /// nothing is stored; otherwise `request` is created. An approved one
    /// is preferred over a pending one. A store that cannot look requests
    /// up keeps the default: always a new request.
    fn create_or_repeat<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> BoxFuture<'a, Result<Created, StoreError>> {
        Box::pin(async move { self.create(request).await.map(|()| Created::New) })
    }

    /// Whether this store's operations wait on I/O (a network database),
    /// so they must run to completion on an async runtime. Such a future
    /// must never be polled once and dropped: the statement may already be
    /// on its way (a consume would be spent with no caller told).
    /// [`crate::ffi::BindingRegistry`] hands these stores' steps back to the
    /// binding instead of trying them synchronously. The embedded stores
    /// complete on the first poll and keep the default.
    fn waits(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod requester_tests {
    use super::*;

    #[test]
    fn a_request_is_the_requesters_only_on_the_same_surface_and_actor_id() {
        let alice = Requester {
            surface: Surface::AiSdk,
            actor_id: Some("alice".into()),
            capability_id: None,
            actor_without_id: None,
            session_without_id: None,
        };
        assert_eq!(
            Requester::of(Surface::AiSdk, Some("alice")),
            Some(alice.clone())
        );
        assert!(alice.made_on(Surface::AiSdk, Some("alice")));
        assert!(
            !alice.made_on(Surface::Mcp, Some("alice")),
            "another surface"
        );
        assert!(!alice.made_on(Surface::AiSdk, Some("bob")), "another actor");
        assert!(!alice.made_on(Surface::AiSdk, None), "an anonymous request");
        assert!(
            !alice.made_on(Surface::AiSdk, Some("Alice")),
            "ids compare exactly"
        );
        assert_eq!(
            Requester::of(Surface::AiSdk, None),
            None,
            "no id, no requester"
        );
        // A tool call with no actor matches only anonymous requests.
        let anonymous = Requester::for_tool(Surface::Mcp, &Actor::default(), None, "orders.refund");
        assert!(anonymous.made_on(Surface::Mcp, None));
        assert!(!anonymous.made_on(Surface::Mcp, Some("alice")));
        assert!(!anonymous.made_on(Surface::AiSdk, None));
        // Without an id, the whole actor must match.
        let guest = Actor {
            roles: vec!["guest".into()],
            ..Actor::default()
        };
        let admin = Actor {
            roles: vec!["admin".into()],
            ..Actor::default()
        };
        let as_guest = Requester::for_tool(Surface::Mcp, &guest, Some("s1"), "orders.refund");
        assert_eq!(as_guest.actor_without_id.as_ref(), Some(&guest));
        assert_ne!(as_guest.actor_without_id.as_ref(), Some(&admin));
        // ... and the session: two anonymous callers on two sessions are two callers.
        assert_eq!(as_guest.session_without_id.as_deref(), Some("s1"));
        let with_id = Requester::for_tool(
            Surface::Mcp,
            &Actor {
                id: Some("a".into()),
                ..guest
            },
            Some("s1"),
            "x",
        );
        assert_eq!(with_id.actor_without_id, None, "an id is matched by id");
        assert_eq!(with_id.session_without_id, None, "in any session");
    }
}
