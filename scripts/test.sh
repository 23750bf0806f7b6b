#!/usr/bin/env bash
# Herald's test command (what CI runs, through .ci/run):
#   1. installs/checks the system packages (scripts/install-deps.sh);
#   2. Python tests of locust/, if it is a package (locust/pyproject.toml), with
#      pytest in a venv under ~/.cache/herald/venv;
#   3. the Java build and all its tests: mvn -B verify at the repository root (it builds the console
#      with npm, services/dispatcher/console/build.sh), then the console's browser tests;
#   4. one test cluster (kwok nodes and a real node: containerd, kubelet, kube-proxy) shared by the
#      chart tests, the real-node tests and KEDA scaling real gateway pods (scripts/k8s/test-cluster.sh,
#      tests/charts, tests/node, tests/autoscaling, and a short scale-out run in Kubernetes mode:
#      tests/capacity); its tools and the node's images (scripts/k8s/tools.sh) are built in the
#      background, at idle priority, from the start of stage 2 on.
#
# Usage: scripts/test.sh [extra Maven arguments, e.g. -pl :gateway -am]
#
# Both suites run even if the first fails; the exit code is non-zero if either did.
# The Python tests (seconds) go first so that Maven's test summary closes the log.
# Maven picks JDK 25 itself (toolchains plugin) and keeps its default local
# repository (~/.m2), so warm runs don't download anything.
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

VENV="${HERALD_VENV:-${XDG_CACHE_HOME:-${HOME}/.cache}/herald/venv}"
LOCUST_DIR="${HERALD_ROOT}/locust"

