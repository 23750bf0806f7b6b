#!/usr/bin/env bash
# Herald's chart tests, part of the test command: the pytest suite tests/charts (what it checks: the
# docstrings of its modules). scripts/test.sh runs this after Maven, whose tests leave what two of
# the tests read (libs/contract's classes, the services' metric scrapes).
#
# Here, in bash: the testbed's tools built or found cached (scripts/k8s/testbed.sh build: kube
# binaries, kwok, helm, CRDs) and the venv the KEDA scenario shares (scripts/k8s/test-venv.sh); the
# tests start and stop their control plane themselves.
#
# Usage: scripts/k8s/test-charts.sh [pytest arguments, e.g. -k lint, --scrapes-from DIR]
# Env:   HERALD_K8S_KEEP=true keeps the control plane running after the tests
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

started=$SECONDS
log "tools: testbed build (kube binaries, kwok, helm, CRDs; cached)"
bash "${HERALD_ROOT}/scripts/k8s/testbed.sh" build
PY="$(bash "${HERALD_ROOT}/scripts/k8s/test-venv.sh")"

log "chart tests (pytest tests/charts)"
rc=0
(cd "$HERALD_ROOT" && "$PY" -m pytest -v -s -p no:cacheprovider --rootdir "$HERALD_ROOT" tests/charts "$@") || rc=$?
log "chart tests took $((SECONDS - started)) s"
exit "$rc"
