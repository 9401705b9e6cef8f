//! The PostgreSQL store (feature `postgres`): one approval queue shared by
//! many app instances (issue 8).
//!
//! Built on `tokio-postgres` with a `deadpool-postgres` pool; connection by
//! URL (or libpq key/value string); TLS as the connection string's `sslmode`
//! says, with rustls (see [`PostgresTls`]). The schema is created by
//! versioned migrations the store applies itself ([`migrate`]), the same SQL
//! as `core/migrations/postgres/*.sql` for operators.
//!
//! Atomicity is the database's, not this process's:
//!
//! - consume is ONE statement, `UPDATE … SET status = 'consumed' WHERE id =
//!   $1 AND status = 'approved' AND expires_at > now RETURNING …`. Under any
//!   interleaving of any number of instances at most one call matches the
//!   row. Only when it matches nothing is the row read, and the shared rule
//!   [`check_consume`] says why.
//! - decide reads the row, runs the shared rules ([`apply_decision`]), then
//!   writes with `UPDATE … WHERE id = $1 AND status = 'pending' AND
//!   expires_at > now`; a concurrent decision makes it match nothing.
//! - create takes a per-actor advisory lock for its transaction so the
//!   pending limit cannot be overrun by concurrent creators.
//!
//! **Clock.** With [`PgClock::Database`] (the default) every "now" — the
//! expiry checks in the two `UPDATE`s, `created_at`, `decided_at`,
//! `consumed_at` — is the database's `now()`, so instances whose clocks
//! disagree still agree on expiry. `create` then stores the request's
//! *lifetime* (`expires_at_ms - created_at_ms`) from the database's now, and
//! the `now_ms` arguments of the trait are ignored; read the request back
//! (`get`, or the value `decide`/`consume` return) for the authoritative
//! times. [`PgClock::Caller`] honours the caller's `now_ms` like the
//! embedded stores do, for tests and vectors that pin times.
//!
//! **Dropped connections.** Each decide and consume carries a random token
//! that the winning `UPDATE` writes into the row. If the connection breaks
//! mid-statement the store retries on a fresh connection (a few times, with
//! back-off): if the row carries this call's token, the first attempt
//! committed and the call succeeds; otherwise the conditional `UPDATE` runs
//! again, which can only win if nobody consumed the request. So a success
//! is always one the database confirmed, and a request is never consumed
//! twice; when the database stays unreachable the caller gets a typed
//! [`StoreError::Backend`] (and the request may be left consumed without a
//! caller knowing it: at most once, never twice).

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, PoolError, RecyclingMethod, Runtime};
use serde_json::Value;
use tokio_postgres::Row;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::Json;
use tokio_postgres_rustls::MakeRustlsConnect;

use super::{
    ApprovalRequest, ApprovalStatus, ApprovalStore, BackendErrorKind, BoxFuture, ConsumeRefusal,
    Created, Decision, EffectiveStatus, ListFilter, ListStart, MAX_PENDING_PER_ACTOR, StoreError,
    apply_decision, check_consume, check_decision, check_new, new_approval_id,
};
use crate::frame::Actor;
use crate::meta::Surface;

/// Migrations by version: entry `k` takes the schema from version `k` to
/// `k + 1`. The SQL is the operators' files, verbatim. Never edit a shipped
/// entry; append a new one.
const MIGRATIONS: &[(&str, &str)] = &[
    (
        "0001_approvals",
        include_str!("../../migrations/postgres/0001_approvals.sql"),
    ),
    (
        "0002_audit",
        include_str!("../../migrations/postgres/0002_audit.sql"),
    ),
    (
        "0003_creation_order",
        include_str!("../../migrations/postgres/0003_creation_order.sql"),
    ),
    (
        "0004_session",
        include_str!("../../migrations/postgres/0004_session.sql"),
    ),
    (
        "0005_repeated_calls",
        include_str!("../../migrations/postgres/0005_repeated_calls.sql"),
    ),
];

/// The PostgreSQL schema version this library writes.
pub const PG_SCHEMA_VERSION: i32 = MIGRATIONS.len() as i32;

/// Advisory lock taken (for one transaction) while migrating, so instances
/// starting together migrate once. The bytes spell `orpcmigr`.
const MIGRATION_LOCK: i64 = 0x6f72_7063_6d69_6772;

/// First key of the two-key advisory lock `create` takes per actor (the
/// second is the hash of the actor id). Two-key and one-key advisory locks
/// live in separate key spaces, so it cannot meet [`MIGRATION_LOCK`].
const ACTOR_LOCK_CLASS: i32 = 0x6f72_7063; // `orpc`

/// Latest instant stored: times are clamped to it (year ~287 000, inside
/// `timestamptz`'s range) so a saturated `u64::MAX` expiry cannot overflow.
const MAX_TIME_MS: u64 = 9_000_000_000_000_000;

