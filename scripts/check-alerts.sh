#!/usr/bin/env bash
# Checks deploy/prometheus/alerts.yaml with promtool (`promtool check rules`) and that
# deploy/grafana/herald.json is valid JSON. promtool comes from PATH, or else from Debian's
# `prometheus` package, unpacked (not installed: no service is started) into
# ${HERALD_TOOLS:-.build/tools}. The names the rules and the dashboard use are checked against a
# running worker by HeraldCLITests' DashboardMetricsTests (part of the test suite).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
promtool=$(command -v promtool || true)
if [[ -z "$promtool" ]]; then
    tools=${HERALD_TOOLS:-.build/tools}
    promtool=$tools/prometheus/usr/bin/promtool
    if [[ ! -x "$promtool" ]]; then
        mkdir -p "$tools/prometheus"
        (cd "$tools" && apt-get download prometheus >/dev/null)
        dpkg-deb -x "$tools"/prometheus_*.deb "$tools/prometheus"
    fi
fi
"$promtool" check rules deploy/prometheus/alerts.yaml
python3 -m json.tool deploy/grafana/herald.json >/dev/null && echo "deploy/grafana/herald.json: valid JSON"
