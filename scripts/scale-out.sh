#!/usr/bin/env bash
# Scale-out run, fit and report, end to end, on this machine:
#
#   scripts/scale-out.sh gateway --max-n 4 [--target 1500] [--run-id ID] [--duration S] [--n 5]
#
# 1. builds the services' jars if missing (mvn package -DskipTests);
# 2. measures the service (gateway or dispatcher) at N = 1..MAX_N replicas with
#    `python -m herald_load scale-out` (RabbitMQ, Redis, provider sandbox, dispatcher and the
#    replicas as real local processes on free ports; complete N are skipped, so rerunning the
#    same command resumes a stopped run);
# 3. executes the scale-out notebook into <run>/report/scale-out.html (+ capacity.html/.json).
# Runs land in locust/runs/<run-id>/ (default <service>-<UTC date>). Options after the service
# go to the runner, except --target, --fit-max-n and --warmup, which go to the report.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

service="${1:-}"
[[ "$service" == gateway || "$service" == dispatcher ]] || die "usage: $0 gateway|dispatcher [--max-n K] [--target X/s] ..."
shift
run_id="${service}-$(date -u +%Y%m%d)"
runner_args=() report_args=()
while (($#)); do
  case "$1" in
    --run-id) run_id="$2"; shift 2 ;;
    --target | --fit-max-n | --warmup) report_args+=("$1" "$2"); shift 2 ;;
    *) runner_args+=("$1"); shift ;;
  esac
done

VENV="${HERALD_VENV:-${XDG_CACHE_HOME:-${HOME}/.cache}/herald/venv}"
if ! "${VENV}/bin/python" -c 'import herald_load, locust, nbconvert' >/dev/null 2>&1; then
  log "installing locust/ with its load-test dependencies into ${VENV}"
  [[ -x "${VENV}/bin/python" ]] || python3 -m venv "$VENV"
  "${VENV}/bin/python" -m pip install -q --disable-pip-version-check -e "${HERALD_ROOT}/locust[test]"
fi

for module in provider-sandbox dispatcher gateway; do
  if ! compgen -G "$(module_dir "$module")/target/${module}-*-exec.jar" >/dev/null; then
    log "building the services (mvn -B -q package -DskipTests)"
    (cd "${HERALD_ROOT}" && mvn -B -q package -DskipTests -pl :provider-sandbox,:dispatcher,:gateway -am)
    break
  fi
done

run_dir="${HERALD_ROOT}/locust/runs/${run_id}"
log "scale-out run ${run_dir}"
"${VENV}/bin/python" -m herald_load scale-out "$run_dir" --service "$service" "${runner_args[@]}"
log "report"
"${VENV}/bin/python" -m herald_load report "$run_dir" "${report_args[@]}"
