#!/usr/bin/env bash
# Starts, stops or restarts one local service; the integration tests use it to restart the
# broker and the database in the middle of a run.
#   ctl.sh start|stop|restart rabbitmq|postgres
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
action=${1:?usage: ctl.sh start|stop|restart rabbitmq|postgres}
service=${2:?usage: ctl.sh start|stop|restart rabbitmq|postgres}
case "$service" in
    rabbitmq|postgres) ;;
    *) die "unknown service '$service' (rabbitmq or postgres)" ;;
esac
case "$action" in
    start) "${service}_start" ;;
    stop) "${service}_stop" ;;
    restart) "${service}_stop"; "${service}_start" ;;
    *) die "unknown action '$action' (start, stop or restart)" ;;
esac
