# Shared functions for Herald's local stack scripts (sourced, not run).
# RabbitMQ and PostgreSQL run on 127.0.0.1 with their data under HERALD_LOCAL_DIR, a throwaway
# folder; nothing is installed as a system service and no system-wide data folder is touched.
# A second, private stack (tests that restart the broker or the database use one) sets
# HERALD_LOCAL_DIR, HERALD_LOCAL_AMQP_PORT, HERALD_LOCAL_PG_PORT and HERALD_LOCAL_RMQ_NODE.
# PostgreSQL writes durably unless HERALD_PG_DURABLE=0 (pg_durable_value).
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
    pg_durable_value >/dev/null || exit 1
    if port_open "$HERALD_PG_PORT"; then
        log "PostgreSQL already listening on 127.0.0.1:$HERALD_PG_PORT"
        # Ours (its data folder is here): the three settings follow HERALD_PG_DURABLE without a
        # restart (all three take a reload).
        if [ -f "$PG_DIR/data/PG_VERSION" ]; then
            postgres_write_durability
            postgres_reload_durability
        fi
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
# The journal's and messages' indexes stay in memory as they grow (with the default 128MB the
# benchmark slowed by a fifth over five rounds of 100,000 events; with 1GB it stays level).
shared_buffers = ${HERALD_PG_SHARED_BUFFERS:-1GB}
# Everything is in memory: with the default 4 the planner read all of device_users and devices
# to find a chunk's 150 users among 10,000 (1.9 ms a chunk; 0.5 ms through the indexes).
random_page_cost = 1.1
CONF
        fi
        postgres_write_durability
        # The test suite runs its suites in parallel, each with its own pools and child processes.
        local connections="max_connections=${HERALD_PG_MAX_CONNECTIONS:-1000}"
        [ "${HERALD_PG_HUGE_PAGES:-0}" = 1 ] && reserve_huge_pages -c "$connections"
        log "starting PostgreSQL on 127.0.0.1:$HERALD_PG_PORT (data in $PG_DIR)"
        pg_run "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/postgres.log" -w -o "-c $connections" start >/dev/null \
            || die "PostgreSQL did not start; see $PG_DIR/postgres.log"
    fi
    postgres_check_durability
    local db
    for db in herald herald_test; do
        psql -h 127.0.0.1 -p "$HERALD_PG_PORT" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1 \
            || psql -h 127.0.0.1 -p "$HERALD_PG_PORT" -U postgres -qc "CREATE DATABASE $db" >/dev/null
    done
    log "PostgreSQL is up"
}

# Durable by default: fsync, synchronous_commit and full_page_writes on (PostgreSQL's own
# defaults), so that a commit survives a crash of the server or the machine and every figure
# measured on this stack (the quick start, herald bench, compare.sh, the fault campaign) is one a
# deployment can have. HERALD_PG_DURABLE=0 turns the three off: commits may be lost on a crash,
# for speed only; the test command (test.sh) sets it, since its databases are thrown away.
pg_durable_value() {
    case "${HERALD_PG_DURABLE:-1}" in
        1) echo on ;;
        0) echo off ;;
        *) die "HERALD_PG_DURABLE must be 1 (durable, the default) or 0 (fast, for the tests), not '$HERALD_PG_DURABLE'" ;;
    esac
}

# Writes the three settings to herald-durability.conf in the data folder, which postgresql.conf
# includes last (so that it also wins over the lines older stacks wrote into postgresql.conf).
postgres_write_durability() {
    local value conf="$PG_DIR/data/postgresql.conf" file="$PG_DIR/data/herald-durability.conf"
    value=$(pg_durable_value) || exit 1
    grep -qx "include_if_exists = 'herald-durability.conf'" "$conf" \
        || printf "include_if_exists = 'herald-durability.conf'\n" | pg_run tee -a "$conf" >/dev/null
    printf '# Written by deploy/local/lib.sh from HERALD_PG_DURABLE (1: on, the default; 0: off).\nfsync = %s\nsynchronous_commit = %s\nfull_page_writes = %s\n' \
        "$value" "$value" "$value" | pg_run tee "$file" >/dev/null
}

# What the running server uses: "fsync synchronous_commit full_page_writes", e.g. "on on on".
postgres_durability_in_use() {
    psql -h 127.0.0.1 -p "$HERALD_PG_PORT" -U postgres -d postgres -tA \
        -c "SELECT current_setting('fsync') || ' ' || current_setting('synchronous_commit') || ' ' || current_setting('full_page_writes')"
}

# A running server rereads herald-durability.conf on a reload. From fsync off to on, what it
# wrote without fsync may still be in the kernel's cache only: sync writes it out (PostgreSQL's
# documentation of fsync asks for that).
postgres_reload_durability() {
    local before wanted i
    wanted=$(pg_durable_value) || exit 1
    before=$(postgres_durability_in_use) || return 0
    [ "$before" = "$wanted $wanted $wanted" ] && return 0
    log "PostgreSQL: fsync, synchronous_commit, full_page_writes $before -> $wanted (reload)"
    pg_run "$PG_BIN/pg_ctl" -D "$PG_DIR/data" reload >/dev/null
    for i in $(seq 1 50); do
        [ "$(postgres_durability_in_use)" = "$wanted $wanted $wanted" ] && break
        sleep 0.1
    done
    [ "$wanted" = on ] && [ "${before%% *}" = off ] && sync
    return 0
}

# Says which settings the server runs with; fails when durability was asked for (the default)
# and the server does not write durably (one not started by these scripts, say).
postgres_check_durability() {
    local in_use wanted
    wanted=$(pg_durable_value) || exit 1
    in_use=$(postgres_durability_in_use) || die "cannot read PostgreSQL's settings on 127.0.0.1:$HERALD_PG_PORT"
    if [ "$in_use" = "on on on" ]; then
        log "PostgreSQL writes durably (fsync, synchronous_commit, full_page_writes: $in_use)"
    elif [ "$wanted" = off ]; then
        log "PostgreSQL does not write durably (fsync, synchronous_commit, full_page_writes: $in_use; HERALD_PG_DURABLE=0, for tests only)"
    else
        die "PostgreSQL on 127.0.0.1:$HERALD_PG_PORT does not write durably (fsync, synchronous_commit, full_page_writes: $in_use) (a server these scripts did not start, with no data folder in $PG_DIR, is not changed from here); turn the three on, or set HERALD_PG_DURABLE=0 to go on without durability"
    fi
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
