# Sourced by scripts/schemathesis.sh and scripts/api-load.sh: a `herald api` on 127.0.0.1 over
# a scratch database, with an HS256 token secret and no rate limit, and nothing else configured
# (no configuration file, no broker: /readyz checks the database only).
#
#   scratch_api_start WORKDIR [NAME=VALUE...]   sets API_PORT, API_PID, API_SECRET, API_DATABASE
#   scratch_api_stop                            stops the API, drops the database
#   scratch_api_token USER [SECONDS]            prints an HS256 bearer token for USER
#
# Needs HERALD_TEST_DATABASE_URL (source /tmp/herald-local/env) and the herald binary
# (HERALD_BIN, default .build/debug/herald).

scratch_api_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
API_PID=""
API_DATABASE=""

scratch_api_start() {
    local work=$1
    shift
    : "${HERALD_TEST_DATABASE_URL:?needs HERALD_TEST_DATABASE_URL (source /tmp/herald-local/env)}"
    local herald=${HERALD_BIN:-$scratch_api_root/.build/debug/herald}
    [[ -x $herald ]] || { echo "no herald binary at $herald (swift build --product herald)" >&2; return 2; }
    mkdir -p "$work"
    API_DATABASE="herald_scratch_$$"
    psql -q "$HERALD_TEST_DATABASE_URL" -c "CREATE DATABASE $API_DATABASE" >/dev/null
    API_SECRET=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
    local environment=(
        -u HERALD_AMQP_URL HERALD_CONFIG= HERALD_DATABASE_URL="${HERALD_TEST_DATABASE_URL%/*}/$API_DATABASE"
        HERALD_API_JWT_SECRET="$API_SECRET" HERALD_API_RATE_LIMIT_PER_SECOND=0
        HERALD_WORKER_LOG_SENDER_FILE="$work/resent.jsonl" "$@"
    )
    env "${environment[@]}" "$herald" migrate >/dev/null
    env "${environment[@]}" "$herald" api --listen 127.0.0.1:0 >"$work/api.log" 2>&1 &
    API_PID=$!
    API_PORT=""
    local _
    for _ in $(seq 1 600); do
        API_PORT=$(sed -n 's/^herald api listening on .*:\([0-9]*\)$/\1/p' "$work/api.log" | head -1)
        [[ -n $API_PORT ]] && return 0
        kill -0 "$API_PID" 2>/dev/null || { cat "$work/api.log" >&2; return 1; }
        sleep 0.1
    done
    echo "herald api did not start within 60 s" >&2
    return 1
}

scratch_api_stop() {
    if [[ -n $API_PID ]]; then
        kill "$API_PID" 2>/dev/null && wait "$API_PID" 2>/dev/null
        API_PID=""
    fi
    if [[ -n $API_DATABASE ]]; then
        psql -q "$HERALD_TEST_DATABASE_URL" -c "DROP DATABASE IF EXISTS $API_DATABASE WITH (FORCE)" >/dev/null || true
        API_DATABASE=""
    fi
}

scratch_api_token() {
    python3 - "$API_SECRET" "$1" "${2:-7200}" <<'PY'
import base64, hashlib, hmac, json, sys, time
def b64(data): return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
claims = b64(json.dumps({"sub": sys.argv[2], "exp": int(time.time()) + int(sys.argv[3])}).encode())
signature = hmac.new(sys.argv[1].encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest()
print(f"{header}.{claims}.{b64(signature)}")
PY
}
