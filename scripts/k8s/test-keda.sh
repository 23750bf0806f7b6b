#!/usr/bin/env bash
# The KEDA autoscaling scenario with host processes (tests/autoscaling/test_keda_processes.py, pytest):
# the real KEDA operator and metrics adapter against a test control plane of its own
# (scripts/k8s/testbed.sh), the gateway chart with KEDA enabled, real RabbitMQ, Redis, dispatcher,
# provider sandbox and one gateway process per replica. Its successor on real pods,
# tests/autoscaling/test_keda_scaling.py, runs on the shared cluster (scripts/k8s/test-cluster.sh).
# The timeline (CSV + PNG), a summary and every log land in target/autoscaling/.
#
# Cold: builds KEDA (about 9 min on 2 cores) and the control plane if the charts' testbed has not
# yet; warm: 4 to 6 minutes (the scenario about 4, building the jars if missing about 2). Needs root
# (a network namespace).
#
# Usage: scripts/k8s/test-keda.sh [extra pytest arguments]
# Env:   HERALD_KEDA_OUT   output folder (default target/autoscaling)
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

((EUID == 0)) || die "the KEDA scenario needs root (it makes a network namespace)"
command -v openssl >/dev/null 2>&1 || die "openssl is needed (test certificates)"

TESTS="${HERALD_ROOT}/tests/autoscaling"
PY="$(bash "${HERALD_ROOT}/scripts/k8s/test-venv.sh")"

# The services' executable jars (scripts/test.sh's mvn verify builds them first).
missing=false
for module in gateway dispatcher provider-sandbox; do
  compgen -G "$(module_dir "$module")/target/${module}-*-exec.jar" >/dev/null || missing=true
done
if [[ "$missing" == true ]]; then
  log "building the gateway, dispatcher and provider sandbox jars"
  (cd "${HERALD_ROOT}" && mvn -B -q -pl :gateway,:dispatcher,:provider-sandbox -am package -DskipTests)
fi

log "building (or finding cached) KEDA and the test control plane"
bash "${HERALD_ROOT}/scripts/k8s/keda-build.sh" >/dev/null
bash "${HERALD_ROOT}/scripts/k8s/testbed.sh" build

epmd_was_running=false
if epmd_running; then epmd_was_running=true; fi
rc=0
log "KEDA autoscaling scenario (pytest tests/autoscaling/test_keda_processes.py)"
(cd "$TESTS" && "$PY" -m pytest -q -p no:cacheprovider -s test_keda_processes.py "$@") || rc=$?
# The scenario's RabbitMQ started an Erlang port mapper if none ran: stop it once idle.
if [[ "$epmd_was_running" == false ]] && epmd_idle; then
  epmd -kill >/dev/null 2>&1 || true
fi
exit "$rc"
