#!/usr/bin/env bash
# Herald end to end on this machine: installs what is missing, starts RabbitMQ and PostgreSQL on
# 127.0.0.1, builds Herald, migrates the database, imports the templates and three sample
# devices, starts the APNs/FCM sandbox and the worker (pointed at the sandbox), publishes the
# seed's sample event and shows the pushes the sandbox accepted. The worker then keeps running;
# Ctrl-C stops worker and sandbox gracefully.
#   HERALD_WORKER_SENDER=log deploy/local/run.sh   uses the log sender instead (its lines shown).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
"$here/up.sh"
source "${HERALD_LOCAL_DIR:-/tmp/herald-local}/env"
local_dir=${HERALD_LOCAL_DIR:-/tmp/herald-local}
cd "$root"
say() { printf '\033[1m[herald]\033[0m %s\n' "$*" >&2; }

say "building"
swift build --product herald
herald=$(swift build --show-bin-path)/herald

"$herald" migrate
"$herald" templates import templates
"$herald" devices import "$here/sample-devices.jsonl"

sender=${HERALD_WORKER_SENDER:-providers}
pids=()
stop_all() {
    trap - INT TERM EXIT
    say "stopping"
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop_all INT TERM EXIT

worker_args=()
if [ "$sender" = providers ]; then
    sandbox_dir="$local_dir/sandbox"
    pushes="$sandbox_dir/pushes.jsonl"
    mkdir -p "$sandbox_dir"
    : > "$pushes"
    rm -f "$sandbox_dir/herald.yaml"
    say "starting the APNs/FCM sandbox in $sandbox_dir"
    "$herald" sandbox --dir "$sandbox_dir" --record "$pushes" > "$sandbox_dir/sandbox.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 1 100); do [ -f "$sandbox_dir/herald.yaml" ] && break; sleep 0.1; done
    [ -f "$sandbox_dir/herald.yaml" ] || { cat "$sandbox_dir/sandbox.log" >&2; exit 1; }
    worker_args=(--config "$sandbox_dir/herald.yaml")
    export HERALD_WORKER_SENDER=providers
else
    pushes="$local_dir/deliveries.jsonl"
    : > "$pushes"
    export HERALD_WORKER_SENDER=log HERALD_WORKER_LOG_SENDER_FILE="$pushes"
fi

say "starting the worker (sender: $HERALD_WORKER_SENDER)"
"$herald" worker "${worker_args[@]}" &
worker=$!
pids=("$worker" "${pids[@]}")

say "publishing deploy/local/sample-event.xml (TransferIssued for three users; one device is en-US and is filtered out)"
# A new message id each run: the same body again would be the same event, already delivered.
"$herald" publish --generate-message-id "$here/sample-event.xml"
for _ in $(seq 1 150); do [ "$(wc -l < "$pushes")" -ge 2 ] && break; sleep 0.2; done
say "delivered ($pushes):"
cat "$pushes"
say "the worker keeps running; Ctrl-C stops it"
wait "$worker"
