//! The SQLite store: the embedded default. Requests survive a restart and
//! several processes may share one file.
//!
//! Each operation is one short statement on one connection behind a mutex;
//! the futures do this blocking work when polled, which is acceptable for a
//! local file and keeps the store usable from any executor. The two state
//! changes are single conditional statements, so they are atomic across
//! connections and processes, not only across threads:
//!
//! - consume: `UPDATE … SET status = 'consumed' WHERE id = ? AND status =
//!   'approved' AND expires_at_ms > ? RETURNING …`; only when it matches no
//!   row is the row read, to say why.
//! - decide: the rules run on a read copy ([`apply_decision`]), then
//!   `UPDATE … WHERE id = ? AND status = 'pending' AND expires_at_ms > ?`
//!   writes the decision; a concurrent decision makes it match nothing, and
//!   a re-read reports what won.
//! - create: `INSERT … SELECT … WHERE (pending count for the actor) < limit`,
//!   so the per-actor limit cannot be overrun by concurrent creators.

use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, ErrorCode as SqliteCode, OptionalExtension, Row, TransactionBehavior};

use super::{
    ApprovalRequest, ApprovalStatus, ApprovalStore, BackendErrorKind, BoxFuture, ConsumeRefusal,
    Created, Decision, ListFilter, ListStart, MAX_PENDING_PER_ACTOR, StoreError, apply_decision,
    check_consume, check_decision, check_new,
};
use crate::frame::Actor;
use crate::meta::Surface;

/// The schema version this library writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Migrations by version: entry `k` takes the schema from version `k` to
/// `k + 1`. Never edit a shipped entry; append a new one.
const MIGRATIONS: &[&str] = &[
    // 1: the approvals table. `actor` is the recorded actor as JSON;
    // `actor_id` repeats its id for filters and the pending limit.
    // `consumed_at_ms` is kept for operators (who used what, when).
    "CREATE TABLE approvals (
        id              TEXT PRIMARY KEY NOT NULL,
        capability_id   TEXT NOT NULL,
        input_hash      TEXT NOT NULL,
        input           TEXT NOT NULL,
        surface         TEXT NOT NULL,
        actor           TEXT NOT NULL,
        actor_id        TEXT,
        approval_type   TEXT,
        reason          TEXT,
        created_at_ms   INTEGER NOT NULL,
        expires_at_ms   INTEGER NOT NULL,
        status          TEXT NOT NULL
            CHECK (status IN ('pending', 'approved', 'rejected', 'consumed')),
        decided_by      TEXT,
        decided_at_ms   INTEGER,
        decision_reason TEXT,
        consumed_at_ms  INTEGER
    ) STRICT;
    CREATE INDEX approvals_by_created ON approvals (created_at_ms, id);
    CREATE INDEX approvals_by_actor_pending ON approvals (actor_id, status, expires_at_ms);",
    // 2: a creation sequence, so requests created in the same millisecond
    // list in the order they were created (a random id broke such ties
    // before). Existing rows are numbered in their old (created_at_ms, id)
    // order; `create` numbers new rows MAX(seq) + 1 inside its INSERT,
    // which SQLite's single writer makes atomic across processes.
    "ALTER TABLE approvals ADD COLUMN seq INTEGER;
    UPDATE approvals SET seq = numbered.n FROM (
        SELECT id, row_number() OVER (ORDER BY created_at_ms, id) AS n FROM approvals
    ) AS numbered WHERE approvals.id = numbered.id;
    CREATE UNIQUE INDEX approvals_by_seq ON approvals (seq);
    DROP INDEX approvals_by_created;
    CREATE INDEX approvals_by_created ON approvals (created_at_ms, seq);",
    // 3: the session of the call that asked, which tells apart the pending
    // quotas of actors without an id (one anonymous client blocked every
    // other: issue 15). Existing rows have none.
    "ALTER TABLE approvals ADD COLUMN session_id TEXT;
    CREATE INDEX approvals_by_anonymous_pending ON approvals
        (surface, session_id, status, expires_at_ms) WHERE actor_id IS NULL;",
    // 4: a repeated call finds its earlier request (issue 18): by
    // capability and input hash.
    "CREATE INDEX approvals_by_call ON approvals (capability_id, input_hash);",
];

