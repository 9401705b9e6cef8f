-- orpc-agent PostgreSQL schema, migration 4: the session of a request.
--
-- The pending quota of an actor without an id used to be one bucket for
-- every such actor, so one anonymous client could block all the others.
-- Such actors are now counted by the surface and session of the call that
-- asked; the session is kept with the request (and shown in its views).
-- Existing rows have none. By hand:
--   INSERT INTO orpc_schema_migrations (version, name) VALUES (4, '0004_session');

ALTER TABLE orpc_approvals ADD COLUMN session_id text;
CREATE INDEX orpc_approvals_by_anonymous_pending
    ON orpc_approvals (surface, session_id, status, expires_at)
    WHERE actor_id IS NULL;
