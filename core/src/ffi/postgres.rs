//! Opening the PostgreSQL store and audit sink from the bindings' JSON
//! options (feature `postgres`), written once for Node, Python and Swift.
//!
//! Options (every key optional, camelCase as bindings send them):
//! `{maxConnections, connectTimeoutMs, statementTimeoutMs (null: the
//! server's), maxPendingPerActor, clock: "database"|"caller",
//! tls: "system"|"noVerify"|{"caPem": "-----BEGIN…"}, auditQueue}`.
//! An unknown key is `INVALID_INPUT`, so a typo is not silently ignored.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::approval::{PgClock, PostgresApprovalStore, PostgresOptions, PostgresTls};
use crate::error::{CapabilityError, ErrorCode};
use crate::pipeline::audit_postgres::{DEFAULT_AUDIT_QUEUE, PostgresAuditSink};

const KEYS: &[&str] = &[
    "maxConnections",
    "connectTimeoutMs",
    "statementTimeoutMs",
    "maxPendingPerActor",
    "clock",
    "tls",
    "auditQueue",
];

fn bad(message: impl Into<String>) -> CapabilityError {
    CapabilityError::new(ErrorCode::InvalidInput, message)
}

/// The store options from JSON (`null` or `{}` for the defaults), and the
/// audit queue size.
pub fn postgres_options_from_json(v: &Value) -> Result<(PostgresOptions, usize), CapabilityError> {
    let mut o = PostgresOptions::default();
    let mut queue = DEFAULT_AUDIT_QUEUE;
    let obj = match v {
        Value::Null => return Ok((o, queue)),
        Value::Object(m) => m,
        _ => return Err(bad("PostgreSQL options must be an object")),
    };
    if let Some(k) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(bad(format!("unknown PostgreSQL option `{k}`")));
    }
    let count = |k: &str| -> Result<Option<u64>, CapabilityError> {
        match obj.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(n) => n.as_u64().filter(|n| *n > 0).map(Some).ok_or_else(|| {
                bad(format!(
                    "PostgreSQL option `{k}` must be a positive integer"
                ))
            }),
        }
    };
    let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    if let Some(n) = count("maxConnections")? {
        o.max_connections = size(n);
    }
    if let Some(n) = count("connectTimeoutMs")? {
        o.connect_timeout = Duration::from_millis(n);
    }
    if obj.contains_key("statementTimeoutMs") {
        o.statement_timeout = count("statementTimeoutMs")?.map(Duration::from_millis);
    }
    if let Some(n) = count("maxPendingPerActor")? {
        o.max_pending_per_actor = size(n);
    }
    if let Some(n) = count("auditQueue")? {
        queue = size(n);
    }
    o.clock = match obj.get("clock") {
        None | Some(Value::Null) => PgClock::Database,
        Some(Value::String(s)) if s == "database" => PgClock::Database,
        Some(Value::String(s)) if s == "caller" => PgClock::Caller,
        Some(_) => {
            return Err(bad(
                "PostgreSQL option `clock` must be \"database\" or \"caller\"",
            ));
        }
    };
    o.tls = match obj.get("tls") {
        None | Some(Value::Null) => PostgresTls::SystemRoots,
        Some(Value::String(s)) if s == "system" => PostgresTls::SystemRoots,
        Some(Value::String(s)) if s == "noVerify" => PostgresTls::NoVerify,
        Some(Value::Object(m)) if m.len() == 1 => match m.get("caPem") {
            Some(Value::String(pem)) if !pem.is_empty() => {
                PostgresTls::CaPem(pem.as_bytes().to_vec())
            }
            _ => {
                return Err(bad(
                    "PostgreSQL option `tls` must be \"system\", \"noVerify\" or {\"caPem\": pem}",
                ));
            }
        },
        Some(_) => {
            return Err(bad(
                "PostgreSQL option `tls` must be \"system\", \"noVerify\" or {\"caPem\": pem}",
            ));
        }
    };
    Ok((o, queue))
}

/// Connects the approval store (pool + migrations). Must run on the
/// long-lived tokio runtime that will run the store's operations: the
/// pool's connections live there.
pub async fn open_postgres(
    url: &str,
    options: PostgresOptions,
) -> Result<Arc<PostgresApprovalStore>, CapabilityError> {
    PostgresApprovalStore::connect_with(url, options)
        .await
        .map(Arc::new)
        .map_err(CapabilityError::from)
}

/// Connects an audit sink with its own small pool; its writer task runs
/// on the current tokio runtime.
pub async fn open_postgres_audit(
    url: &str,
    options: PostgresOptions,
    queue: usize,
) -> Result<Arc<PostgresAuditSink>, CapabilityError> {
    PostgresAuditSink::connect(url, options, queue)
        .await
        .map(Arc::new)
        .map_err(CapabilityError::from)
}

/// The process-wide tokio runtime (two workers) that owns PostgreSQL pools
/// for bindings without a runtime of their own (Python, Swift; Node uses
/// napi-rs's). Built on first use. In a child forked after it was built its
/// worker threads are gone, so it is refused with INTERNAL there: create
/// the registry in the child.
pub fn postgres_runtime() -> Result<&'static tokio::runtime::Runtime, CapabilityError> {
    static RUNTIME: std::sync::OnceLock<Result<(tokio::runtime::Runtime, u32), String>> =
        std::sync::OnceLock::new();
    let internal = |m: String| CapabilityError::new(ErrorCode::Internal, m);
    let (runtime, pid) = RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("orpc-agent-postgres")
                .enable_all()
                .build()
                .map(|r| (r, std::process::id()))
                .map_err(|e| format!("cannot start the PostgreSQL runtime: {e}"))
        })
        .as_ref()
        .map_err(|e| internal(e.clone()))?;
    if *pid != std::process::id() {
        return Err(internal(
            "this registry's PostgreSQL pool was created before fork(); create the registry in the child process"
                .into(),
        ));
    }
    Ok(runtime)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn options_parse_and_refuse() {
        let (o, q) = postgres_options_from_json(&Value::Null).unwrap();
        assert_eq!(o, PostgresOptions::default());
        assert_eq!(q, DEFAULT_AUDIT_QUEUE);
        let (o, q) = postgres_options_from_json(&json!({
            "maxConnections": 4, "connectTimeoutMs": 500, "statementTimeoutMs": null,
            "clock": "caller", "tls": {"caPem": "PEM"}, "auditQueue": 7
        }))
        .unwrap();
        assert_eq!(o.max_connections, 4);
        assert_eq!(o.connect_timeout, Duration::from_millis(500));
        assert_eq!(o.statement_timeout, None);
        assert_eq!(o.clock, PgClock::Caller);
        assert_eq!(o.tls, PostgresTls::CaPem(b"PEM".to_vec()));
        assert_eq!(q, 7);
        for b in [
            json!({"maxConections": 4}),
            json!({"maxConnections": 0}),
            json!({"maxConnections": "4"}),
            json!({"clock": "mine"}),
            json!({"tls": "off"}),
            json!({"tls": {"caPem": ""}}),
            json!([]),
        ] {
            assert_eq!(
                postgres_options_from_json(&b).unwrap_err().code,
                ErrorCode::InvalidInput,
                "{b}"
            );
        }
    }
}
