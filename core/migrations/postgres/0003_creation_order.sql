-- orpc-agent PostgreSQL schema, migration 3: a total creation order.
--
-- Requests are listed by creation time; two created in the same
-- millisecond used to be ordered by their random ids, so "in creation
-- order" held only by luck. `seq` numbers rows as they are inserted (a
-- sequence: total, and monotonic within one inserting session), and every
-- paging index ends in it instead of `id`. Existing rows are numbered in
-- their old (created_at, id) order. By hand:
--   INSERT INTO orpc_schema_migrations (version, name) VALUES (3, '0003_creation_order');

CREATE SEQUENCE orpc_approvals_seq AS bigint;
ALTER TABLE orpc_approvals ADD COLUMN seq bigint;
UPDATE orpc_approvals SET seq = numbered.n
FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS n FROM orpc_approvals) AS numbered
WHERE orpc_approvals.id = numbered.id;
SELECT setval('orpc_approvals_seq', COALESCE((SELECT max(seq) FROM orpc_approvals), 0) + 1, false);
ALTER TABLE orpc_approvals
    ALTER COLUMN seq SET DEFAULT nextval('orpc_approvals_seq'),
    ALTER COLUMN seq SET NOT NULL;
ALTER SEQUENCE orpc_approvals_seq OWNED BY orpc_approvals.seq;
CREATE UNIQUE INDEX orpc_approvals_by_seq ON orpc_approvals (seq);

-- The paging indexes of migration 1, with `seq` as the tie-breaker.
DROP INDEX orpc_approvals_by_created;
DROP INDEX orpc_approvals_by_status;
DROP INDEX orpc_approvals_by_capability;
DROP INDEX orpc_approvals_by_actor;
CREATE INDEX orpc_approvals_by_created ON orpc_approvals (created_at, seq);
CREATE INDEX orpc_approvals_by_status ON orpc_approvals (status, created_at, seq);
CREATE INDEX orpc_approvals_by_capability ON orpc_approvals (capability_id, status, created_at, seq);
CREATE INDEX orpc_approvals_by_actor ON orpc_approvals (actor_id, status, created_at, seq);
