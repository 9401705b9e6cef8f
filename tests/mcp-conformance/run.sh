#!/usr/bin/env bash
# The official MCP conformance suite against one example MCP server over
# Streamable HTTP (make test-mcp-conformance; mk/mcp-conformance.mk says
# which scenarios run and why the others do not).
#
#   run.sh <name> <baseline.yml> <results dir> <scenario...> -- <server command...>
#
# Env: NODE22 (Node >= 22), CONFORMANCE (the package's dist/index.js).
# The server gets PORT (a free port) and MCP_CONFORMANCE_FIXTURES=1.
# Every wait is bounded: the server must listen within START_S, each
# scenario must finish within SCENARIO_S, the server must stop within STOP_S
# of a TERM (then KILL). The server is stopped on every exit (trap).
set -euo pipefail

START_S=30
SCENARIO_S=60
STOP_S=5

name=$1 baseline=$2 results=$3
shift 3
scenarios=()
while [[ $1 != -- ]]; do
	scenarios+=("$1")
	shift
done
shift

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
rm -rf "$results"
mkdir -p "$results"
log=$results/server.log

server=
stop_server() {
	[[ -n $server ]] || return 0
	kill -TERM "$server" 2>/dev/null || return 0
	for _ in $(seq $((STOP_S * 10))); do
		kill -0 "$server" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$server" 2>/dev/null || true
}
trap stop_server EXIT
trap 'exit 143' TERM INT # so that EXIT's trap runs

# Start the server on a free port and wait for it: poll every 0.1 s, at
# most START_S. The port was free when picked, but another process
# may bind it first: a server that exits saying so gets a new port, at most
# three times.
for attempt in 1 2 3; do
	port=$(free_port)
	PORT=$port MCP_CONFORMANCE_FIXTURES=1 "$@" >"$log" 2>&1 &
	server=$!
	deadline=$((SECONDS + START_S))
	# Ours, not another process's on the same port: the server said it
	# listens there (both example servers log their address) and it answers.
	until grep -q "127.0.0.1:$port" "$log" && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
		if ! kill -0 "$server" 2>/dev/null; then
			if ((attempt < 3)) && grep -qi "EADDRINUSE\|address already in use" "$log"; then
				continue 2
			fi
			echo "$name: the server exited before listening on $port:" >&2
			cat "$log" >&2
			exit 1
		fi
		if ((SECONDS >= deadline)); then
			echo "$name: nothing listening on $port after $START_S s:" >&2
			cat "$log" >&2
			exit 1
		fi
		sleep 0.1
	done
	break
done

url=http://127.0.0.1:$port/mcp
failed=()
for scenario in "${scenarios[@]}"; do
	# The suite's own baseline check: a scenario that fails and is not in the
	# baseline exits 1 (a regression), so does one listed that now passes.
	if timeout --kill-after=5s "${SCENARIO_S}s" "$NODE22" "$CONFORMANCE" server --url "$url" --scenario "$scenario" \
		--expected-failures "$baseline" -o "$results" >"$results/$scenario.txt" 2>&1; then
		echo "$name: $scenario ok"
	else
		echo "$name: $scenario FAILED (exit $?)"
		failed+=("$scenario")
	fi
done

if ((${#failed[@]})); then
	for scenario in "${failed[@]}"; do
		echo "--- $name: $scenario"
		cat "$results/$scenario.txt"
	done
	echo "$name: ${#failed[@]} of ${#scenarios[@]} scenarios failed against the baseline $baseline (results in $results)" >&2
	exit 1
fi
echo "$name: ${#scenarios[@]} scenarios as the baseline expects ($baseline)"
