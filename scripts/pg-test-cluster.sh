#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the PostgreSQL store's tests (issue 8).
#
#   scripts/pg-test-cluster.sh start     create + start a cluster, print its URL
#   scripts/pg-test-cluster.sh url       print the URL of the running cluster
#   scripts/pg-test-cluster.sh restart   stop (immediate: like a crash) and start again
#   scripts/pg-test-cluster.sh stop      stop it and delete its directory
#   scripts/pg-test-cluster.sh run -- CMD...
#       start, run CMD with ORPC_AGENT_TEST_PG_URL (and the variables below)
#       set, stop afterwards whatever happens (trap); exit with CMD's status
#
# On a fresh Debian 12 machine run as root it installs `postgresql` with
# apt-get when no `initdb` is found. The cluster lives in a temp directory
# owned by the `postgres` user (initdb refuses root), listens on 127.0.0.1
# only, on a free port, with trust authentication for loopback, TLS on
# (a self-signed certificate made here) and a role `tls_only` that may only
# connect over TLS, for the sslmode tests.
#
# State (the cluster's directory and port) is kept in $PG_TEST_STATE
# (default target/pg-test-cluster.env), so `url`/`restart`/`stop` find it.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${PG_TEST_STATE:-$here/target/pg-test-cluster.env}"

find_bin() {
    # /usr/local/bin/pg_ctl may be a symlink into a Debian cluster's bin
    # directory (it is on this machine); the real tools live under
    # /usr/lib/postgresql/<major>/bin, which has initdb and postgres too.
    local d
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ]; then
            echo "$d"; return 0
        fi
    done
    if command -v initdb >/dev/null 2>&1; then
        dirname "$(readlink -f "$(command -v initdb)")"; return 0
    fi
    return 1
}

as_pg() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

cmd_start() {
    if [ -f "$STATE" ]; then
        # shellcheck disable=SC1090
        . "$STATE"
        if [ -n "${PGDATA:-}" ] && as_pg "$BIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; then
            cmd_url; return 0
        fi
        rm -f "$STATE"
    fi
    local bin
    if ! bin="$(find_bin)"; then
        echo "pg-test-cluster: no initdb; installing Debian's postgresql" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >&2
        apt-get install -y -qq postgresql >&2
        bin="$(find_bin)"
    fi
    if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
        useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
    fi
    local dir port
    dir="$(mktemp -d /tmp/orpc-pg-test.XXXXXX)"
    port="$(free_port)"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    as_pg "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    # A private CA and a server certificate for 127.0.0.1 signed by it, so
    # sslmode=require can be tested with and without verification.
    (
        cd "$dir"
        openssl req -new -x509 -days 2 -nodes -subj "/CN=orpc-agent test CA" \
            -keyout ca.key -out ca.crt >/dev/null 2>&1
        openssl req -new -nodes -subj "/CN=127.0.0.1" \
            -keyout data/server.key -out server.csr >/dev/null 2>&1
        printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n' >server.ext
        openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
            -days 2 -extfile server.ext -out data/server.crt >/dev/null 2>&1
        rm -f ca.key server.csr server.ext ca.srl
    )
    chmod 600 "$dir/data/server.key"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir/data/server.key" "$dir/data/server.crt" "$dir/ca.crt"
    cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
max_connections = 200
ssl = on
ssl_cert_file = 'server.crt'
ssl_key_file = 'server.key'
CONF
    cat >"$dir/data/pg_hba.conf" <<HBA
local     all  all                  trust
hostssl   all  tls_only 127.0.0.1/32 trust
host      all  tls_only 127.0.0.1/32 reject
host      all  all      127.0.0.1/32 trust
HBA
    cat >"$STATE.tmp" <<ST
BIN=$bin
DIR=$dir
PGDATA=$dir/data
PORT=$port
ST
    mkdir -p "$(dirname "$STATE")"
    mv "$STATE.tmp" "$STATE"
    BIN="$bin" DIR="$dir" PGDATA="$dir/data" PORT="$port"
    # The port was free when picked, but another process may bind it before
    # the server does: then a new port, at most three times.
    local tries=1
    until as_pg "$bin/pg_ctl" -D "$PGDATA" -l "$DIR/server.log" -w -t 60 start >/dev/null; do
        if [ "$tries" -lt 3 ] && grep -q "could not bind\|Address already in use" "$DIR/server.log"; then
            tries=$((tries + 1))
            port="$(free_port)" PORT="$port"
            echo "port = $port" >>"$PGDATA/postgresql.conf"
            sed -i "s/^PORT=.*/PORT=$port/" "$STATE"
            continue
        fi
        cat "$DIR/server.log" >&2
        exit 1
    done
    "$BIN/psql" -q -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -c "CREATE ROLE tls_only LOGIN SUPERUSER" >/dev/null
    cmd_url
}

load() {
    [ -f "$STATE" ] || { echo "pg-test-cluster: not running (no $STATE)" >&2; exit 1; }
    # shellcheck disable=SC1090
    . "$STATE"
}

cmd_url() {
    load
    echo "postgresql://postgres@127.0.0.1:$PORT/postgres"
}

cmd_restart() {
    load
    # Immediate mode: no shutdown checkpoint, like a crash; committed work
    # must come back from the WAL.
    as_pg "$BIN/pg_ctl" -D "$PGDATA" -m immediate -w stop >/dev/null
    as_pg "$BIN/pg_ctl" -D "$PGDATA" -l "$DIR/server.log" -w -t 60 start >/dev/null
}

cmd_stop() {
    [ -f "$STATE" ] || return 0
    load
    as_pg "$BIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$DIR" "$STATE"
}

case "${1:-}" in
    start) cmd_start ;;
    url) cmd_url ;;
    restart) cmd_restart ;;
    stop) cmd_stop ;;
    run)
        shift
        [ "${1:-}" = "--" ] && shift
        trap cmd_stop EXIT INT TERM
        url="$(cmd_start)"
        load
        export ORPC_AGENT_TEST_PG_URL="$url"
        export ORPC_AGENT_TEST_PG_CA="$DIR/ca.crt"
        export ORPC_AGENT_TEST_PG_CLUSTER="$here/scripts/pg-test-cluster.sh"
        export ORPC_AGENT_TEST_PG_BIN="$BIN"
        export PG_TEST_STATE="$STATE"
        set +e
        "$@"
        status=$?
        set -e
        exit "$status"
        ;;
    *)
        sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
        exit 2
        ;;
esac
