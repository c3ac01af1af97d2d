# Shared functions for Herald's local stack scripts (sourced, not run).
# RabbitMQ and PostgreSQL run on 127.0.0.1 with their data under HERALD_LOCAL_DIR, a throwaway
# folder; nothing is installed as a system service and no system-wide data folder is touched.
# A second, private stack (tests that restart the broker or the database use one) sets
# HERALD_LOCAL_DIR, HERALD_LOCAL_AMQP_PORT, HERALD_LOCAL_PG_PORT and HERALD_LOCAL_RMQ_NODE.
set -euo pipefail

HERALD_LOCAL_DIR=${HERALD_LOCAL_DIR:-/tmp/herald-local}
HERALD_AMQP_PORT=${HERALD_LOCAL_AMQP_PORT:-5672}
HERALD_PG_PORT=${HERALD_LOCAL_PG_PORT:-5432}
RMQ_DIR="$HERALD_LOCAL_DIR/rabbitmq"
PG_DIR="$HERALD_LOCAL_DIR/postgres"
PG_BIN=${HERALD_PG_BIN:-/usr/lib/postgresql/15/bin}
RMQ_NODE=${HERALD_LOCAL_RMQ_NODE:-rabbit@localhost}
APT_PACKAGES=(rabbitmq-server librabbitmq-dev libpq-dev postgresql libcurl4-openssl-dev libjemalloc-dev pkgconf)

log() { printf '\033[1m[herald-local]\033[0m %s\n' "$*" >&2; }
die() { printf '[herald-local] error: %s\n' "$*" >&2; exit 1; }

