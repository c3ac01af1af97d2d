#!/usr/bin/env bash
# kill -9 in the middle of a broadcast to N devices, then a restart (issue 47): every device
# gets the push once, a repeat only with the same collapse id, and the rest resumes within
# seconds. A campaign run on demand, not a test: about 10 minutes for 1,000,000 devices.
#
#   scripts/broadcast-kill.sh                      # 1,000,000 devices, killed at 40 %
#   N=200000 KILL_AT=70 DELAY=0ms scripts/broadcast-kill.sh
#   OUTAGE=1 scripts/broadcast-kill.sh             # APNs answers 503 until 5 s after the restart
#
# A real `herald worker` process (worker.sender providers, payload profile modern, so that an
# Android repeat carries its delivery key too) sends to a `herald sandbox` answering after DELAY
# (default 30ms), which records every push it accepts. When the broadcast's progress
# (`broadcasts.selected`) passes KILL_AT % of N, the worker is killed with SIGKILL and a new one
# started at once; it takes the broadcast over when the dead one's lease (10 s) runs out. The
# check, from the sandbox's record and the journal: every device got the push; a device that
# got it twice got the same collapse id both times (the in-doubt window: sent, not yet
# recorded, at the kill); the journal has one `sent` row per device; seconds from the restart
# to the first push after it; the workers' peak RSS. Exits 1 on any difference. With OUTAGE=1
# APNs answers 503 from the start until 5 s after the restart: the iPhones' deliveries wait in
# the backlog (its circuit breaker is open), the restarted worker takes the backlog over, and the
# run also reports seconds from the end of the outage to the last push.
#
# Environment: HERALD (default .build/release/herald), N, KILL_AT (percent), DELAY, DATABASE
# (scratch database, created and dropped; default herald_bkill), KEEP=1 (keep it and the run
# folder's sandbox record), OUT (run folder; default one in .build-bench-results). Uses
# deploy/local's stack: run deploy/local/up.sh first, or set HERALD_LOCAL_DIR.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

HERALD=${HERALD:-.build/release/herald}
N=${N:-1000000}
KILL_AT=${KILL_AT:-40}
DELAY=${DELAY:-30ms}
DATABASE=${DATABASE:-herald_bkill}
OUT=${OUT:-.build-bench-results/broadcast-kill-$(date -u +%Y%m%dT%H%M%SZ)}

[ -x "$HERALD" ] || { echo "$HERALD is missing: swift build -c release --product herald" >&2; exit 2; }
env_file=${HERALD_LOCAL_DIR:-/tmp/herald-local}/env
[ -f "$env_file" ] || { echo "$env_file is missing: run deploy/local/up.sh first" >&2; exit 2; }
# shellcheck disable=SC1090
source "$env_file"
# shellcheck source=../deploy/local/lib.sh
source deploy/local/lib.sh # rmqctl, to delete the run's queues
[ "$KILL_AT" -gt 0 ] && [ "$KILL_AT" -lt 100 ] || { echo "KILL_AT is a percentage between 1 and 99" >&2; exit 2; }

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
admin=(env PGOPTIONS="-c client_min_messages=warning" psql -h 127.0.0.1 -p "${HERALD_PG_PORT:-5432}" -U postgres -v ON_ERROR_STOP=1 -qAt)
query() { "${admin[@]}" -d "$DATABASE" -c "$1"; }
export HERALD_DATABASE_URL="postgres://postgres@127.0.0.1:${HERALD_PG_PORT:-5432}/$DATABASE"
export HERALD_AMQP_QUEUE=herald.bkill
export HERALD_WORKER_PAYLOAD_PROFILE=modern
export HERALD_LOG_LEVEL=info
# Windows only past worker.broadcast_memory (default 100,000): a smaller N is windowed too.
export HERALD_WORKER_BROADCAST_MEMORY=$(( N / 2 < 100000 ? N / 2 : 100000 ))

pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
    for queue in $(rmqctl list_queues name -q 2>/dev/null | grep "^$HERALD_AMQP_QUEUE"); do
        rmqctl delete_queue "$queue" >/dev/null 2>&1 || true
    done
    if [ "${KEEP:-0}" != 1 ]; then
        "${admin[@]}" -c "DROP DATABASE IF EXISTS $DATABASE WITH (FORCE)" >/dev/null 2>&1 || true
        rm -f "$OUT/sandbox/pushes.jsonl"
    fi
}
trap cleanup EXIT
now() { date +%s.%N; }

