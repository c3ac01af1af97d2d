#!/usr/bin/env bash
# Steady as the journal grows: RUNS `herald bench` runs in a row on one scratch database (the
# journal keeps every run's rows), each the median of ROUNDS pipeline rounds of EVENTS events.
# Prints every round, each run's median, and the last run's median against the second's. A
# median of nine rounds, not one round: about a quarter of the rounds drain while the broker is
# in its expensive mode, and the shared host's memory speed moves every process's cost between
# rounds and from one minute to the next; a run of nine rounds spans about two minutes of it
# (docs/performance.md, "Steady as the journal grows" and "Huge pages for PostgreSQL; what moves
# a round": five of five such series within 10 %, nine of fifteen with five rounds). PostgreSQL's
# CPU per delivery divided by the worker's, which does not depend on the journal, shows the
# journal's own share apart from the host's speed. One bare-consumer round per run: this script
# does not report it. Each run fails when its journal differs from the workload (herald bench
# checks it). A benchmark, not a test; about ten minutes.
#
#   scripts/bench-steady.sh                         # 5 runs of 9 rounds of 100,000 events
#   ROUNDS=5 scripts/bench-steady.sh                # shorter runs, which move more with the host
#
# Environment: HERALD (the binary; default .build/release/herald), RUNS, ROUNDS, EVENTS,
# DATABASE (the scratch database's name, created and dropped on the configured server; default
# herald_steady), KEEP_DB=1 (keep it), OUT (a folder for each run's --json; default a folder in
# .build-bench-results). Uses deploy/local's stack: run deploy/local/up.sh first, or set
# HERALD_LOCAL_DIR.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

HERALD=${HERALD:-.build/release/herald}
RUNS=${RUNS:-5}
ROUNDS=${ROUNDS:-9}
EVENTS=${EVENTS:-100000}
DATABASE=${DATABASE:-herald_steady}
OUT=${OUT:-.build-bench-results/steady-$(date -u +%Y%m%dT%H%M%SZ)}

[ -x "$HERALD" ] || { echo "$HERALD is missing: swift build -c release --product herald" >&2; exit 2; }
env_file=${HERALD_LOCAL_DIR:-/tmp/herald-local}/env
[ -f "$env_file" ] || { echo "$env_file is missing: run deploy/local/up.sh first" >&2; exit 2; }
# shellcheck disable=SC1090
source "$env_file"
[ "$RUNS" -ge 3 ] || { echo "RUNS must be at least 3 (the last run is compared with the second)" >&2; exit 2; }

admin=(env PGOPTIONS="-c client_min_messages=warning" psql -h 127.0.0.1 -p "${HERALD_PG_PORT:-5432}" -U postgres -v ON_ERROR_STOP=1 -qAt)
export HERALD_DATABASE_URL="postgres://postgres@127.0.0.1:${HERALD_PG_PORT:-5432}/$DATABASE"
# WITH (FORCE): a bench stopped with it may still hold sessions.
drop_database() { "${admin[@]}" -c "DROP DATABASE IF EXISTS $DATABASE WITH (FORCE)"; }
cleanup() {
    [ "${KEEP_DB:-0}" = 1 ] || drop_database >/dev/null 2>&1 || true
}
trap cleanup EXIT

mkdir -p "$OUT"
drop_database
"${admin[@]}" -c "CREATE DATABASE $DATABASE"
{ "$HERALD" migrate && "$HERALD" templates import templates; } >"$OUT/setup.log" 2>&1 || { cat "$OUT/setup.log" >&2; exit 1; }

for run in $(seq 1 "$RUNS"); do
    echo "run $run of $RUNS ($(date -u +%H:%M:%S))" >&2
    "$HERALD" bench --events "$EVENTS" --rounds "$ROUNDS" --bare-rounds 1 --latency-events 1000 --json >"$OUT/run$run.json" 2>"$OUT/run$run.err" \
        || { cat "$OUT/run$run.err" >&2; exit 1; }
    "${admin[@]}" -d "$DATABASE" -c "SELECT count(*) FROM journal" >"$OUT/run$run.journal"
done

python3 - "$OUT" "$RUNS" <<'PY'
import json, sys
out, runs = sys.argv[1], int(sys.argv[2])
medians = []
print("| run | rounds, events/s | median events/s | worker / PostgreSQL / RabbitMQ µs per delivery (median round) | PostgreSQL ÷ worker | journal rows after |")
print("|---|---|---|---|---|---|")
for run in range(1, runs + 1):
    result = json.load(open(f"{out}/run{run}.json"))
    rates = [r["eventRate"] for r in result["rounds"]]
    # The bench's figure of record is its median round.
    median = result["pipelineEventRate"]
    medians.append(median)
    middle = next(r for r in result["rounds"] if r["eventRate"] == median)["costs"]
    worker, postgres, broker = (middle.get(k) or 0 for k in ("workerCPUMicroseconds", "postgresCPUMicroseconds", "brokerCPUMicroseconds"))
    share = f"{postgres / worker:.2f}" if worker else "-"
    rows = int(open(f"{out}/run{run}.journal").read())
    print(f"| {run} | {', '.join(f'{r:,.0f}' for r in rates)} | {median:,.0f} | {worker:.1f} / {postgres:.1f} / {broker:.1f} | {share} | {rows:,} |")
change = (medians[-1] / medians[1] - 1) * 100
print(f"\nrun {runs} vs run 2: {change:+.1f} % ({'within' if abs(change) <= 10 else 'outside'} 10 %); raw results in {out}")
PY