# Installs the Debian packages that are missing. Needs root; a non-root user is told what to run.
ensure_packages() {
    local missing=()
    for p in "${APT_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        die "missing Debian packages: ${missing[*]} (run: sudo apt-get install -y ${missing[*]})"
    fi
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

rmq_env() {
    export HOME="$RMQ_DIR"
    export RABBITMQ_NODENAME="$RMQ_NODE"
    export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
    export RABBITMQ_NODE_PORT="$HERALD_AMQP_PORT"
    export RABBITMQ_DIST_PORT=$((HERALD_AMQP_PORT + 20000))
    export ERL_EPMD_ADDRESS=127.0.0.1
    export RABBITMQ_MNESIA_BASE="$RMQ_DIR/mnesia"
    export RABBITMQ_LOG_BASE="$RMQ_DIR/log"
    export RABBITMQ_PID_FILE="$RMQ_DIR/rabbit.pid"
    export RABBITMQ_ENABLED_PLUGINS_FILE="$RMQ_DIR/enabled_plugins"
    export RABBITMQ_CONFIG_FILE="$RMQ_DIR/rabbitmq"
}

rmqctl() { (rmq_env; /usr/lib/rabbitmq/bin/rabbitmqctl -n "$RMQ_NODE" "$@"); }

rabbitmq_start() {
    if port_open "$HERALD_AMQP_PORT"; then
        log "RabbitMQ already listening on 127.0.0.1:$HERALD_AMQP_PORT"
        return 0
    fi
    mkdir -p "$RMQ_DIR/mnesia" "$RMQ_DIR/log"
    [ -f "$RMQ_DIR/enabled_plugins" ] || echo '[].' > "$RMQ_DIR/enabled_plugins"
    # Loopback only; the guest user may then log in. Generous limits for test bursts. Classic
    # queues of version 2, RabbitMQ's default from 3.13: docs/operations.md says why.
    cat > "$RMQ_DIR/rabbitmq.conf" <<CONF
listeners.tcp.default = 127.0.0.1:$HERALD_AMQP_PORT
loopback_users = none
disk_free_limit.absolute = 50MB
vm_memory_high_watermark.relative = 0.6
classic_queue.default_version = 2
CONF
    log "starting RabbitMQ on 127.0.0.1:$HERALD_AMQP_PORT (data in $RMQ_DIR)"
    (rmq_env; /usr/lib/rabbitmq/bin/rabbitmq-server -detached >/dev/null 2>&1)
    local i
    for i in $(seq 1 120); do
        port_open "$HERALD_AMQP_PORT" && break
        sleep 0.5
    done
    rmqctl await_startup >/dev/null 2>&1 || die "RabbitMQ did not start; see $RMQ_DIR/log"
    log "RabbitMQ is up"
}

rabbitmq_stop() {
    if [ -f "$RMQ_DIR/rabbit.pid" ] && kill -0 "$(cat "$RMQ_DIR/rabbit.pid")" 2>/dev/null; then
        log "stopping RabbitMQ"
        rmqctl shutdown >/dev/null 2>&1 || kill -KILL "$(cat "$RMQ_DIR/rabbit.pid")" 2>/dev/null || true
    fi
    local i
    for i in $(seq 1 40); do port_open "$HERALD_AMQP_PORT" || break; sleep 0.25; done
}

pg_run() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

postgres_start() {
    if port_open "$HERALD_PG_PORT"; then
        log "PostgreSQL already listening on 127.0.0.1:$HERALD_PG_PORT"
    else
        mkdir -p "$PG_DIR"
        [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$PG_DIR"
        if [ ! -f "$PG_DIR/data/PG_VERSION" ]; then
            log "creating a PostgreSQL cluster in $PG_DIR/data"
            pg_run "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
            cat >> "$PG_DIR/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $HERALD_PG_PORT
unix_socket_directories = '$PG_DIR'
fsync = ${HERALD_PG_FSYNC:-off}
synchronous_commit = ${HERALD_PG_SYNCHRONOUS_COMMIT:-off}
full_page_writes = off
# The journal's and messages' indexes stay in memory as they grow (with the default 128MB the
# benchmark slowed by a fifth over five rounds of 100,000 events; with 1GB it stays level).
shared_buffers = ${HERALD_PG_SHARED_BUFFERS:-1GB}
# Everything is in memory: with the default 4 the planner read all of device_users and devices
# to find a chunk's 150 users among 10,000 (1.9 ms a chunk; 0.5 ms through the indexes).
random_page_cost = 1.1
CONF
        fi
        # The test suite runs its suites in parallel, each with its own pools and child processes.
        local connections="max_connections=${HERALD_PG_MAX_CONNECTIONS:-1000}"
        [ "${HERALD_PG_HUGE_PAGES:-0}" = 1 ] && reserve_huge_pages -c "$connections"
        log "starting PostgreSQL on 127.0.0.1:$HERALD_PG_PORT (data in $PG_DIR)"
        pg_run "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/postgres.log" -w -o "-c $connections" start >/dev/null \
            || die "PostgreSQL did not start; see $PG_DIR/postgres.log"
    fi
    local db
    for db in herald herald_test; do
        psql -h 127.0.0.1 -p "$HERALD_PG_PORT" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1 \
            || psql -h 127.0.0.1 -p "$HERALD_PG_PORT" -U postgres -qc "CREATE DATABASE $db" >/dev/null
    done
    log "PostgreSQL is up"
}

# PostgreSQL's shared memory (1 GB of buffers) in 2 MB pages rather than 4 KB ones: far fewer TLB
# misses on buffer accesses. Measured with herald bench (docs/performance.md, "Huge pages for
# PostgreSQL; what moves a round"): PostgreSQL's CPU per delivery 5-9 % lower, the pipeline 4-7 %
# faster. Needs root and a writable /proc/sys; the kernel keeps the pages reserved until
# `sysctl vm.nr_hugepages=0` or a reboot. Where they cannot be had, PostgreSQL's default
# (huge_pages = try) uses normal pages.
# Arguments: the settings PostgreSQL will start with that change its shared memory's size.
reserve_huge_pages() {
    [ "$(id -u)" -eq 0 ] && [ -w /proc/sys/vm/nr_hugepages ] || return 0
    local needed available total
    needed=$(pg_run "$PG_BIN/postgres" -D "$PG_DIR/data" "$@" -C shared_memory_size_in_huge_pages 2>/dev/null) || return 0
    [[ $needed =~ ^[0-9]+$ ]] || return 0
    # Free pages that no running program has reserved yet.
    available=$(awk '/^HugePages_Free:/ {free = $2} /^HugePages_Rsvd:/ {reserved = $2} END {print free - reserved}' /proc/meminfo)
    [ "$available" -ge "$needed" ] && return 0
    total=$(cat /proc/sys/vm/nr_hugepages)
    echo $((total + needed - available)) >/proc/sys/vm/nr_hugepages 2>/dev/null || return 0
    # The kernel grants fewer when memory is too fragmented.
    log "reserved $(($(cat /proc/sys/vm/nr_hugepages) - total)) huge pages of 2 MB for PostgreSQL's shared memory (it needs $needed)"
}

postgres_stop() {
    if [ -f "$PG_DIR/data/postmaster.pid" ]; then
        log "stopping PostgreSQL"
        pg_run "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
}

write_env_file() {
    cat > "$HERALD_LOCAL_DIR/env" <<ENV
export HERALD_AMQP_URL=amqp://guest:guest@127.0.0.1:$HERALD_AMQP_PORT/
export HERALD_DATABASE_URL=postgres://postgres@127.0.0.1:$HERALD_PG_PORT/herald
export HERALD_TEST_AMQP_URL=amqp://guest:guest@127.0.0.1:$HERALD_AMQP_PORT/
export HERALD_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:$HERALD_PG_PORT/herald_test
export HERALD_TEST_RABBITMQ_HOME=$RMQ_DIR
export HERALD_TEST_STACK_CTL=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/ctl.sh
ENV
}