/// How often an operation is retried after a dropped connection or a
/// database that is restarting, and the pause before each retry.
const RETRY_BACKOFF_MS: &[u64] = &[50, 200, 500, 1000, 2000, 4000];

/// The columns of a request, in [`read_request`]'s order (17 of them: a
/// query that adds a column reads it at index 17); times as unix ms.
const COLUMNS: &str = "id, capability_id, input_hash, input, surface, actor, approval_type, \
     reason, floor(extract(epoch from created_at) * 1000)::int8, \
     floor(extract(epoch from expires_at) * 1000)::int8, status, decided_by, \
     floor(extract(epoch from decided_at) * 1000)::int8, decision_reason, \
     decide_token, consume_token, session_id";

/// "Now" in SQL: the caller's time when the parameter is not NULL
/// ([`PgClock::Caller`]), else the database's `now()`, truncated to the
/// millisecond so stored times round-trip through the API's unix ms.
fn now_sql(param: usize) -> String {
    format!(
        "COALESCE('epoch'::timestamptz + ${param}::int8 * interval '1 millisecond', \
         date_trunc('milliseconds', now()))"
    )
}

/// Whose clock decides expiry and stamps times.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PgClock {
    /// The database's `now()`; the trait's `now_ms` arguments are ignored
    /// and `create` keeps only the request's lifetime. Use this whenever
    /// several instances share the store.
    #[default]
    Database,
    /// The `now_ms` the caller passes, as in the embedded stores: for tests
    /// and vectors that pin times.
    Caller,
}

/// How TLS certificates are checked when the connection string asks for TLS
/// (`sslmode=prefer`, the default, or `sslmode=require`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum PostgresTls {
    /// Verify the server's chain and host name against the platform's
    /// trust store. Secure by default; a server with a self-signed or
    /// private-CA certificate needs [`PostgresTls::CaPem`].
    #[default]
    SystemRoots,
    /// Verify against these PEM certificates (a private CA) instead.
    CaPem(Vec<u8>),
    /// Encrypt without verifying the certificate: what libpq's
    /// `sslmode=require` does without a root certificate. It stops passive
    /// eavesdropping but not an active man in the middle.
    NoVerify,
}

/// Settings of [`PostgresApprovalStore::connect_with`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostgresOptions {
    /// Largest number of pooled connections.
    pub max_connections: usize,
    /// How long an operation waits for a pooled connection, or for a new
    /// connection to be established, before failing with
    /// [`BackendErrorKind::Busy`] / [`BackendErrorKind::CannotOpen`].
    pub connect_timeout: Duration,
    /// The server cancels any statement of the store that runs longer
    /// (`statement_timeout`), e.g. one waiting on a row another session
    /// holds locked: the caller gets [`BackendErrorKind::Busy`] instead of
    /// waiting forever, and the cancelled statement changed nothing.
    /// `None` leaves the server's setting.
    pub statement_timeout: Option<Duration>,
    /// See [`MAX_PENDING_PER_ACTOR`].
    pub max_pending_per_actor: usize,
    pub clock: PgClock,
    pub tls: PostgresTls,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        PostgresOptions {
            max_connections: 16,
            connect_timeout: Duration::from_secs(10),
            statement_timeout: Some(Duration::from_secs(30)),
            max_pending_per_actor: MAX_PENDING_PER_ACTOR,
            clock: PgClock::Database,
            tls: PostgresTls::SystemRoots,
        }
    }
}

/// Approval requests in a PostgreSQL database, shared by every instance
/// that connects to it. Cheap to clone (the pool is shared).
#[derive(Clone)]
pub struct PostgresApprovalStore {
    pool: Pool,
    max_pending_per_actor: usize,
    clock: PgClock,
}

impl std::fmt::Debug for PostgresApprovalStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresApprovalStore")
            .field("pool", &self.pool.status())
            .field("max_pending_per_actor", &self.max_pending_per_actor)
            .field("clock", &self.clock)
            .finish()
    }
}

