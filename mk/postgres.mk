# PostgreSQL approval store and audit sink: tests against a throwaway local
# server that scripts/pg-test-cluster.sh installs (Debian's postgresql),
# starts on 127.0.0.1 and removes afterwards.

.PHONY: test-postgres lint-postgres
TEST_TARGETS += test-postgres
LINT_TARGETS += lint-postgres

test-postgres: ## PostgreSQL store + audit sink tests against a throwaway local server
	scripts/pg-test-cluster.sh run -- \
		$(CARGO) test -p orpc-agent-core --features postgres --test approval_postgres -- --ignored

lint-postgres: ## clippy over the core with the postgres feature
	$(CARGO) clippy -p orpc-agent-core --features postgres --all-targets -- -D warnings
