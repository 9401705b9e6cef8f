-- orpc-agent PostgreSQL schema, migration 1: approval requests (DESIGN §5).
--
-- `PostgresApprovalStore` applies this itself (under an advisory lock, and
-- records it in `orpc_schema_migrations`); operators who apply migrations
-- by hand run this file, then
--   INSERT INTO orpc_schema_migrations (version, name) VALUES (1, '0001_approvals');
-- Never edit a shipped migration: add the next numbered file.
--
-- Tables are prefixed `orpc_` so they cannot collide with an application's
-- own `approvals` or with another tool's `schema_migrations` in a shared
-- database. Put them in a dedicated schema with the connection string's
-- `options=-c search_path=...` if you prefer.
--
-- Times are `timestamptz` truncated to milliseconds (the API speaks unix
-- milliseconds). By default the store computes them from the DATABASE clock
-- (`now()`), so every app instance agrees on when a request expires.

CREATE TABLE orpc_approvals (
    id              text        PRIMARY KEY,
    capability_id   text        NOT NULL,
    -- lowercase hex SHA-256 binding capability + full validated input (SI-7)
    input_hash      text        NOT NULL,
    -- `json`, not `jsonb`: kept byte for byte (key order, number spelling,
    -- and `\u0000`, which `jsonb` refuses). Cast to jsonb to query it.
    input           json        NOT NULL,
    surface         text        NOT NULL,
    -- the actor recorded at creation (a resume runs as it, SI-3)
    actor           json        NOT NULL,
    -- `actor->>'id'`, repeated for filters and the pending limit
    actor_id        text,
    approval_type   text,
    reason          text,
    created_at      timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL,
    status          text        NOT NULL
        CHECK (status IN ('pending', 'approved', 'rejected', 'consumed')),
    -- who decided (the approver), when, and why
    decided_by      text,
    decided_at      timestamptz,
    decision_reason text,
    consumed_at     timestamptz,
    -- random per-call tokens written by the winning decide / consume, so a
    -- caller whose connection dropped after the commit can learn that it,
    -- and nobody else, made the change
    decide_token    text,
    consume_token   text
);

-- Paging in (created_at, id) order, unfiltered.
CREATE INDEX orpc_approvals_by_created ON orpc_approvals (created_at, id);
-- The approval UI's queue: one status (usually 'pending'), paged.
CREATE INDEX orpc_approvals_by_status ON orpc_approvals (status, created_at, id);
-- Filters by capability or actor (with or without status), paged.
CREATE INDEX orpc_approvals_by_capability ON orpc_approvals (capability_id, status, created_at, id);
CREATE INDEX orpc_approvals_by_actor ON orpc_approvals (actor_id, status, created_at, id);
-- The per-actor limit counts live pending requests.
CREATE INDEX orpc_approvals_pending_by_actor ON orpc_approvals (actor_id, expires_at)
    WHERE status = 'pending';