/// A pool on `url` (a `postgresql://` URL or a libpq key/value string),
/// with the schema migrated. Shared by the store and the audit sink.
pub(crate) async fn connect_pool(url: &str, options: &PostgresOptions) -> Result<Pool, StoreError> {
    let mut config = tokio_postgres::Config::from_str(url).map_err(|e| StoreError::Backend {
        kind: BackendErrorKind::CannotOpen,
        message: format!("invalid PostgreSQL connection string: {e}"),
    })?;
    if let Some(t) = options.statement_timeout {
        // Appended to the connection string's own `options`, if any.
        let ms = t.as_millis().max(1);
        let opts = match config.get_options() {
            Some(o) if !o.trim().is_empty() => format!("{o} -c statement_timeout={ms}"),
            _ => format!("-c statement_timeout={ms}"),
        };
        config.options(opts);
    }
    let tls = make_tls(&options.tls)?;
    let manager = Manager::from_config(
        config,
        tls,
        ManagerConfig {
            // A closed connection is dropped at checkout; one that dies
            // unnoticed fails its statement, and the retry takes a new one.
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let pool = Pool::builder(manager)
        .max_size(options.max_connections.max(1))
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(options.connect_timeout))
        .create_timeout(Some(options.connect_timeout))
        .recycle_timeout(Some(options.connect_timeout))
        .build()
        .map_err(|e| StoreError::Backend {
            kind: BackendErrorKind::Other,
            message: format!("cannot build the connection pool: {e}"),
        })?;
    retrying(|| async {
        let mut client = pool.get().await.map_err(pool_error)?;
        migrate(&mut client).await.map_err(Failure::from)
    })
    .await?;
    Ok(pool)
}

fn make_tls(tls: &PostgresTls) -> Result<MakeRustlsConnect, StoreError> {
    let tls_error = |message: String| StoreError::Backend {
        kind: BackendErrorKind::CannotOpen,
        message,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_error(format!("TLS setup: {e}")))?;
    let config = match tls {
        PostgresTls::SystemRoots => {
            let mut roots = rustls::RootCertStore::empty();
            // A machine without a trust store still connects without TLS
            // (or fails to verify with TLS): not an error at this point.
            let found = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(found.certs);
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        PostgresTls::CaPem(pem) => {
            use rustls::pki_types::CertificateDer;
            use rustls::pki_types::pem::PemObject;
            let mut roots = rustls::RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(pem) {
                let cert = cert.map_err(|e| tls_error(format!("CA certificate PEM: {e}")))?;
                roots
                    .add(cert)
                    .map_err(|e| tls_error(format!("CA certificate: {e}")))?;
            }
            if roots.is_empty() {
                return Err(tls_error("the CA PEM holds no certificate".into()));
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        PostgresTls::NoVerify => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
            .with_no_client_auth(),
    };
    Ok(MakeRustlsConnect::new(config))
}

/// Accepts any server certificate but still checks the handshake
/// signatures (so the session key is bound to the certificate presented).
#[derive(Debug)]
struct NoVerify(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// Brings the schema to [`PG_SCHEMA_VERSION`] in one transaction holding
/// [`MIGRATION_LOCK`]: a second instance starting at the same moment waits,
/// then finds the work done. A database migrated by a newer library is
/// refused ([`BackendErrorKind::Schema`]) rather than written to.
pub(crate) async fn migrate(client: &mut deadpool_postgres::Client) -> Result<i32, StoreError> {
    let tx = client.transaction().await.map_err(db_error)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(db_error)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS orpc_schema_migrations (
            version    integer     PRIMARY KEY,
            name       text        NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now()
        )",
    )
    .await
    .map_err(db_error)?;
    let version: i32 = tx
        .query_one(
            "SELECT COALESCE(max(version), 0) FROM orpc_schema_migrations",
            &[],
        )
        .await
        .map_err(db_error)?
        .try_get(0)
        .map_err(db_error)?;
    if !(0..=PG_SCHEMA_VERSION).contains(&version) {
        return Err(StoreError::Backend {
            kind: BackendErrorKind::Schema,
            message: format!(
                "approval database schema version {version}; this library knows up to {PG_SCHEMA_VERSION}"
            ),
        });
    }
    for (k, (name, sql)) in MIGRATIONS
        .iter()
        .enumerate()
        .skip(usize::try_from(version).unwrap_or(usize::MAX))
    {
        tx.batch_execute(sql).await.map_err(db_error)?;
        let v = i32::try_from(k + 1).unwrap_or(i32::MAX);
        tx.execute(
            "INSERT INTO orpc_schema_migrations (version, name) VALUES ($1, $2)",
            &[&v, name],
        )
        .await
        .map_err(db_error)?;
    }
    tx.commit().await.map_err(db_error)?;
    Ok(PG_SCHEMA_VERSION)
}

impl PostgresApprovalStore {
    /// Connects to `url` with default options ([`PgClock::Database`],
    /// system trust roots) and applies migrations.
    pub async fn connect(url: &str) -> Result<PostgresApprovalStore, StoreError> {
        PostgresApprovalStore::connect_with(url, PostgresOptions::default()).await
    }

    /// Connects, builds the pool and applies migrations. Fails with a typed
    /// backend error if the server cannot be reached within
    /// `connect_timeout` (after retries), refuses the credentials, or holds
    /// a newer schema.
    pub async fn connect_with(
        url: &str,
        options: PostgresOptions,
    ) -> Result<PostgresApprovalStore, StoreError> {
        let pool = connect_pool(url, &options).await?;
        Ok(PostgresApprovalStore {
            pool,
            max_pending_per_actor: options.max_pending_per_actor,
            clock: options.clock,
        })
    }

    /// The connection pool, e.g. to share it with
    /// [`PostgresAuditSink::with_pool`](crate::pipeline::audit_postgres::PostgresAuditSink::with_pool).
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// The caller's time as a SQL parameter: `None` (the database's clock)
    /// unless the store runs on [`PgClock::Caller`].
    fn caller_now(&self, now_ms: u64) -> Option<i64> {
        match self.clock {
            PgClock::Database => None,
            PgClock::Caller => Some(ms(now_ms)),
        }
    }

    async fn client(&self) -> Result<deadpool_postgres::Client, Failure> {
        self.pool.get().await.map_err(pool_error)
    }

    /// The row and the effective "now" (ms), read in one statement so the
    /// rules judge the row by the clock that the `UPDATE`s use.
    async fn read_with_now(
        &self,
        client: &deadpool_postgres::ClientWrapper,
        id: &str,
        caller_now: Option<i64>,
    ) -> Result<(Option<(ApprovalRequest, Tokens)>, u64), Failure> {
        let sql = format!(
            "SELECT {COLUMNS}, floor(extract(epoch from t.now) * 1000)::int8 \
             FROM (SELECT {} AS now) t LEFT JOIN orpc_approvals ON id = $1",
            now_sql(2)
        );
        let st = client.prepare_cached(&sql).await.map_err(Failure::db)?;
        let row = client
            .query_one(&st, &[&id, &caller_now])
            .await
            .map_err(Failure::db)?;
        let now: i64 = row.try_get(17).map_err(Failure::db)?;
        let now = u64::try_from(now).unwrap_or(0);
        let id_col: Option<String> = row.try_get(0).map_err(Failure::db)?;
        if id_col.is_none() {
            return Ok((None, now));
        }
        Ok((Some(read_request(&row)?), now))
    }

    async fn create_once(
        &self,
        req: &ApprovalRequest,
        retried: bool,
        repeat: bool,
    ) -> Result<Created, Failure> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(Failure::db)?;
        let actor_id = req.actor_id();
        // One quota bucket at a time (`ApprovalRequest::quota_key`): the
        // actor id, or for an actor without one the surface and session.
        // The same lock makes a repeated call's look-up and insert atomic:
        // a repeat is always the same principal's.
        tx.execute(
            "SELECT pg_advisory_xact_lock($1, hashtext($2))",
            &[&ACTOR_LOCK_CLASS, &req.quota_key()],
        )
        .await
        .map_err(Failure::db)?;
        if repeat {
            // The caller first (its actor id, or for an actor without one
            // its session), then the bound: other callers' requests for the
            // same input never crowd the caller's own out of the rows read.
            let (principal, who) = match actor_id {
                Some(id) => ("actor_id = $5", Some(id)),
                None => (
                    "actor_id IS NULL AND session_id IS NOT DISTINCT FROM $5",
                    req.session_id.as_deref(),
                ),
            };
            let sql = format!(
                "SELECT {COLUMNS} FROM orpc_approvals WHERE capability_id = $1 \
                 AND input_hash = $2 AND surface = $3 AND status IN ('pending', 'approved') \
                 AND expires_at > {} AND {principal} ORDER BY seq LIMIT 64",
                now_sql(4)
            );
            let caller_now = self.caller_now(req.created_at_ms.min(MAX_TIME_MS));
            let st = tx.prepare_cached(&sql).await.map_err(Failure::db)?;
            let rows = tx
                .query(
                    &st,
                    &[
                        &req.capability_id,
                        &req.input_hash,
                        &req.surface.as_str(),
                        &caller_now,
                        &who,
                    ],
                )
                .await
                .map_err(Failure::db)?;
            let mut earlier = Vec::new();
            for row in &rows {
                let (r, _) = read_request(row).map_err(Failure::Final)?;
                if req.same_call(&r) {
                    earlier.push(r);
                }
            }
            let found = Created::pick(earlier);
            if found != Created::New {
                tx.commit().await.map_err(Failure::db)?;
                return Ok(found);
            }
        }
        let actor_match = if actor_id.is_some() {
            "actor_id = $7"
        } else {
            "actor_id IS NULL AND $7::text IS NULL AND surface = $5 \
             AND session_id IS NOT DISTINCT FROM $13"
        };
        let now = now_sql(10);
        let sql = format!(
            "INSERT INTO orpc_approvals (id, capability_id, input_hash, input, surface, actor, \
             actor_id, approval_type, reason, created_at, expires_at, status, session_id) \
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, {now}, \
                    {now} + $11::int8 * interval '1 millisecond', 'pending', $13 \
             WHERE (SELECT count(*) FROM (SELECT 1 FROM orpc_approvals \
                    WHERE {actor_match} AND status = 'pending' AND expires_at > {now} \
                    LIMIT $12) live) < $12"
        );
        let created = req.created_at_ms.min(MAX_TIME_MS);
        let lifetime = ms(req
            .expires_at_ms
            .min(MAX_TIME_MS)
            .saturating_sub(created)
            .min(MAX_TIME_MS - created));
        let caller_now = self.caller_now(created);
        let limit = i64::try_from(self.max_pending_per_actor).unwrap_or(i64::MAX);
        let st = tx.prepare_cached(&sql).await.map_err(Failure::db)?;
        let inserted = tx
            .execute(
                &st,
                &[
                    &req.id,
                    &req.capability_id,
                    &req.input_hash,
                    &Json(&req.input),
                    &req.surface.as_str(),
                    &Json(&req.actor),
                    &actor_id,
                    &req.approval_type,
                    &req.reason,
                    &caller_now,
                    &lifetime,
                    &limit,
                    &req.session_id,
                ],
            )
            .await;
        match inserted {
            // A retry at the quota finds this call's own insert (committed
            // before the connection dropped) among the pending it counts:
            // the request is stored, not refused.
            Ok(0) if retried && self.stored_here(&tx, &req.id).await? => Ok(Created::New),
            Ok(0) => Err(Failure::Final(StoreError::LimitExceeded {
                limit: self.max_pending_per_actor,
            })),
            Ok(_) => tx
                .commit()
                .await
                .map(|()| Created::New)
                .map_err(Failure::db),
            // 128 random bits do not collide: a duplicate seen on a retry
            // is this call's own insert, committed before the connection
            // dropped.
            Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) && retried => Ok(Created::New),
            Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                Err(Failure::Final(StoreError::Duplicate(req.id.clone())))
            }
            Err(e) => Err(Failure::db(e)),
        }
    }

    /// Whether a request with `id` is stored (read in `tx`).
    async fn stored_here(
        &self,
        tx: &deadpool_postgres::Transaction<'_>,
        id: &str,
    ) -> Result<bool, Failure> {
        let st = tx
            .prepare_cached("SELECT 1 FROM orpc_approvals WHERE id = $1")
            .await
            .map_err(Failure::db)?;
        let rows = tx.query(&st, &[&id]).await.map_err(Failure::db)?;
        Ok(!rows.is_empty())
    }

    async fn get_once(&self, id: &str) -> Result<Option<ApprovalRequest>, Failure> {
        let client = self.client().await?;
        let st = client
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM orpc_approvals WHERE id = $1"
            ))
            .await
            .map_err(Failure::db)?;
        let row = client.query_opt(&st, &[&id]).await.map_err(Failure::db)?;
        Ok(row.map(|r| read_request(&r)).transpose()?.map(|(r, _)| r))
    }

    /// Where the request with this id stands in the list order:
    /// `(created_at in unix ms, seq)`.
    async fn position(
        &self,
        client: &deadpool_postgres::Client,
        id: &str,
    ) -> Result<Option<(i64, i64)>, Failure> {
        let st = client
            .prepare_cached(
                "SELECT floor(extract(epoch from created_at) * 1000)::int8, seq \
                 FROM orpc_approvals WHERE id = $1",
            )
            .await
            .map_err(Failure::db)?;
        let row = client.query_opt(&st, &[&id]).await.map_err(Failure::db)?;
        row.map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .transpose()
            .map_err(Failure::db)
    }

    async fn list_once(&self, filter: &ListFilter) -> Result<Vec<ApprovalRequest>, Failure> {
        let client = self.client().await?;
        // The page starts after a position (created_at, seq); a cursor
        // whose request is gone resumes at its millisecond (seq 0 comes
        // before every row: the sequence starts at 1).
        let after: Option<(i64, i64)> = match ListStart::of(filter)? {
            ListStart::Beginning => None,
            ListStart::After(at, id) => Some((
                ms(at),
                self.position(&client, &id).await?.map_or(0, |(_, seq)| seq),
            )),
            ListStart::AfterId(id) => match self.position(&client, &id).await? {
                Some(position) => Some(position),
                None => {
                    return Err(Failure::Final(StoreError::BadCursor(format!(
                        "no request `{id}`"
                    ))));
                }
            },
        };
        // The effective status: its stored status(es), narrowed by expiry
        // judged at this store's now (the database's, or the caller's).
        let stored: Vec<&str> = filter
            .status
            .map(|s| s.stored().iter().map(|st| st.as_str()).collect())
            .unwrap_or_default();
        let expiry = filter.status.and_then(EffectiveStatus::expiry);
        let caller_now = self.caller_now(filter.now_ms);
        let limit = i64::from(filter.effective_limit());
        let (after_at, after_seq) = after.unzip();
        let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = Vec::new();
        let mut sql = format!("SELECT {COLUMNS} FROM orpc_approvals WHERE true");
        // Only the filters present become predicates, so each combination
        // is its own prepared statement with its own (index-using) plan.
        if let Some(c) = &filter.capability_id {
            params.push(c);
            sql.push_str(&format!(" AND capability_id = ${}", params.len()));
        }
        if let Some(a) = &filter.actor_id {
            params.push(a);
            sql.push_str(&format!(" AND actor_id = ${}", params.len()));
        }
        let surface = filter.surface.map(Surface::as_str);
        if let Some(s) = &surface {
            params.push(s);
            sql.push_str(&format!(" AND surface = ${}", params.len()));
        }
        if !stored.is_empty() {
            params.push(&stored);
            sql.push_str(&format!(" AND status = ANY(${})", params.len()));
        }
        if let Some(expired) = expiry {
            params.push(&caller_now);
            let op = if expired { "<=" } else { ">" };
            sql.push_str(&format!(" AND expires_at {op} {}", now_sql(params.len())));
        }
        if let (Some(at), Some(seq)) = (&after_at, &after_seq) {
            params.push(at);
            params.push(seq);
            sql.push_str(&format!(
                " AND (created_at, seq) > ('epoch'::timestamptz + ${}::int8 * interval '1 millisecond', ${})",
                params.len() - 1,
                params.len()
            ));
        }
        params.push(&limit);
        sql.push_str(&format!(
            " ORDER BY created_at, seq LIMIT ${}",
            params.len()
        ));
        let st = client.prepare_cached(&sql).await.map_err(Failure::db)?;
        let rows = client.query(&st, &params).await.map_err(Failure::db)?;
        rows.iter()
            .map(|r| read_request(r).map(|(req, _)| req).map_err(Failure::from))
            .collect()
    }

    #[allow(clippy::too_many_arguments)]
    async fn decide_once(
        &self,
        id: &str,
        decision: Decision,
        approver: Option<&str>,
        reason: Option<&str>,
        now_ms: u64,
        approver_must_differ: bool,
        token: &str,
    ) -> Result<ApprovalRequest, Failure> {
        let client = self.client().await?;
        let caller_now = self.caller_now(now_ms);
        let (current, now) = self.read_with_now(&client, id, caller_now).await?;
        let Some((current, tokens)) = current else {
            return Err(Failure::Final(StoreError::NotFound(id.into())));
        };
        if tokens.decide.as_deref() == Some(token) {
            // A previous attempt of this very call committed.
            return Ok(current);
        }
        // The shared rules decide whether this approver may decide now
        // (by the same clock the UPDATE uses); the UPDATE only makes it
        // atomic against concurrent decisions and expiry.
        let decided = apply_decision(
            &current,
            decision,
            approver,
            reason,
            now,
            approver_must_differ,
        )?;
        let now_expr = now_sql(6);
        let st = client
            .prepare_cached(&format!(
                "UPDATE orpc_approvals SET status = $2, decided_by = $3, decided_at = {now_expr}, \
                 decision_reason = $4, decide_token = $5 \
                 WHERE id = $1 AND status = 'pending' AND expires_at > {now_expr} \
                 RETURNING {COLUMNS}"
            ))
            .await
            .map_err(Failure::db)?;
        let row = client
            .query_opt(
                &st,
                &[
                    &id,
                    &decided.status.as_str(),
                    &decided.decided_by,
                    &decided.decision_reason,
                    &token,
                    &caller_now,
                ],
            )
            .await
            .map_err(Failure::db)?;
        if let Some(row) = row {
            return Ok(read_request(&row)?.0);
        }
        // Another decision won, or the request expired, between the read
        // and the update: report the state that won.
        let (now_row, now) = self.read_with_now(&client, id, caller_now).await?;
        let Some((now_row, tokens)) = now_row else {
            return Err(Failure::Final(StoreError::NotFound(id.into())));
        };
        if tokens.decide.as_deref() == Some(token) {
            return Ok(now_row);
        }
        check_decision(&now_row, approver, now, approver_must_differ)?;
        Err(Failure::Final(StoreError::Backend {
            kind: BackendErrorKind::Other,
            message: "the decision was not written and the request is still pending".into(),
        }))
    }

    async fn consume_once(
        &self,
        id: &str,
        now_ms: u64,
        token: &str,
    ) -> Result<Result<ApprovalRequest, ConsumeRefusal>, Failure> {
        let client = self.client().await?;
        let caller_now = self.caller_now(now_ms);
        let now_expr = now_sql(3);
        let st = client
            .prepare_cached(&format!(
                "UPDATE orpc_approvals SET status = 'consumed', consumed_at = {now_expr}, \
                 consume_token = $2 \
                 WHERE id = $1 AND status = 'approved' AND expires_at > {now_expr} \
                 RETURNING {COLUMNS}"
            ))
            .await
            .map_err(Failure::db)?;
        let row = client
            .query_opt(&st, &[&id, &token, &caller_now])
            .await
            .map_err(Failure::db)?;
        if let Some(row) = row {
            return Ok(Ok(read_request(&row)?.0));
        }
        let (current, now) = self.read_with_now(&client, id, caller_now).await?;
        if let Some((req, tokens)) = &current {
            if tokens.consume.as_deref() == Some(token) {
                // An earlier attempt of this call consumed it and the
                // connection dropped before the answer arrived.
                return Ok(Ok(req.clone()));
            }
        }
        match check_consume(current.as_ref().map(|(r, _)| r), now) {
            Err(refusal) => Ok(Err(refusal)),
            // Approved now but not when the UPDATE ran: it was still
            // pending then (approval is the only way into `approved`).
            Ok(()) => Ok(Err(ConsumeRefusal::Pending)),
        }
    }
}

