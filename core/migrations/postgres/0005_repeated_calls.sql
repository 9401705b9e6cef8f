-- orpc-agent PostgreSQL schema, migration 5: repeated calls find their
-- earlier request.
--
-- A client that calls an approval-gated MCP tool again with the same
-- arguments gets its pending request back, or runs the approved one, instead
-- of a new request (issue 18). The look-up is by capability and input hash.
-- By hand:
--   INSERT INTO orpc_schema_migrations (version, name) VALUES (5, '0005_repeated_calls');

CREATE INDEX orpc_approvals_by_call ON orpc_approvals (capability_id, input_hash);
