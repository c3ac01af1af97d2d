#!/usr/bin/env bash
# Measures `herald sandbox`'s own ceiling with h2load (Debian's nghttp2-client): HTTP/2 over
# TLS, requests that pass every check the sandbox makes (a signed provider token, topic, push
# type, priority; an OAuth2 access token from its token endpoint and a valid FCM message), on
# both routes: APNs `POST /3/device/<token>` and FCM `POST /v1/projects/<id>/messages:send`.
# Every accepted push is recorded (the record file included), as in normal use.
#
# Prints requests/s per route and both at once, the sandbox's CPU per request (from
# /proc/<pid>/stat) and h2load's own (its getrusage): the CPU an HTTP/2 client needs per request
# on this machine, the figure to hold Herald's client CPU per request against (`herald bench
# --providers`, `herald sender-bench`). A benchmark, not a test: run it on demand.
#
#   scripts/sandbox-ceiling.sh                      # release build, 200,000 requests per run
#   N=100000 CONNECTIONS=2 STREAMS=100 DELAY=30ms scripts/sandbox-ceiling.sh
#
# Environment: HERALD (the binary; default .build/release/herald), N (requests per run),
# CONNECTIONS (h2load -c), STREAMS (h2load -m, streams per connection), DELAY (the sandbox's
# --response-delay), RUNS (runs per case; the median is printed), PROFILE (a folder: the first
# run of each route is also recorded with `perf record -g` into PROFILE/<route>.perf).
set -euo pipefail

HERALD=${HERALD:-.build/release/herald}
N=${N:-200000}
CONNECTIONS=${CONNECTIONS:-1}
STREAMS=${STREAMS:-100}
DELAY=${DELAY:-0}
RUNS=${RUNS:-3}

command -v h2load >/dev/null || { echo "h2load is missing: apt-get install -y nghttp2-client" >&2; exit 2; }
command -v openssl >/dev/null || { echo "openssl is missing" >&2; exit 2; }
[ -x "$HERALD" ] || { echo "$HERALD is missing: swift build -c release --product herald" >&2; exit 2; }

dir=$(mktemp -d /tmp/herald-ceiling.XXXXXX)
sandbox_pid=
cleanup() {
    if [ -n "$sandbox_pid" ]; then kill "$sandbox_pid" 2>/dev/null || true; wait "$sandbox_pid" 2>/dev/null || true; fi
    rm -rf "$dir"
}
trap cleanup EXIT

"$HERALD" sandbox --dir "$dir/sandbox" --apns-port 0 --fcm-port 0 --response-delay "$DELAY" >"$dir/sandbox.log" 2>&1 &
sandbox_pid=$!
for _ in $(seq 1 200); do
    if [ -f "$dir/sandbox/sandbox.json" ] && grep -q "\"pid\" : $sandbox_pid" "$dir/sandbox/sandbox.json"; then break; fi
    sleep 0.1
done
grep -q "\"pid\" : $sandbox_pid" "$dir/sandbox/sandbox.json" || { cat "$dir/sandbox.log" >&2; echo "the sandbox did not start" >&2; exit 1; }

field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$dir/sandbox/sandbox.json" "$1"; }
b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
apns_url=$(field apns_url); fcm_url=$(field fcm_url); token_uri=$(field token_uri); ca=$(field ca_path)
key_id=$(field key_id); team_id=$(field team_id); project=$(field project_id); topic=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["topics"][0])' "$dir/sandbox/sandbox.json")
client_email=$(field client_email); private_key_id=$(field private_key_id)

