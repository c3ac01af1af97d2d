#!/usr/bin/env bash
# Plots of a `herald bench --json` result (see scripts/bench-plots.py): makes a venv with
# matplotlib in .build-plot-venv (git-ignored) on first use.
#   scripts/bench-plots.sh RESULT.json [OUT_DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv=.build-plot-venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check matplotlib
fi
exec "$venv/bin/python" scripts/bench-plots.py "$@"
