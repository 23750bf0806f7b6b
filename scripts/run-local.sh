#!/usr/bin/env bash
# Runs the whole Herald platform locally and shows it working:
#
#   scripts/run-local.sh [start]   install deps, start RabbitMQ + Redis, build, start
#                                  provider-sandbox, gateway, connection-manager,
#                                  dispatcher, run the demo;
#                                  leaves everything running
#   scripts/run-local.sh stop      stop the services and RabbitMQ + Redis
#   scripts/run-local.sh status    show what runs
#
# The launcher is locust/src/herald_load (python3 -m herald_load local ..., standard library
# only, see herald_load/localrun.py). Everything lives in .run/: logs (<service>.log), pid files,
# the generated admin token (.run/admin-token) and credential encryption key (.run/crypto-key).
# Ports: dispatcher 8080 (API), gateway 8081 (actuator), connection manager 1883 (MQTT)
# and 8082 (actuator), provider sandbox 9090/9443, RabbitMQ 5672 (management 15672), Redis 6379.
# Any other setting can be given by environment, Spring style, e.g.
#   HERALD_GATEWAY_MAX_IN_FLIGHT=64 scripts/run-local.sh
# HERALD_JAVA_OPTS adds JVM options; HERALD_DEMO=0 skips the demo.
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

action="${1:-start}"
case "$action" in
  start) bash "${HERALD_ROOT}/scripts/install-deps.sh" ;;
  stop | status) ;;
  *)
    echo "usage: $0 [start|stop|status]" >&2
    exit 2
    ;;
esac
PYTHONPATH="${HERALD_ROOT}/locust/src${PYTHONPATH:+:${PYTHONPATH}}" exec python3 -m herald_load local "$action"
