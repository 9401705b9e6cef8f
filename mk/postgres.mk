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

# --- The PostgreSQL store through the bindings (issue 8, items 3 and 5) -----
# Each binding's PostgreSQL suite and the cross-binding test (a request
# created by one binding's process, approved by another's, resumed by a
# third) against one throwaway server. The bindings' own deps and native
# builds come from their make targets.

.PHONY: test-postgres-bindings pg-bindings-deps
TEST_TARGETS += test-postgres-bindings

pg-bindings-deps: node-native node-ts python-develop

test-postgres-bindings: pg-bindings-deps ## Node + Python PostgreSQL store, audit sink, multi-process and cross-binding tests
	scripts/pg-test-cluster.sh run -- sh -c '\
		(cd $(NODE_DIR) && node --test --test-concurrency=1 test/postgres/*.test.js) && \
		(cd $(PY_DIR) && $(CURDIR)/$(VPY) -m pytest -q -p no:cacheprovider tests_postgres)'