const COLUMNS: &str = "id, capability_id, input_hash, input, surface, actor, approval_type, \
     reason, created_at_ms, expires_at_ms, status, decided_by, decided_at_ms, decision_reason, \
     session_id";

/// Settings of [`SqliteApprovalStore::open_with`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqliteOptions {
    /// How long a statement waits for another connection's lock before
    /// failing with [`BackendErrorKind::Busy`].
    pub busy_timeout: Duration,
    /// See [`MAX_PENDING_PER_ACTOR`].
    pub max_pending_per_actor: usize,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            busy_timeout: Duration::from_secs(5),
            max_pending_per_actor: MAX_PENDING_PER_ACTOR,
        }
    }
}

/// Approval requests in one SQLite file (rollback journal: see
/// [`SqliteApprovalStore::open_with`]).
#[derive(Debug)]
pub struct SqliteApprovalStore {
    conn: Mutex<Connection>,
    max_pending_per_actor: usize,
}

impl SqliteApprovalStore {
    /// Opens (creating if needed) the store at `path` with default options.
    /// `path` may also be a `file:` URI, e.g. `file:approvals.db?mode=ro`
    /// for a read-only view.
    pub fn open(path: impl AsRef<Path>) -> Result<SqliteApprovalStore, StoreError> {
        SqliteApprovalStore::open_with(path, SqliteOptions::default())
    }

