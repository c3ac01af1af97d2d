#!/usr/bin/env bash
# Herald's fault campaign (docs/reliability.md, "The fault campaign"): private RabbitMQ (one
# broker, or a 3-node cluster with --cluster) and PostgreSQL on their own ports, herald sandbox,
# two or more workers with partitions, a steady publisher, faults at random moments, then the
# table of what was lost, doubled, reordered and dead-lettered. Loopback only; bounded in time.
#   scripts/campaign.sh [--minutes N] [--cluster] [--rate N] [--users N] [--workers N] [--seed N] …
#   scripts/campaign.sh --scale --minutes 5   the scaling run instead of faults: workers 2 → 4 → 2,
#                                     a rolling restart, a kill -9; each change balanced within 10 s
#   scripts/campaign.sh --help        every option (scripts/campaign/campaign.py)
#   HERALD_BIN=path/to/herald         use that binary instead of building the release one
#   HERALD_PG_DURABLE=0                 PostgreSQL without fsync (deploy/local/lib.sh; durable by default)
# Exit status 0 when nothing was lost, shown twice or dead-lettered, every push the providers
# accepted has its journal row, and every order violation has evidence for its cause
# (scripts/campaign/analyze.py).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source deploy/local/lib.sh
ensure_packages

venv="$root/.build-campaign-venv"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import aiormq, psycopg' 2>/dev/null; then
    log "creating $venv (aiormq, psycopg from PyPI)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q aiormq 'psycopg[binary]'
fi

if [ -z "${HERALD_BIN:-}" ]; then
    log "building herald (release)"
    swift build -c release --product herald >/dev/null
    HERALD_BIN=$(swift build -c release --show-bin-path)/herald
fi
exec "$venv/bin/python" "$root/scripts/campaign/campaign.py" --herald "$HERALD_BIN" "$@"