# An ES256 provider token: openssl signs in DER; JWS wants r and s, 32 bytes each.
now=$(date +%s)
apns_input="$(printf '{"alg":"ES256","kid":"%s"}' "$key_id" | b64url).$(printf '{"iss":"%s","iat":%d}' "$team_id" "$now" | b64url)"
apns_signature=$(printf '%s' "$apns_input" | openssl dgst -sha256 -sign "$(field apns_key_path)" | python3 -c '
import sys, base64
der = sys.stdin.buffer.read()
def integer(data, at):
    assert data[at] == 2
    length = data[at + 1]
    return data[at + 2:at + 2 + length], at + 2 + length
r, at = integer(der, 2)
s, _ = integer(der, at)
raw = r[-32:].rjust(32, b"\0") + s[-32:].rjust(32, b"\0")
print(base64.urlsafe_b64encode(raw).decode().rstrip("="))')
provider_token="$apns_input.$apns_signature"

# An OAuth2 access token: an RS256 assertion for the service account, exchanged at token_uri.
assertion_input="$(printf '{"alg":"RS256","typ":"JWT","kid":"%s"}' "$private_key_id" | b64url).$(printf '{"iss":"%s","scope":"https://www.googleapis.com/auth/firebase.messaging","aud":"%s","iat":%d,"exp":%d}' "$client_email" "$token_uri" "$now" "$((now + 3600))" | b64url)"
assertion="$assertion_input.$(printf '%s' "$assertion_input" | openssl dgst -sha256 -sign "$dir/sandbox/.service-account-key.pem" | b64url)"
access_token=$(curl -sS --cacert "$ca" --data-urlencode 'grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer' --data-urlencode "assertion=$assertion" "$token_uri" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')

printf '%s' '{"aps":{"alert":"Вам поступил перевод 100.00 RUB","sound":"default"},"acme_eid":"TransferIssued"}' >"$dir/apns.json"
printf '%s' '{"message":{"token":"bench-device:1","data":{"eid":"TransferIssued","msg":"Вам поступил перевод 100.00 RUB"},"android":{"priority":"HIGH"}}}' >"$dir/fcm.json"
device=$(printf '%064x' 1)

cpu() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$sandbox_pid/stat"; }
ticks=$(getconf CLK_TCK)

# Runs h2load, writing its CPU seconds (user + system, from getrusage) to $dir/<name>.cpu.
timed() {
    local name=$1; shift
    python3 -c 'import resource, subprocess, sys
code = subprocess.run(sys.argv[2:]).returncode
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write(f"{usage.ru_utime + usage.ru_stime}\n")
sys.exit(code)' "$dir/$name.cpu" "$@"
}
apns_load() {
    timed "$1" h2load -n "$N" -c "$CONNECTIONS" -m "$STREAMS" -t 1 -d "$dir/apns.json" \
        -H "authorization: bearer $provider_token" -H "apns-topic: $topic" -H "apns-push-type: alert" -H "apns-priority: 10" \
        -H "content-type: application/json" "$apns_url/3/device/$device"
}
fcm_load() {
    timed "$1" h2load -n "$N" -c "$CONNECTIONS" -m "$STREAMS" -t 1 -d "$dir/fcm.json" \
        -H "authorization: Bearer $access_token" -H "content-type: application/json; charset=UTF-8" \
        "$fcm_url/v1/projects/$project/messages:send"
}
# "finished in 5.21s, 38380.02 req/s, …" and "requests: … 200000 succeeded, 0 failed, 0 errored"
rate() { sed -n 's/^finished in .*, \([0-9.]*\) req\/s.*/\1/p' "$1"; }
status2xx() { sed -n 's/^status codes: \([0-9]*\) 2xx.*/\1/p' "$1"; }

measure() {  # case name; prints "rate sandbox_us_per_request sandbox_cores h2load_us_per_request 2xx"
    local name=$1 before after
    before=$(cpu)
    local started; started=$(date +%s.%N)
    local perf_pid=
    if [ -n "${PROFILE:-}" ] && [ ! -f "$PROFILE/$name.perf" ]; then
        mkdir -p "$PROFILE"
        perf record -F 999 -g -p "$sandbox_pid" -o "$PROFILE/$name.perf" >/dev/null 2>&1 &
        perf_pid=$!
        sleep 0.5
    fi
    case $name in
        apns) apns_load apns >"$dir/$name.out" ;;
        fcm) fcm_load fcm >"$dir/$name.out" ;;
        both) apns_load both-apns >"$dir/both-apns.out" & local a=$!; fcm_load both-fcm >"$dir/both-fcm.out"; wait $a ;;
    esac
    local ended; ended=$(date +%s.%N)
    after=$(cpu)
    if [ -n "$perf_pid" ]; then kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true; fi
    python3 - "$name" "$dir" "$before" "$after" "$ticks" "$started" "$ended" "$N" <<'PY'
import re, sys
name, folder, before, after, ticks, started, ended, n = sys.argv[1:]
def read(path):
    text = open(path).read()
    rate = float(re.search(r"finished in [^,]*, ([0-9.]+) req/s", text).group(1))
    ok = int(re.search(r"status codes: (\d+) 2xx", text).group(1))
    return rate, ok
names = ["both-apns", "both-fcm"] if name == "both" else [name]
results = [read(f"{folder}/{each}.out") for each in names]
client = sum(float(open(f"{folder}/{each}.cpu").read()) for each in names)
requests = int(n) * len(names)
cpu = (float(after) - float(before)) / float(ticks)
wall = float(ended) - float(started)
print(f"{sum(r for r, _ in results):.0f} {cpu / requests * 1e6:.1f} {cpu / wall:.2f} {client / requests * 1e6:.1f} {sum(ok for _, ok in results)}")
PY
}

echo "herald sandbox ceiling: h2load -n $N -c $CONNECTIONS -m $STREAMS -t 1 per route, TLS, HTTP/2; response delay $DELAY; median of $RUNS"
printf '%-6s %12s %16s %14s %16s %10s\n' route 'requests/s' 'sandbox µs/req' 'sandbox cores' 'h2load µs/req' '2xx'
for name in apns fcm both; do
    results=()
    for _ in $(seq 1 "$RUNS"); do results+=("$(measure "$name")"); done
    median=$(printf '%s\n' "${results[@]}" | sort -n -k1 | sed -n "$(( (RUNS + 1) / 2 ))p")
    read -r r c cores client ok <<<"$median"
    printf '%-6s %12s %16s %14s %16s %10s\n' "$name" "$r" "$c" "$cores" "$client" "$ok"
done
echo "records written: $(wc -l <"$dir/sandbox/pushes.jsonl")"
