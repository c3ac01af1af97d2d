#!/usr/bin/env bash
# Checks deploy/prometheus/alerts.yaml with promtool (`promtool check rules`), runs its unit
# tests (`promtool test rules deploy/prometheus/alerts.test.yaml`: a firing and a silent case
# for every alert, and every alert must have both) and checks that deploy/grafana/herald.json is
# valid JSON. promtool comes from PATH, or else from Debian's
# `prometheus` package, unpacked (not installed: no service is started) into
# ${HERALD_TOOLS:-.build/tools}. The names the rules and the dashboard use are checked against a
# running worker by HeraldWorkerTests' DashboardMetricsTests (part of the test suite).
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
"$promtool" test rules deploy/prometheus/alerts.test.yaml
# Every alert has a case where it fires and one where it stays silent.
python3 - <<'EOF'
import re
rules = open("deploy/prometheus/alerts.yaml").read()
tests = open("deploy/prometheus/alerts.test.yaml").read()
alerts = re.findall(r"^\s*- alert: (\w+)", rules, re.M)
fires = set(re.findall(r"alertname: (\w+)\n\s*exp_alerts:\n\s*- exp_labels", tests))
silent = set(re.findall(r"alertname: (\w+), exp_alerts: \[\]", tests))
missing = [f"{a} ({'firing' if a not in fires else 'silent'} case)" for a in alerts if a not in fires or a not in silent]
if missing:
    raise SystemExit("deploy/prometheus/alerts.test.yaml has no " + ", ".join(missing))
print(f"deploy/prometheus/alerts.test.yaml: a firing and a silent case for each of the {len(alerts)} alerts")
EOF
python3 -m json.tool deploy/grafana/herald.json >/dev/null && echo "deploy/grafana/herald.json: valid JSON"