    /// Opens the store, sets the rollback journal, the busy timeout and full
    /// synchronisation (a consumed approval must stay consumed after a power
    /// loss, or its handler could run twice), and applies migrations.
    ///
    /// Not WAL: a WAL database shares its index through a memory-mapped
    /// `-shm` file, and a process whose mapping loses its backing (the file
    /// truncated or unwritable under it) dies of SIGBUS — a crash, not a
    /// typed error. A rollback journal maps nothing: every fault is an
    /// error SQLite returns. Writes here are rare and small (one per
    /// request, decision and resume), so WAL's concurrent readers buy
    /// little. A database left in WAL by an older version is switched when
    /// this is the only connection; while another process still holds it in
    /// WAL it stays so.
    pub fn open_with(
        path: impl AsRef<Path>,
        options: SqliteOptions,
    ) -> Result<SqliteApprovalStore, StoreError> {
        let mut conn = Connection::open(path).map_err(backend)?;
        conn.busy_timeout(options.busy_timeout).map_err(backend)?;
        // A read-only connection cannot switch the journal mode, nor can a
        // connection while another holds the database in WAL: both still
        // work as the database is, so keep going.
        match conn
            .pragma_update_and_check(None, "journal_mode", "DELETE", |r| r.get::<_, String>(0))
        {
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.sqlite_error_code(),
                    Some(SqliteCode::ReadOnly | SqliteCode::DatabaseBusy)
                ) => {}
            Err(e) => return Err(backend(e)),
        }
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(backend)?;
        migrate(&mut conn)?;
        Ok(SqliteApprovalStore {
            conn: Mutex::new(conn),
            max_pending_per_actor: options.max_pending_per_actor,
        })
    }

    /// A connection left mid-statement by a panic is still a valid SQLite
    /// connection (the statement rolled back), so a poisoned lock is taken.
    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn get_now(conn: &Connection, id: &str) -> Result<Option<ApprovalRequest>, StoreError> {
        let raw = conn
            .prepare_cached(&format!("SELECT {COLUMNS} FROM approvals WHERE id = ?1"))
            .and_then(|mut st| st.query_row([id], RawRow::read).optional())
            .map_err(backend)?;
        raw.map(RawRow::into_request).transpose()
    }

    /// Where the request with this id stands in the list order:
    /// `(created_at_ms, seq)`.
    fn position(conn: &Connection, id: &str) -> Result<Option<(i64, i64)>, StoreError> {
        conn.prepare_cached("SELECT created_at_ms, seq FROM approvals WHERE id = ?1")
            .and_then(|mut st| {
                st.query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()
            })
            .map_err(backend)
    }

    fn create_now(&self, req: &ApprovalRequest) -> Result<(), StoreError> {
        check_new(req)?;
        let conn = self.lock();
        self.insert(&conn, req)
    }

    /// See `ApprovalStore::create_or_repeat`: the look-up and the insert in
    /// one IMMEDIATE transaction (SQLite's one writer), so two processes
    /// repeating the same call cannot both miss the earlier request.
    fn create_or_repeat_now(&self, req: &ApprovalRequest) -> Result<Created, StoreError> {
        check_new(req)?;
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(backend)?;
        let earlier = {
            // The caller first (its actor id, or for an actor without one
            // its session), then the bound: other callers' requests for the
            // same input never crowd the caller's own out of the rows read.
            let (principal, who) = match req.actor_id() {
                Some(id) => ("actor_id = ?5", Some(id)),
                None => (
                    "actor_id IS NULL AND session_id IS ?5",
                    req.session_id.as_deref(),
                ),
            };
            let mut st = tx
                .prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM approvals WHERE capability_id = ?1 AND input_hash = ?2 \
                     AND surface = ?3 AND status IN ('pending', 'approved') AND expires_at_ms > ?4 \
                     AND {principal} ORDER BY seq LIMIT 64"
                ))
                .map_err(backend)?;
            let rows = st
                .query_map(
                    rusqlite::params![
                        req.capability_id,
                        req.input_hash,
                        req.surface.as_str(),
                        ms(req.created_at_ms),
                        who
                    ],
                    RawRow::read,
                )
                .map_err(backend)?;
            let mut earlier = Vec::new();
            for row in rows {
                let r = row.map_err(backend)?.into_request()?;
                if req.repeats(&r) {
                    earlier.push(r);
                }
            }
            earlier
        };
        let created = match Created::pick(earlier) {
            Created::New => {
                self.insert(&tx, req)?;
                Created::New
            }
            found => found,
        };
        // The commit is where a full disk shows: stepped and checked.
        tx.commit().map_err(backend)?;
        Ok(created)
    }

    fn insert(&self, conn: &Connection, req: &ApprovalRequest) -> Result<(), StoreError> {
        let input = json_text(&req.input)?;
        let actor = serde_json::to_string(&req.actor)
            .map_err(|e| StoreError::Invalid(format!("actor: {e}")))?;
        let limit = i64::try_from(self.max_pending_per_actor).unwrap_or(i64::MAX);
        // The quota bucket (`ApprovalRequest::quota_key`): the actor id, or
        // for an actor without one the surface and session.
        let bucket = if req.actor_id().is_some() {
            "actor_id = ?7"
        } else {
            "actor_id IS NULL AND surface = ?5 AND session_id IS ?13"
        };
        let inserted = conn
            .prepare_cached(&format!(
                "INSERT INTO approvals (id, capability_id, input_hash, input, surface, actor, \
                 actor_id, approval_type, reason, created_at_ms, expires_at_ms, status, seq, \
                 session_id) \
                 SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 'pending', \
                        (SELECT COALESCE(MAX(seq), 0) + 1 FROM approvals), ?13 \
                 WHERE (SELECT COUNT(*) FROM approvals WHERE {bucket} \
                        AND status = 'pending' AND expires_at_ms > ?10) < ?12",
            ))
            .and_then(|mut st| {
                st.execute(rusqlite::params![
                    req.id,
                    req.capability_id,
                    req.input_hash,
                    input,
                    req.surface.as_str(),
                    actor,
                    req.actor_id(),
                    req.approval_type,
                    req.reason,
                    ms(req.created_at_ms),
                    ms(req.expires_at_ms),
                    limit,
                    req.session_id,
                ])
            });
        match inserted {
            Ok(0) => Err(StoreError::LimitExceeded {
                limit: self.max_pending_per_actor,
            }),
            Ok(_) => Ok(()),
            Err(e) if is_unique_violation(&e) => Err(StoreError::Duplicate(req.id.clone())),
            Err(e) => Err(backend(e)),
        }
    }

    fn list_now(&self, filter: &ListFilter) -> Result<Vec<ApprovalRequest>, StoreError> {
        let conn = self.lock();
        // The page starts after a position (created_at_ms, seq); a cursor
        // whose request is gone resumes at its millisecond (seq 0 comes
        // before every row: they are numbered from 1).
        let after = match ListStart::of(filter)? {
            ListStart::Beginning => None,
            ListStart::After(at, id) => Some((
                ms(at),
                Self::position(&conn, &id)?.map_or(0, |(_, seq)| seq),
            )),
            ListStart::AfterId(id) => match Self::position(&conn, &id)? {
                Some(position) => Some(position),
                None => return Err(StoreError::BadCursor(format!("no request `{id}`"))),
            },
        };
        let mut sql = format!("SELECT {COLUMNS} FROM approvals WHERE 1 = 1");
        let mut params: Vec<SqlValue> = Vec::new();
        let mut bind = |sql: &mut String, clause: &str, v: SqlValue| {
            params.push(v);
            sql.push_str(&clause.replace('?', &format!("?{}", params.len())));
        };
        if let Some(c) = &filter.capability_id {
            bind(
                &mut sql,
                " AND capability_id = ?",
                SqlValue::Text(c.clone()),
            );
        }
        if let Some(a) = &filter.actor_id {
            bind(&mut sql, " AND actor_id = ?", SqlValue::Text(a.clone()));
        }
        if let Some(s) = filter.surface {
            bind(
                &mut sql,
                " AND surface = ?",
                SqlValue::Text(s.as_str().into()),
            );
        }
        if let Some(s) = filter.status {
            // The effective status: its stored status(es), narrowed by expiry.
            for (i, stored) in s.stored().iter().enumerate() {
                let clause = if i == 0 { " AND status IN (?" } else { ", ?" };
                bind(&mut sql, clause, SqlValue::Text(stored.as_str().into()));
            }
            sql.push(')');
            match s.expiry() {
                Some(false) => bind(
                    &mut sql,
                    " AND expires_at_ms > ?",
                    SqlValue::Integer(ms(filter.now_ms)),
                ),
                Some(true) => bind(
                    &mut sql,
                    " AND expires_at_ms <= ?",
                    SqlValue::Integer(ms(filter.now_ms)),
                ),
                None => {}
            }
        }
        if let Some((at, seq)) = after {
            bind(&mut sql, " AND (created_at_ms > ?", SqlValue::Integer(at));
            bind(&mut sql, " OR (created_at_ms = ?", SqlValue::Integer(at));
            bind(&mut sql, " AND seq > ?))", SqlValue::Integer(seq));
        }
        bind(
            &mut sql,
            " ORDER BY created_at_ms, seq LIMIT ?",
            SqlValue::Integer(i64::from(filter.effective_limit())),
        );
        let raws = conn
            .prepare_cached(&sql)
            .and_then(|mut st| {
                st.query_map(rusqlite::params_from_iter(params), RawRow::read)?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(backend)?;
        raws.into_iter().map(RawRow::into_request).collect()
    }

    fn decide_now(
        &self,
        id: &str,
        decision: Decision,
        approver: Option<&str>,
        reason: Option<&str>,
        now_ms: u64,
        approver_must_differ: bool,
    ) -> Result<ApprovalRequest, StoreError> {
        let conn = self.lock();
        let current = Self::get_now(&conn, id)?.ok_or_else(|| StoreError::NotFound(id.into()))?;
        let decided = apply_decision(
            &current,
            decision,
            approver,
            reason,
            now_ms,
            approver_must_differ,
        )?;
        let changed = conn
            .prepare_cached(
                "UPDATE approvals SET status = ?2, decided_by = ?3, decided_at_ms = ?4, \
                 decision_reason = ?5 \
                 WHERE id = ?1 AND status = 'pending' AND expires_at_ms > ?4",
            )
            .and_then(|mut st| {
                st.execute(rusqlite::params![
                    id,
                    decided.status.as_str(),
                    decided.decided_by,
                    ms(now_ms),
                    decided.decision_reason,
                ])
            })
            .map_err(backend)?;
        if changed == 1 {
            return Ok(decided);
        }
        // Another connection decided (or the row vanished) between the read
        // and the update: report the state that won.
        let now = Self::get_now(&conn, id)?.ok_or_else(|| StoreError::NotFound(id.into()))?;
        check_decision(&now, approver, now_ms, approver_must_differ)?;
        Err(StoreError::Backend {
            kind: BackendErrorKind::Other,
            message: "the decision was not written and the request is still pending".into(),
        })
    }

    fn consume_now(
        &self,
        id: &str,
        now_ms: u64,
    ) -> Result<Result<ApprovalRequest, ConsumeRefusal>, StoreError> {
        let conn = self.lock();
        // The statement is stepped to its end, not read with `query_row`:
        // in autocommit mode SQLite commits when the statement finishes,
        // after handing out the RETURNING row, and a commit that fails (a
        // full disk, a read-only WAL) is reported by that last step only.
        // `query_row` stops at the row and drops the error with the
        // statement, so a consume that never committed looked like a
        // success and its handler ran — again on every resume (issue 15).
        let raw = conn
            .prepare_cached(&format!(
                "UPDATE approvals SET status = 'consumed', consumed_at_ms = ?2 \
                 WHERE id = ?1 AND status = 'approved' AND expires_at_ms > ?2 \
                 RETURNING {COLUMNS}"
            ))
            .and_then(|mut st| {
                let mut rows = st.query(rusqlite::params![id, ms(now_ms)])?;
                let first = rows.next()?.map(RawRow::read).transpose()?;
                while rows.next()?.is_some() {}
                Ok(first)
            })
            .map_err(backend)?;
        if let Some(raw) = raw {
            return raw.into_request().map(Ok);
        }
        let current = Self::get_now(&conn, id)?;
        match check_consume(current.as_ref(), now_ms) {
            Err(refusal) => Ok(Err(refusal)),
            // Approved now but not when the UPDATE ran: it was still pending
            // then (approval is the only way into `approved`).
            Ok(()) => Ok(Err(ConsumeRefusal::Pending)),
        }
    }
}

impl ApprovalStore for SqliteApprovalStore {
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
        Box::pin(async move { Self::get_now(&self.lock(), id) })
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
            self.decide_now(id, decision, approver, reason, now_ms, approver_must_differ)
        })
    }

    fn consume<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Result<ApprovalRequest, ConsumeRefusal>, StoreError>> {
        Box::pin(async move { self.consume_now(id, now_ms) })
    }
}

