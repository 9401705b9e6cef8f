-- orpc-agent PostgreSQL schema, migration 2: invocation audit records.
--
-- Written by `PostgresAuditSink` (one row per audit record of the pipeline:
-- a `finished` row for every invocation, plus a `started` row for those that
-- reached execution). Applied with migration 1 by the store or the sink;
-- by hand:
--   INSERT INTO orpc_schema_migrations (version, name) VALUES (2, '0002_audit');
--
-- "Who approved what, for which input hash":
--   SELECT a.started_at, a.capability_id, a.actor_id, a.input_hash,
--          p.decided_by AS approver, p.decided_at, a.outcome
--   FROM orpc_audit a JOIN orpc_approvals p ON p.id = a.approval_id
--   WHERE a.event = 'finished' AND a.resumed;

CREATE TABLE orpc_audit (
    seq           bigserial   PRIMARY KEY,
    -- when the sink wrote the row (database clock)
    recorded_at   timestamptz NOT NULL DEFAULT now(),
    event         text        NOT NULL,   -- 'started' | 'finished'
    capability_id text,
    requested     text,
    surface       text        NOT NULL,
    actor_id      text,
    resumed       boolean     NOT NULL,
    approval_id   text,
    input_hash    text,
    outcome       text,                   -- 'ok', 'approval_required' or an error code
    stage         integer     NOT NULL,
    attempts      integer     NOT NULL,
    -- the host's clock at the start of the invocation
    started_at    timestamptz NOT NULL,
    duration_ms   bigint      NOT NULL,
    traceparent   text,
    request_id    text,
    agent_id      text,
    session_id    text,
    -- the whole record as the pipeline produced it (camelCase JSON)
    record        jsonb       NOT NULL
);

CREATE INDEX orpc_audit_by_approval ON orpc_audit (approval_id) WHERE approval_id IS NOT NULL;
CREATE INDEX orpc_audit_by_input_hash ON orpc_audit (input_hash) WHERE input_hash IS NOT NULL;
CREATE INDEX orpc_audit_by_capability ON orpc_audit (capability_id, started_at);
CREATE INDEX orpc_audit_by_actor ON orpc_audit (actor_id, started_at);
