#!/usr/bin/env bash
# Every cluster suite on ONE test cluster (tests/sharedcluster.py): a control plane with three kwok
# nodes and a real node (containerd, runc, CNI, kubelet, kube-proxy, CoreDNS), brought up once and
# shared by the chart tests (tests/charts: kwok nodes), the real-node tests (tests/node), KEDA
# scaling real pods (tests/autoscaling: KEDA as host processes) and a short scale-out run in
# Kubernetes mode (tests/capacity: runner, fit and report), then torn down with a check that
# nothing is left. After it, the node tests that need the machine to themselves
# run on a node of their own: the teardown check can fail, and a second node starts clean.
#
# Here, in bash: the tools and the node's images (scripts/k8s/tools.sh), Herald's images (scripts/k8s/images.sh;
# all cached) and the suites' venv. The suites alone, without the shared cluster:
# scripts/k8s/test-charts.sh (no root needed) and scripts/k8s/test-node.sh.
#
# Usage: scripts/k8s/test-cluster.sh
# Needs root and what scripts/install-deps.sh installs (containerd, runc, CNI plugins, iptables, ...).
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

((EUID == 0)) || die "the shared test cluster needs root (containerd, network namespaces, iptables)"
started=$SECONDS
# Built before the cluster starts, so the first suite's timings hold no builds: the tools and the
# node's own images (pause, busybox for test pods, RabbitMQ and its operators, Redis), then Herald's
# (the services: Jib over the jars Maven built; Locust).
bash "${HERALD_ROOT}/scripts/k8s/tools.sh"
log "images: the services, Locust (scripts/k8s/images.sh; cached)"
for kind in services locust; do
  bash "${HERALD_ROOT}/scripts/k8s/images.sh" "$kind" >/dev/null
done
PY="$(bash "${HERALD_ROOT}/scripts/k8s/test-venv.sh")"
log "tools and images ready after $((SECONDS - started)) s"

work="$(mktemp -d /tmp/herald-cluster.XXXXXX)"
pytest=("$PY" -m pytest -v -s -p no:cacheprovider --rootdir "$HERALD_ROOT")
rc=0
# tests/node, tests/autoscaling and tests/capacity in one session: one installation of Herald on the node.
log "the shared cluster in ${work}: chart tests, then real-node tests, KEDA on real pods and a short scale-out"
(cd "$HERALD_ROOT" && "$PY" tests/sharedcluster.py run "$work" \
  -- "${pytest[@]}" tests/charts \
  -- "${pytest[@]}" tests/node tests/autoscaling tests/capacity) || rc=$?
log "the shared cluster's suites took $((SECONDS - started)) s"
log "the teardown check can fail, and a second node on this machine starts clean (on a node of its own)"
(cd "$HERALD_ROOT" && "${pytest[@]}" tests/node/test_leftovers.py tests/node/test_teardown.py) || rc=1
log "cluster tests took $((SECONDS - started)) s"
exit "$rc"
