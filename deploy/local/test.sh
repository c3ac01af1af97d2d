#!/usr/bin/env bash
# The whole test suite on this machine: installs what is missing, starts RabbitMQ and
# PostgreSQL on 127.0.0.1 (up.sh), builds, and runs every test against them (a plain
# `swift test` skips the integration tests when the services are not there; this never does).
# Extra arguments go to `swift test` (for example --filter HeraldCoreTests). Without them, the
# test targets run one after another (each target's tests in parallel): all of them at once on
# two cores starves the timing-bound tests (reconnects, shutdown bounds) of CPU.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
# The tests' databases are thrown away: PostgreSQL runs without fsync, synchronous_commit and
# full_page_writes here (deploy/local/lib.sh, pg_durable_value), faster on a slow disk. This
# turns them off on the running stack too (a reload); up.sh or run.sh turns them on again.
# HERALD_PG_DURABLE=1 deploy/local/test.sh runs the tests durably.
export HERALD_PG_DURABLE=${HERALD_PG_DURABLE:-0}
"$here/up.sh"
source "${HERALD_LOCAL_DIR:-/tmp/herald-local}/env"
# Integration tests fail, rather than skip, when a service does not answer (HeraldTesting's
# TestEnvironment.require): this command, and CI through it, runs every test.
export HERALD_TEST_REQUIRE_SERVICES=1
# At most 4 tests of a target at once (swift-testing runs them all at once otherwise: 77 worker
# tests, each with its own worker, on two cores starved the timing-bound ones in CI). The
# target takes as long either way; the variable is ignored by a toolchain without it.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-4}
cd "$root"
swift build --build-tests
if [ $# -gt 0 ]; then
    exec swift test --skip-build "$@"
fi
failed=()
for target in $(ls Tests); do
    echo "=== $target"
    swift test --skip-build --filter "^$target\." || failed+=("$target")
done
# The fault campaign's analyzer on recorded runs (a few seconds, the standard library only).
echo "=== scripts/campaign"
if command -v python3 >/dev/null; then
    python3 -m unittest discover -s scripts/campaign || failed+=(scripts/campaign)
else
    echo "python3 is missing: scripts/campaign's tests not run" >&2
    failed+=(scripts/campaign)
fi
if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "All test targets passed."