/// Brings the schema to [`SCHEMA_VERSION`]. The version is read first
/// without a write lock so an up-to-date (or read-only) database is never
/// written; otherwise the migrations run in one `IMMEDIATE` transaction that
/// re-reads the version, so two processes opening a new file at once
/// migrate it once.
fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let version = user_version(conn)?;
    if version == SCHEMA_VERSION {
        return Ok(());
    }
    check_version(version)?;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let version = user_version(&tx)?;
    check_version(version)?;
    for sql in MIGRATIONS
        .iter()
        .skip(usize::try_from(version).unwrap_or(usize::MAX))
    {
        tx.execute_batch(sql).map_err(backend)?;
    }
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)
        .map_err(backend)?;
    tx.commit().map_err(backend)
}

fn user_version(conn: &Connection) -> Result<i64, StoreError> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(backend)
}

fn check_version(version: i64) -> Result<(), StoreError> {
    if (0..=SCHEMA_VERSION).contains(&version) {
        Ok(())
    } else {
        Err(StoreError::Backend {
            kind: BackendErrorKind::Schema,
            message: format!(
                "approval database schema version {version}; this library knows up to {SCHEMA_VERSION}"
            ),
        })
    }
}

/// Unix ms as SQLite's signed integer. Times past `i64::MAX` ms (292
/// million years) are clamped, which keeps their order.
fn ms(t: u64) -> i64 {
    i64::try_from(t).unwrap_or(i64::MAX)
}

