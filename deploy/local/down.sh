#!/usr/bin/env bash
# Stops the local RabbitMQ and PostgreSQL started by up.sh. With --purge, deletes their data too.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
rabbitmq_stop
postgres_stop
command -v epmd >/dev/null && epmd -kill >/dev/null 2>&1 || true
/usr/lib/erlang/bin/epmd -kill >/dev/null 2>&1 || true
if [ "${1:-}" = "--purge" ]; then
    log "deleting $HERALD_LOCAL_DIR"
    rm -rf "$HERALD_LOCAL_DIR"
fi
