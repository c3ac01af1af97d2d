#!/usr/bin/env bash
# Installs what is missing and starts RabbitMQ and PostgreSQL on 127.0.0.1. Idempotent.
# Writes $HERALD_LOCAL_DIR/env with the URLs the other scripts and the tests use. PostgreSQL
# writes durably (fsync, synchronous_commit, full_page_writes on), on a running stack too, unless
# HERALD_PG_DURABLE=0 (test.sh sets it): lib.sh, pg_durable_value.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ensure_packages
mkdir -p "$HERALD_LOCAL_DIR"
rabbitmq_start
# Only the main stack: the tests' private stacks (ctl.sh) start and stop often and fall back to
# normal pages.
HERALD_PG_HUGE_PAGES=${HERALD_PG_HUGE_PAGES:-1} postgres_start
write_env_file
log "ready: source $HERALD_LOCAL_DIR/env"
