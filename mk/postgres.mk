# PostgreSQL approval store and audit sink: tests against a throwaway local
# server that scripts/pg-test-cluster.sh installs (Debian's postgresql),
# starts on 127.0.0.1 and removes afterwards.

.PHONY: test-postgres lint-postgres
TEST_TARGETS += test-postgres
LINT_TARGETS += lint-postgres

test-postgres: ## PostgreSQL store + audit sink tests against a throwaway local server
	scripts/pg-test-cluster.sh run -- \
		$(BOUNDED) 15m $(CARGO) test -p orpc-agent-core --features postgres --test approval_postgres -- --ignored

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
		(cd $(NODE_DIR) && $(NODE_TEST) test/postgres/*.test.js) && \
		(cd $(PY_DIR) && $(CURDIR)/$(VPY) -m pytest -q -p no:cacheprovider tests_postgres)'

# --- make demo-cluster (issue 8, item 6) -------------------------------------
# Two instances of one oRPC app sharing approvals through a throwaway
# PostgreSQL: asked on A, approved and resumed on B, refused again on A.

CLUSTER_DEMO := examples/cluster-demo

.PHONY: demo-cluster cluster-demo-link
DEMO_TARGETS += demo-cluster

cluster-demo-link: node-native node-ts
	@mkdir -p $(CLUSTER_DEMO)/node_modules/@orpc-agent
	@for dep in bindings-node/node_modules/*; do \
		ln -sfn ../../../$$dep $(CLUSTER_DEMO)/node_modules/$$(basename $$dep); \
	done
	@ln -sfn ../../../../bindings-node $(CLUSTER_DEMO)/node_modules/@orpc-agent/core

demo-cluster: cluster-demo-link ## two app instances on one PostgreSQL: approval asked on A, approved + resumed on B
	scripts/pg-test-cluster.sh run -- node $(CLUSTER_DEMO)/demo.mjs

# --- Swift (issue 8, item 3) -------------------------------------------------
# The Swift PostgreSQL suite in the Swift chroot (it reaches the server on
# the host's loopback: same network namespace), closing the cross-binding
# chain: Node creates a request, Python approves it, Swift resumes it.

.PHONY: test-postgres-swift
TEST_TARGETS += test-postgres-swift

test-postgres-swift: swift-lib pg-bindings-deps ## Swift PostgreSQL tests; Node creates, Python approves, Swift resumes
	scripts/pg-test-cluster.sh run -- sh -c '\
		id=$$(node $(NODE_DIR)/test/postgres/app.mjs create swift-chain o-swift | \
			python3 -c "import json, sys; print(json.load(sys.stdin)[\"id\"])") && \
		echo "node created $$id" && \
		$(VPY) $(PY_DIR)/tests_postgres/app.py approve $$id boss >/dev/null && echo "python approved $$id" && \
		$(SWIFT_SH) run "cd $(SWIFT_PKG) && ORPC_AGENT_REQUIRE_PG=1 ORPC_AGENT_TEST_PG_URL=$$ORPC_AGENT_TEST_PG_URL \
			ORPC_AGENT_TEST_PG_APPROVED_ID=$$id LIBRARY_PATH=$(call SWIFT_LIBDIR,debug) swift test --disable-swift-testing --filter PostgresTests"'

# --- bench (issue 8, item 7 figures from the Node binding) -------------------
.PHONY: bench-postgres-bindings
BENCH_TARGETS += bench-postgres-bindings

bench-postgres-bindings: pg-bindings-deps ## approval create+decide+resume: PostgreSQL vs SQLite, 1 and 8 clients (Node)
	scripts/pg-test-cluster.sh run -- node $(NODE_DIR)/bench/approvals-pg.bench.mjs