impl ApprovalStore for PostgresApprovalStore {
    fn waits(&self) -> bool {
        true
    }

    fn create<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            check_new(request)?;
            let mut retried = false;
            retrying(|| {
                let first = !retried;
                retried = true;
                self.create_once(request, !first, false)
            })
            .await
            .map(|_| ())
        })
    }

    fn create_or_repeat<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> BoxFuture<'a, Result<Created, StoreError>> {
        Box::pin(async move {
            check_new(request)?;
            let mut retried = false;
            retrying(|| {
                let first = !retried;
                retried = true;
                self.create_once(request, !first, true)
            })
            .await
        })
    }

    fn get<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<ApprovalRequest>, StoreError>> {
        Box::pin(retrying(move || self.get_once(id)))
    }

    fn list<'a>(
        &'a self,
        filter: &'a ListFilter,
    ) -> BoxFuture<'a, Result<Vec<ApprovalRequest>, StoreError>> {
        Box::pin(retrying(move || self.list_once(filter)))
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
            let token = call_token()?;
            retrying(|| {
                self.decide_once(
                    id,
                    decision,
                    approver,
                    reason,
                    now_ms,
                    approver_must_differ,
                    &token,
                )
            })
            .await
        })
    }

    fn consume<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Result<ApprovalRequest, ConsumeRefusal>, StoreError>> {
        Box::pin(async move {
            let token = call_token()?;
            retrying(|| self.consume_once(id, now_ms, &token)).await
        })
    }
}