echo "setting up $DATABASE with $N devices ($(date -u +%H:%M:%S))" >&2
"${admin[@]}" -c "DROP DATABASE IF EXISTS $DATABASE WITH (FORCE)"
"${admin[@]}" -c "CREATE DATABASE $DATABASE"
{ "$HERALD" migrate && "$HERALD" templates import templates; } >"$OUT/setup.log" 2>&1 || { cat "$OUT/setup.log" >&2; exit 1; }
# Even devices are iPhones, odd ones Android phones; all in branch bkill.
python3 - "$N" <<'PY' | "$HERALD" devices import - >>"$OUT/setup.log" 2>&1 || { cat "$OUT/setup.log" >&2; exit 1; }
import json, sys
for n in range(int(sys.argv[1])):
    ios = n % 2 == 0
    print(json.dumps(dict(device_id=f"bk{n}", platform="ios" if ios else "android", token=f"{1_000_000_000 + n:064x}" if ios else f"bk-fcm-{n}",
                          user_id=f"bku{n}", culture="ru-RU", zone="1", branch="bkill")))
PY

read -r apns_port fcm_port < <(python3 -c '
import socket
ports = []
for _ in range(2):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); ports.append(s.getsockname()[1]); s.close()
print(*ports)')
rm -rf "$OUT/sandbox" # a fresh record, and no herald.yaml of an earlier run's ports
"$HERALD" sandbox --dir "$OUT/sandbox" --apns-port "$apns_port" --fcm-port "$fcm_port" --response-delay "$DELAY" >"$OUT/sandbox.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -f "$OUT/sandbox/herald.yaml" ] && break; sleep 0.1; done
[ -f "$OUT/sandbox/herald.yaml" ] || { echo "herald sandbox did not start: $OUT/sandbox.log" >&2; exit 1; }

outage() { # PUT or DELETE APNs's outage on the sandbox
    curl -fsS --cacert "$OUT/sandbox/ca.pem" -X "$1" "https://localhost:$fcm_port/_sandbox/apns/outage" -d '{"status": 503, "fraction": 1}' >/dev/null
}
[ "${OUTAGE:-0}" = 1 ] && outage PUT

