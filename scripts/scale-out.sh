#!/usr/bin/env bash
# Scale-out run, fit and report, end to end, on this machine:
#
#   scripts/scale-out.sh gateway|dispatcher|connection-manager --max-n 4 [--target 1500] [--run-id ID] [--duration S] [--n 5]
#
# Installs locust/ with its load-test dependencies into the venv if needed, then runs
# `python -m herald_load capacity` (locust/src/herald_load/__main__.py): builds the jars if missing,
# measures the service at N = 1..MAX_N replicas (everything real, local processes on free ports;
# complete N are skipped, so rerunning the same command resumes) and executes the scale-out
# notebook into <run>/report/. Runs land in locust/runs/<run-id>/ (git-ignored; default
# <service>-<UTC date>). Options after the service go to the runner, except --target, --fit-max-n
# and --warmup, which go to the report.
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

VENV="${HERALD_VENV:-${XDG_CACHE_HOME:-${HOME}/.cache}/herald/venv}"
if ! "${VENV}/bin/python" -c 'import herald_load, locust, nbconvert' >/dev/null 2>&1; then
  log "installing locust/ with its load-test dependencies into ${VENV}"
  [[ -x "${VENV}/bin/python" ]] || python3 -m venv "$VENV"
  "${VENV}/bin/python" -m pip install -q --disable-pip-version-check -e "${HERALD_ROOT}/locust[test]"
fi
PYTHONPATH="${HERALD_ROOT}/locust/src${PYTHONPATH:+:${PYTHONPATH}}" exec "${VENV}/bin/python" -m herald_load capacity "$@"