/// A fresh random token for one decide/consume call (reuses the approval
/// id generator: 128 random bits).
fn call_token() -> Result<String, StoreError> {
    new_approval_id().ok_or_else(|| StoreError::Backend {
        kind: BackendErrorKind::Other,
        message: "the operating system supplied no randomness".into(),
    })
}

/// Why one attempt failed: worth another attempt on a fresh connection
/// (dropped connection, server restarting or unreachable), or final.
pub(crate) enum Failure {
    Transient(StoreError),
    Final(StoreError),
}

impl Failure {
    pub(crate) fn db(e: tokio_postgres::Error) -> Failure {
        if is_transient(&e) {
            Failure::Transient(db_error(e))
        } else {
            Failure::Final(db_error(e))
        }
    }
}

impl From<StoreError> for Failure {
    fn from(e: StoreError) -> Failure {
        Failure::Final(e)
    }
}

/// Runs `attempt` until it succeeds, fails for good, or the transient
/// failures outlast [`RETRY_BACKOFF_MS`].
pub(crate) async fn retrying<T, F, Fut>(mut attempt: F) -> Result<T, StoreError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, Failure>>,
{
    let mut backoff = RETRY_BACKOFF_MS.iter();
    loop {
        match attempt().await {
            Ok(v) => return Ok(v),
            Err(Failure::Final(e)) => return Err(e),
            Err(Failure::Transient(e)) => match backoff.next() {
                Some(&pause) => tokio::time::sleep(Duration::from_millis(pause)).await,
                None => return Err(e),
            },
        }
    }
}