start_worker() {
    "$HERALD" worker --config "$OUT/sandbox/herald.yaml" >>"$OUT/worker-$1.log" 2>&1 &
    pids+=($!)
    echo $!
}
peak_rss() { awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$1/status" 2>/dev/null || echo 0; }

first=$(start_worker 1)
cat >"$OUT/event.xml" <<'XML'
<PushNotification><EventId>TransferIssued</EventId><EventType>Message</EventType><EventDateTime>2026-12-02T08:00:00+03:00</EventDateTime><EventFilters><Filter name="UserId" value="0" /><Filter name="BranchId" value="bkill" /></EventFilters><EventParams><EventParam name="amount" value="1.00" /><EventParam name="currency" value="RUB" /></EventParams></PushNotification>
XML
sleep 2
"$HERALD" publish "$OUT/event.xml" --message-id "bkill-$(date +%s)" >>"$OUT/setup.log" 2>&1
published=$(now)
echo "published a broadcast to $N devices; killing the worker at $KILL_AT % ($(date -u +%H:%M:%S))" >&2

kill_mark=$((N * KILL_AT / 100))
selected=0
deadline=$(( $(date +%s) + 1800 ))
until [ "$selected" -ge "$kill_mark" ]; do
    [ "$(date +%s)" -lt "$deadline" ] || { echo "no progress to $kill_mark devices in 30 minutes" >&2; exit 1; }
    kill -0 "$first" 2>/dev/null || { echo "the worker exited: $OUT/worker-1.log" >&2; exit 1; }
    sleep 0.2
    selected=$(query "SELECT coalesce(max(selected), -1) FROM broadcasts")
    if [ "$selected" -lt 0 ] && python3 -c "import sys; sys.exit(not $(now) - $published > 60)"; then
        echo "no windowed broadcast 60 s after publishing (see $OUT/worker-1.log)" >&2
        exit 1
    fi
done
first_rss=$(peak_rss "$first")
kill -9 "$first"
killed=$(now)
second=$(start_worker 2)
restarted=$(now)
echo "killed at $selected devices selected; restarted ($(date -u +%H:%M:%S))" >&2
recovered=0
if [ "${OUTAGE:-0}" = 1 ]; then
    sleep 5
    outage DELETE
    recovered=$(now)
fi

# Done: its windows are done, and nothing of it waits in the backlog.
until [ "$(query "SELECT (SELECT count(*) FROM broadcasts WHERE state = 'done') + (SELECT count(*) FROM backlog)")" = 1 ]; do
    [ "$(date +%s)" -lt "$deadline" ] || { echo "the broadcast did not finish in 30 minutes" >&2; exit 1; }
    kill -0 "$second" 2>/dev/null || { echo "the restarted worker exited: $OUT/worker-2.log" >&2; exit 1; }
    sleep 1
done
finished=$(now)
second_rss=$(peak_rss "$second")
kill -TERM "$second"
wait "$second" 2>/dev/null || true
sleep 1 # the sandbox's record is written as it answers

query "SELECT state, count(*), count(DISTINCT device_ref) FROM journal GROUP BY state ORDER BY state" >"$OUT/journal.tsv"
query "SELECT count(*) FROM (SELECT device_ref FROM journal WHERE state = 'sent' GROUP BY device_ref HAVING count(*) > 1) twice" >"$OUT/journal-twice"
query "SELECT selected FROM broadcasts" >"$OUT/selected"

python3 - "$OUT" "$N" "$published" "$killed" "$restarted" "$finished" "$first_rss" "$second_rss" "$DELAY" "$KILL_AT" "$recovered" <<'PY'
import collections, datetime, json, re, sys
out, n = sys.argv[1], int(sys.argv[2])
published, killed, restarted, finished = map(float, sys.argv[3:7])
first_rss, second_rss, delay, kill_at = int(sys.argv[7]), int(sys.argv[8]), sys.argv[9], sys.argv[10]
recovered = float(sys.argv[11])
token = re.compile(rb'"token":"([^"]+)"')
collapse = re.compile(rb'"apns-collapse-id":"([^"]+)"|"dk":"([^"]+)"')
when = re.compile(rb'"time":"([^"]+)"')
seen = collections.defaultdict(list)
after_restart = None
last_push = 0
with open(f"{out}/sandbox/pushes.jsonl", "rb") as record:
    for line in record:
        tokens = token.findall(line)
        key = collapse.search(line)
        t = datetime.datetime.fromisoformat(when.search(line).group(1).decode().replace("Z", "+00:00")).timestamp()
        seen[tokens[-1]].append(key.group(1) or key.group(2) if key else None)
        if t >= restarted and (after_restart is None or t < after_restart):
            after_restart = t
        last_push = max(last_push, t)
expected = {f"{1_000_000_000 + i:064x}".encode() if i % 2 == 0 else f"bk-fcm-{i}".encode() for i in range(n)}
missing = len(expected - seen.keys())
unexpected = len(seen.keys() - expected)
repeats = sum(len(keys) - 1 for keys in seen.values())
visible = sum(len(set(keys)) - 1 + (None in keys and len(keys) > 1) for keys in seen.values())
journal = {row.split("|")[0]: (int(row.split("|")[1]), int(row.split("|")[2])) for row in open(f"{out}/journal.tsv").read().split()}
twice = int(open(f"{out}/journal-twice").read())
selected = int(open(f"{out}/selected").read())
sent_rows, sent_devices = journal.get("sent", (0, 0))
other_rows = sum(rows for state, (rows, _) in journal.items() if state != "sent")
resume = after_restart - restarted if after_restart else float("nan")
failures = []
if missing: failures.append(f"{missing} devices got nothing")
if unexpected: failures.append(f"{unexpected} pushes to unknown tokens")
if visible: failures.append(f"{visible} user-visible duplicates (a repeat with another or no collapse id)")
if sent_rows != n or sent_devices != n or twice: failures.append(f"journal: {sent_rows} sent rows for {sent_devices} devices, {twice} devices twice (expected {n})")
if other_rows: failures.append(f"journal: {other_rows} rows not sent: {journal}")
if selected != n: failures.append(f"the broadcast's audience is {selected}, not {n}")
print(f"| broadcast to {n:,} devices, real senders, sandbox at {delay}, kill -9 at {kill_at} %{', APNs out until 5 s after the restart' if recovered else ''} | |")
print("|---|---|")
print(f"| devices that got it | {n - missing:,} of {n:,} |")
print(f"| repeats (in doubt at the kill), all with the same collapse id | {repeats:,} |")
print(f"| user-visible duplicates | {visible:,} |")
print(f"| journal: sent rows / devices / devices twice | {sent_rows:,} / {sent_devices:,} / {twice} |")
print(f"| killed after / finished after | {killed - published:.1f} s / {finished - published:.1f} s |")
print(f"| restart → first push | {resume:.1f} s (the dead worker's lease: 10 s) |")
if recovered:
    print(f"| APNs outage ended → last push | {last_push - recovered:.1f} s |")
print(f"| peak RSS killed worker / restarted worker | {first_rss} MB / {second_rss} MB |")
if failures:
    print("FAILED: " + "; ".join(failures))
    sys.exit(1)
print(f"passed; run folder {out}")
PY
