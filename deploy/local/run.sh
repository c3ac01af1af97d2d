#!/usr/bin/env bash
# Herald's main job on this machine: installs what is missing, starts RabbitMQ and PostgreSQL
# on 127.0.0.1, builds Herald and runs it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
"$here/up.sh"
source "${HERALD_LOCAL_DIR:-/tmp/herald-local}/env"
cd "$root"
swift build --product herald
exec .build/debug/herald "$@"