failed=()
# pytest's short summaries (its -ra lines: which test failed and why) of the stages that failed,
# repeated at the very end: CI shows only the tail of the log, and the Python stages run first.
summaries="$(mktemp -d)"
tools_pid=""
# A process and everything it started (the background tools build's go and debootstrap children).
kill_tree() {
  local child
  for child in $(pgrep -P "$1" || true); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
# shellcheck disable=SC2317 # invoked by the EXIT trap
on_exit() {
  [[ -z "$tools_pid" ]] || kill_tree "$tools_pid"
  rm -rf "$summaries"
}
trap on_exit EXIT

# pytest in locust/ with the given arguments, its output shown as it runs and its short summary kept
# (a file named after the stage) for the end of the log. Returns pytest's exit code.
pytest_in_locust() {
  local stage="$1" rc=0
  shift
  (cd "$LOCUST_DIR" && "${VENV}/bin/python" -m pytest -q "$@") 2>&1 | tee "${summaries}/${stage}.log" || rc=$?
  ((rc == 0)) || sed -n '/short test summary info/,$p' "${summaries}/${stage}.log" >"${summaries}/${stage}.summary"
  rm -f "${summaries}/${stage}.log"
  return "$rc"
}

# Note: called as `python_tests || ...`, where `set -e` does not apply, so every
# step checks its own result.
python_tests() {
  # (Re)create the venv if it is missing or its interpreter is gone (e.g. Python upgraded).
  if ! "${VENV}/bin/python" -c 'import sys' >/dev/null 2>&1; then
    log "creating venv ${VENV}"
    rm -rf "$VENV"
    mkdir -p "$(dirname "$VENV")" || return 1
    python3 -m venv "$VENV" || return 1
  fi

  # Install (editable) only when pyproject.toml or the checkout's path changed since
  # the last install, so warm runs need no package index.
  local stamp
  stamp="$(printf '%s\n' "$LOCUST_DIR" | cat - "${LOCUST_DIR}/pyproject.toml" | sha256sum | cut -d' ' -f1)" ||
    return 1
  if [[ "$(cat "${VENV}/.herald-stamp" 2>/dev/null || true)" != "$stamp" ]]; then
    log "installing locust/ and pytest into the venv"
    # The [test] extra is optional: pip only warns if the package doesn't define it.
    # A second attempt when the first fails: a package index's hiccup is not a test failure.
    local attempt
    for attempt in 1 2; do
      "${VENV}/bin/python" -m pip install -q --disable-pip-version-check -e "${LOCUST_DIR}[test]" pytest && break
      if ((attempt == 2)); then
        log "Python: pip could not install locust/ into ${VENV} (above: pip's error)"
        return 1
      fi
      log "Python: pip failed (attempt ${attempt}); once more"
    done
    printf '%s\n' "$stamp" >"${VENV}/.herald-stamp" || return 1
  fi

  log "Python: pytest in locust/"
  local rc=0
  pytest_in_locust python || rc=$?
  if ((rc == 5)); then
    # pytest's exit code 5 means "no tests collected": not a failure (yet).
    log "Python: no tests collected in locust/ (pytest exit 5), treated as success"
    return 0
  fi
  return "$rc"
}

log "system packages"
bash "${HERALD_ROOT}/scripts/install-deps.sh"

# The cluster stage's tools and the node's images (scripts/k8s/tools.sh: Go builds of the control
# plane, KEDA and more, about 22 minutes on 2 cores when nothing is cached) are built in the
# background from here on, at idle CPU and I/O priority (SCHED_IDLE: the scheduler gives them only
# CPU no test wants), so a cold run spends on them what the Python and Java stages leave idle
# instead of adding them all after. They need nothing those stages build. The cluster stage waits
# for them; a warm run finds everything cached in seconds.
tools_log="${summaries}/tools.log"
if command -v chrt >/dev/null 2>&1 && chrt --idle 0 true 2>/dev/null; then
  idle=(chrt --idle 0)
else
  idle=(nice -n 19)
fi
command -v ionice >/dev/null 2>&1 && idle+=(ionice -c 3)
log "cluster tools: building in the background at idle priority (scripts/k8s/tools.sh; log shown before the cluster stage)"
tools_started=$SECONDS
(
  rc=0
  "${idle[@]}" bash "${HERALD_ROOT}/scripts/k8s/tools.sh" || rc=$?
  log "cluster tools: the background build ended $((SECONDS - tools_started)) s after it started (exit ${rc})"
  exit "$rc"
) >"$tools_log" 2>&1 &
tools_pid=$!

if [[ -f "${LOCUST_DIR}/pyproject.toml" ]]; then
  python_tests || failed+=("Python tests (locust/)")
else
  log "Python: locust/pyproject.toml not present, no Python tests to run"
fi

mvn_args=(-B verify)
if [[ "${CI:-}" == true ]]; then
  # No per-artifact download progress and no colour codes in CI logs.
  mvn_args+=(--no-transfer-progress -Dstyle.color=never)
fi
log "Java: mvn ${mvn_args[*]} $*"
(cd "${HERALD_ROOT}" && mvn "${mvn_args[@]}" "$@") || failed+=("Maven build/tests (libs/, services/, testing/)")

# Seconds-long Locust runs of each scenario against the real platform on free ports: they need
# the jars Maven just built, hence after it (locust/README.md).
if [[ -f "${LOCUST_DIR}/pyproject.toml" ]]; then
  log "Python: Locust smoke runs (pytest -m smoke in locust/)"
  pytest_in_locust smoke -m smoke || failed+=("Locust smoke runs (locust/)")
fi

# The console's browser tests (a few minutes): headless Chromium, from Debian's chromium package, driven
# by playwright-core from services/dispatcher/console's lockfile, against the real platform on free
# ports; the jars (with the console built in) come from Maven above. Screenshots of every page:
# services/dispatcher/target/console-e2e/.
if [[ -f "${LOCUST_DIR}/pyproject.toml" ]]; then
  log "Console: browser tests (pytest -m console in locust/)"
  pytest_in_locust console -m console || failed+=("console browser tests (locust/tests/test_console.py)")
fi

# Property-based fuzzing of the dispatcher's API from its OpenAPI document: schemathesis (pinned, in
# a venv of its own) against a dispatcher with real Redis and RabbitMQ, every check on, zero failures;
# it prints its seed (replay: HERALD_FUZZ_SEED=<seed>). After Maven: it needs the dispatcher's jar.
if [[ -f "${LOCUST_DIR}/pyproject.toml" ]]; then
  log "Python: API fuzzing of the dispatcher (scripts/api-fuzz/fuzz.py)"
  "${VENV}/bin/python" "${HERALD_ROOT}/scripts/api-fuzz/fuzz.py" || failed+=("API fuzzing (scripts/api-fuzz)")
fi


# One cluster with kwok nodes and a real node (containerd, kubelet, kube-proxy, CoreDNS) for the chart
# tests, the real-node tests and KEDA scaling real pods (docs/autoscaling.md); last: a teardown that
# left iptables chains behind cannot break the suites before it. After Maven: the chart tests read what Maven's tests leave (contract classes,
# metric scrapes).
tools_rc=0
waited=$SECONDS
wait "$tools_pid" || tools_rc=$?
tools_pid=""
cat "$tools_log"
if ((tools_rc == 0)); then
  log "cluster tools: ready (the cluster stage waited $((SECONDS - waited)) s for them)"
else
  # The cluster stage builds them again in the foreground and fails there with the error if it is real.
  warn "the background build of the cluster tools failed (exit ${tools_rc}; its log is above)"
fi

log "Kubernetes: the shared test cluster (scripts/k8s/test-cluster.sh)"
bash "${HERALD_ROOT}/scripts/k8s/test-cluster.sh" ||
  failed+=("cluster tests (tests/charts, tests/node, tests/autoscaling, tests/capacity; scripts/k8s/test-cluster.sh)")

if ((${#failed[@]})); then
  for summary in "$summaries"/*.summary; do
    [[ -s "$summary" ]] || continue
    printf '==> pytest (%s), again: %s\n' "$(basename "$summary" .summary)" "$(cat "$summary")" >&2
  done
  printf 'FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
log "all tests passed"
