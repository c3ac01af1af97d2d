#!/usr/bin/env bash
# Load on the REST API (see scripts/api-load.py): a `herald api` on 127.0.0.1 over a scratch
# database, USERS concurrent clients for SECONDS, a quarter of the requests bad ones; prints
# p50/p99 per kind of request, the status counts, every violation (a 5xx, an answer that is not
# what the user set, another user's data seen or changed) and the API's peak RSS.
#
#   scripts/api-load.sh [users] [seconds]        (default 200 60)
#
# Needs the herald binary (`swift build --product herald`, or HERALD_BIN; for figures use a
# release build), PostgreSQL at HERALD_TEST_DATABASE_URL (`source /tmp/herald-local/env`) and
# Python 3 (a venv with aiohttp is made in .build-load-venv on first use).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/lib/scratch-api.sh"
users=${1:-200}
seconds=${2:-60}
venv="$root/.build-load-venv"
if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c 'import aiohttp' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet 'aiohttp>=3.9,<4'
fi
trap scratch_api_stop EXIT
# Herald's defaults (database.pool_size 4…); export HERALD_* settings to change them.
scratch_api_start "$root/.build/api-load"
"$venv/bin/python" "$root/scripts/api-load.py" --url "http://127.0.0.1:$API_PORT" --secret "$API_SECRET" --pid "$API_PID" \
    --database-url "${HERALD_TEST_DATABASE_URL%/*}/$API_DATABASE" --users "$users" --seconds "$seconds"