/// The connection broke, or the server is shutting down, starting up or
/// unreachable: a new connection may succeed.
fn is_transient(e: &tokio_postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    match e.code() {
        Some(code) => {
            let c = code.code();
            c.starts_with("08") // connection exception
                || c == SqlState::ADMIN_SHUTDOWN.code()
                || c == SqlState::CRASH_SHUTDOWN.code()
                || c == SqlState::CANNOT_CONNECT_NOW.code()
        }
        // No SQLSTATE: an I/O error or a protocol-level failure on the
        // socket, i.e. the connection is gone.
        None => source_is_io(e),
    }
}

fn source_is_io(e: &tokio_postgres::Error) -> bool {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if s.is::<std::io::Error>() {
            return true;
        }
        source = s.source();
    }
    false
}

fn pool_error(e: PoolError) -> Failure {
    match e {
        PoolError::Timeout(_) => Failure::Final(StoreError::Backend {
            kind: BackendErrorKind::Busy,
            message: format!("no database connection available: {e}"),
        }),
        PoolError::Backend(e) => {
            let transient = is_transient(&e);
            let mut err = db_error(e);
            if let StoreError::Backend { kind, .. } = &mut err {
                if *kind == BackendErrorKind::Io || *kind == BackendErrorKind::Other {
                    *kind = BackendErrorKind::CannotOpen;
                }
            }
            if transient {
                Failure::Transient(err)
            } else {
                Failure::Final(err)
            }
        }
        other => Failure::Final(StoreError::Backend {
            kind: BackendErrorKind::CannotOpen,
            message: format!("connection pool: {other}"),
        }),
    }
}