fn json_text(v: &serde_json::Value) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(|e| StoreError::Invalid(format!("input: {e}")))
}

fn is_unique_violation(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(f, _)
            if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
                || f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
    )
}

/// Maps a SQLite error to the store's backend error kinds.
fn backend(e: rusqlite::Error) -> StoreError {
    let kind = match e.sqlite_error_code() {
        Some(SqliteCode::DatabaseBusy | SqliteCode::DatabaseLocked) => BackendErrorKind::Busy,
        Some(SqliteCode::ReadOnly) => BackendErrorKind::ReadOnly,
        Some(SqliteCode::CannotOpen | SqliteCode::PermissionDenied) => BackendErrorKind::CannotOpen,
        Some(SqliteCode::SystemIoFailure | SqliteCode::DiskFull) => BackendErrorKind::Io,
        Some(SqliteCode::NotADatabase | SqliteCode::DatabaseCorrupt) => BackendErrorKind::Corrupt,
        _ => BackendErrorKind::Other,
    };
    StoreError::Backend {
        kind,
        message: e.to_string(),
    }
}

/// A row as SQLite returned it, before it is trusted: every field that can
/// be malformed is checked in [`RawRow::into_request`].
struct RawRow {
    id: String,
    capability_id: String,
    input_hash: String,
    input: String,
    surface: String,
    actor: String,
    approval_type: Option<String>,
    reason: Option<String>,
    created_at_ms: i64,
    expires_at_ms: i64,
    status: String,
    decided_by: Option<String>,
    decided_at_ms: Option<i64>,
    decision_reason: Option<String>,
    session_id: Option<String>,
}

