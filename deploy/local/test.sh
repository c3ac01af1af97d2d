#!/usr/bin/env bash
# The whole test suite on this machine: installs what is missing, starts RabbitMQ and
# PostgreSQL on 127.0.0.1 (up.sh), builds, and runs every test against them.
# Extra arguments go to `swift test` (for example --filter HeraldCoreTests).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
"$here/up.sh"
source "${HERALD_LOCAL_DIR:-/tmp/herald-local}/env"
cd "$root"
swift build --build-tests
swift test --skip-build "$@"
