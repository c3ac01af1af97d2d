#!/usr/bin/env bash
# Runs schemathesis (https://schemathesis.readthedocs.io) against a `herald api` started here on
# 127.0.0.1 with a scratch database, using docs/openapi.yaml: generated valid and invalid
# requests for every operation, checked for server errors and for answers that break the
# document (status, content type, headers, body schema), with and without the bearer token.
#
#   scripts/schemathesis.sh [max-examples-per-operation] [extra `st run` options...]   (default 300)
#
# Needs the herald binary (`swift build --product herald`, or HERALD_BIN), PostgreSQL at
# HERALD_TEST_DATABASE_URL (`source /tmp/herald-local/env`) and Python 3.12 or newer (PYTHON;
# a venv with schemathesis is made in .build-schemathesis-venv on first use). Reports and the API's log are
# kept in .build/schemathesis/.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/lib/scratch-api.sh"
examples=${1:-300}
[[ $# -gt 0 ]] && shift
venv="$root/.build-schemathesis-venv"
work="$root/.build/schemathesis"
if [[ ! -x $venv/bin/st ]]; then
    # CPython 3.11 fails inside schemathesis' coverage phase ("SystemError: AST constructor
    # recursion depth mismatch"): PYTHON, or the first of these that runs and is 3.12 or newer.
    python=${PYTHON:-}
    for candidate in python3.13 python3.12 python3; do
        [[ -n $python ]] && break
        "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null && python=$candidate
    done
    [[ -n $python ]] || { echo "schemathesis.sh: needs Python 3.12 or newer (set PYTHON)" >&2; exit 2; }
    "$python" -m venv "$venv"
    "$venv/bin/pip" install --quiet 'schemathesis>=4.3,<5'
fi
rm -rf "$work"
trap scratch_api_stop EXIT
scratch_api_start "$work"

set +e
# From the work folder: schemathesis keeps its cache (.schemathesis/) in the current one.
cd "$work"
"$venv/bin/st" run "$root/docs/openapi.yaml" --url "http://127.0.0.1:$API_PORT" \
    -H "Authorization: Bearer $(scratch_api_token schemathesis-user)" --checks all --max-examples "$examples" \
    --workers 2 --generation-database none --report junit --report-dir "$work" --no-color "$@"
status=$?
set -e
# The server's own count, from its Prometheus counters (hb_requests by status code).
curl -s "http://127.0.0.1:$API_PORT/metrics" | awk '
    /^hb_requests[{ ]/ {
        count = $NF; total += count
        if (match($0, /http_response_status_code="[0-9]+"/)) {
            code = substr($0, RSTART + 27, 3); by[code] += count; if (code >= 500) errors += count
        }
    }
    END {
        printf "herald api answered %d requests, %d of them 5xx; by status:", total, errors
        for (code in by) printf " %s=%d", code, by[code]
        printf "\n"
    }'
echo "schemathesis exit status: $status (reports in $work, the API's log in $work/api.log)"
exit $status
