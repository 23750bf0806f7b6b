#!/usr/bin/env bash
# The venv of the pytest suites on the test control plane (tests/charts, tests/autoscaling), under
# ~/.cache/herald/venv-k8s: tests/requirements.txt and locust/'s herald_load. Prints its python.
#
# herald_load is installed editable: its code is read from this checkout, so only the checkout's
# path (the venv is shared by worktrees) and the packaging files call for a new install; a warm run
# with neither changed does not touch pip or the package index.
#
# Usage: PY="$(bash scripts/k8s/test-venv.sh)"
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

VENV="${XDG_CACHE_HOME:-${HOME}/.cache}/herald/venv-k8s"
REQUIREMENTS="${HERALD_ROOT}/tests/requirements.txt"
LOCUST="${HERALD_ROOT}/locust"

{
  if ! "${VENV}/bin/python" -c 'import sys' >/dev/null 2>&1; then
    log "creating venv ${VENV}"
    rm -rf "$VENV"
    python3 -m venv "$VENV"
  fi
  stamp="$(printf '%s\n' "$LOCUST" | cat - "$REQUIREMENTS" "${LOCUST}/pyproject.toml" | sha256sum | cut -d' ' -f1)"
  if [[ "$(cat "${VENV}/.herald-stamp" 2>/dev/null || true)" != "$stamp" ]]; then
    log "installing the test suites' Python packages (tests/requirements.txt, locust/'s herald_load)"
    "${VENV}/bin/python" -m pip install -q --disable-pip-version-check -r "$REQUIREMENTS"
    # Without its dependencies: herald_load's launcher is standard library only; numpy, scipy and
    # Locust are for the capacity model and the load runs, which the suites do not use.
    "${VENV}/bin/python" -m pip install -q --disable-pip-version-check --no-deps -e "$LOCUST"
    printf '%s\n' "$stamp" >"${VENV}/.herald-stamp"
  fi
} >&2
printf '%s\n' "${VENV}/bin/python"