impl RawRow {
    /// Reads the columns of [`COLUMNS`], in order.
    fn read(row: &Row<'_>) -> rusqlite::Result<RawRow> {
        Ok(RawRow {
            id: row.get(0)?,
            capability_id: row.get(1)?,
            input_hash: row.get(2)?,
            input: row.get(3)?,
            surface: row.get(4)?,
            actor: row.get(5)?,
            approval_type: row.get(6)?,
            reason: row.get(7)?,
            created_at_ms: row.get(8)?,
            expires_at_ms: row.get(9)?,
            status: row.get(10)?,
            decided_by: row.get(11)?,
            decided_at_ms: row.get(12)?,
            decision_reason: row.get(13)?,
            session_id: row.get(14)?,
        })
    }

    fn into_request(self) -> Result<ApprovalRequest, StoreError> {
        let id = self.id;
        let corrupt = |reason: String| StoreError::Corrupt {
            id: id.clone(),
            reason,
        };
        let time = |v: i64, what: &str| {
            u64::try_from(v).map_err(|_| corrupt(format!("{what} is negative")))
        };
        let input = serde_json::from_str(&self.input)
            .map_err(|e| corrupt(format!("input is not JSON: {e}")))?;
        let actor: Actor = serde_json::from_str(&self.actor)
            .map_err(|e| corrupt(format!("actor is not an actor: {e}")))?;
        let surface = Surface::parse(&self.surface)
            .ok_or_else(|| corrupt(format!("unknown surface `{}`", self.surface)))?;
        let status = ApprovalStatus::parse(&self.status)
            .ok_or_else(|| corrupt(format!("unknown status `{}`", self.status)))?;
        let created_at_ms = time(self.created_at_ms, "created_at_ms")?;
        let expires_at_ms = time(self.expires_at_ms, "expires_at_ms")?;
        let decided_at_ms = self
            .decided_at_ms
            .map(|t| time(t, "decided_at_ms"))
            .transpose()?;
        Ok(ApprovalRequest {
            id,
            capability_id: self.capability_id,
            input_hash: self.input_hash,
            input,
            surface,
            actor,
            approval_type: self.approval_type,
            reason: self.reason,
            created_at_ms,
            expires_at_ms,
            status,
            decided_by: self.decided_by,
            decided_at_ms,
            decision_reason: self.decision_reason,
            session_id: self.session_id,
        })
    }
}