/// Maps a PostgreSQL error to the store's backend error kinds.
pub(crate) fn db_error(e: tokio_postgres::Error) -> StoreError {
    let kind = match e.code().map(SqlState::code) {
        Some(c) if c.starts_with("08") => BackendErrorKind::Io,
        Some(c) if c.starts_with("28") || c == "3D000" => BackendErrorKind::CannotOpen,
        Some(c) if c.starts_with("57P") => BackendErrorKind::Io,
        // serialization failure, deadlock, lock timeout, statement timeout
        // (query cancelled), too many connections: try again later.
        Some("40001" | "40P01" | "55P03" | "57014" | "53300") => BackendErrorKind::Busy,
        Some("25006") => BackendErrorKind::ReadOnly,
        Some(c) if c.starts_with("53") || c.starts_with("58") => BackendErrorKind::Io,
        Some("XX001" | "XX002") => BackendErrorKind::Corrupt,
        Some("42P01" | "42703") => BackendErrorKind::Schema,
        Some(_) => BackendErrorKind::Other,
        None if e.is_closed() || source_is_io(&e) => BackendErrorKind::Io,
        None => BackendErrorKind::Other,
    };
    StoreError::Backend {
        kind,
        message: with_causes(&e),
    }
}

/// The error and its causes ("error performing TLS handshake: invalid
/// peer certificate: UnknownIssuer"), for logs; callers see only the kind.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    message
}

/// Unix ms as a signed SQL integer, clamped to [`MAX_TIME_MS`].
fn ms(t: u64) -> i64 {
    i64::try_from(t.min(MAX_TIME_MS)).unwrap_or(i64::MAX)
}

/// The per-call tokens of a row (see the module doc on dropped connections).
struct Tokens {
    decide: Option<String>,
    consume: Option<String>,
}

/// Reads the columns of [`COLUMNS`], checking every field that could be
/// malformed (the database is shared: anyone could have written it).
fn read_request(row: &Row) -> Result<(ApprovalRequest, Tokens), StoreError> {
    let id: String = row.try_get(0).map_err(db_error)?;
    let corrupt = |reason: String| StoreError::Corrupt {
        id: id.clone(),
        reason,
    };
    let get_err = |e: tokio_postgres::Error| corrupt(e.to_string());
    let time = |v: i64, what: &str| {
        u64::try_from(v).map_err(|_| corrupt(format!("{what} is before 1970")))
    };
    let Json(input): Json<Value> = row.try_get(3).map_err(get_err)?;
    let Json(actor): Json<Value> = row.try_get(5).map_err(get_err)?;
    let actor: Actor = serde_json::from_value(actor)
        .map_err(|e| corrupt(format!("actor is not an actor: {e}")))?;
    let surface: String = row.try_get(4).map_err(get_err)?;
    let surface =
        Surface::parse(&surface).ok_or_else(|| corrupt(format!("unknown surface `{surface}`")))?;
    let status: String = row.try_get(10).map_err(get_err)?;
    let status = ApprovalStatus::parse(&status)
        .ok_or_else(|| corrupt(format!("unknown status `{status}`")))?;
    let created_at_ms = time(row.try_get(8).map_err(get_err)?, "created_at")?;
    let expires_at_ms = time(row.try_get(9).map_err(get_err)?, "expires_at")?;
    let decided_at_ms = row
        .try_get::<_, Option<i64>>(12)
        .map_err(get_err)?
        .map(|t| time(t, "decided_at"))
        .transpose()?;
    let tokens = Tokens {
        decide: row.try_get(14).map_err(get_err)?,
        consume: row.try_get(15).map_err(get_err)?,
    };
    let req = ApprovalRequest {
        capability_id: row.try_get(1).map_err(get_err)?,
        input_hash: row.try_get(2).map_err(get_err)?,
        input,
        surface,
        actor,
        approval_type: row.try_get(6).map_err(get_err)?,
        reason: row.try_get(7).map_err(get_err)?,
        created_at_ms,
        expires_at_ms,
        status,
        decided_by: row.try_get(11).map_err(get_err)?,
        decided_at_ms,
        decision_reason: row.try_get(13).map_err(get_err)?,
        session_id: row.try_get(16).map_err(get_err)?,
        id,
    };
    Ok((req, tokens))
}
