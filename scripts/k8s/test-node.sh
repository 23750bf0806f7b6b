#!/usr/bin/env bash
# The real-node tests: the pytest suite tests/node (a control plane with a real node: containerd,
# runc, CNI, kubelet, kube-proxy, CoreDNS; pods really run; what it checks: its modules' docstrings).
# scripts/test.sh runs it last: a teardown that left iptables chains behind cannot break the
# suites before it.
#
# Here, in bash: the tools built or found cached (scripts/k8s/testbed.sh build: the kube binaries
# with kubelet and kube-proxy; CoreDNS), the images (scripts/k8s/images.sh pause, busybox, rabbitmq
# and the two RabbitMQ operators) and the suites' venv; the tests start and stop the cluster
# themselves and fail if its teardown leaves anything. Needs root and Debian's containerd, runc, containernetworking-plugins, iptables,
# conntrack and busybox-static (scripts/install-deps.sh).
#
# Usage: scripts/k8s/test-node.sh [pytest arguments]
# Env:   HERALD_K8S_KEEP=true keeps the cluster running after the tests
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

((EUID == 0)) || die "the real node needs root (containerd, network namespaces, iptables)"
started=$SECONDS
log "tools: testbed build (kube binaries with kubelet and kube-proxy, CoreDNS; cached)"
bash "${HERALD_ROOT}/scripts/k8s/testbed.sh" build
log "images: pause and busybox (scripts/k8s/images.sh; cached)"
bash "${HERALD_ROOT}/scripts/k8s/images.sh" pause >/dev/null
bash "${HERALD_ROOT}/scripts/k8s/images.sh" busybox >/dev/null
log "images: RabbitMQ and its two operators (scripts/k8s/images.sh; cached)"
for kind in rabbitmq rabbitmq-cluster-operator messaging-topology-operator; do
  bash "${HERALD_ROOT}/scripts/k8s/images.sh" "$kind" >/dev/null
done
PY="$(bash "${HERALD_ROOT}/scripts/k8s/test-venv.sh")"
log "tools and images ready after $((SECONDS - started)) s"

log "real-node tests (pytest tests/node)"
rc=0
(cd "$HERALD_ROOT" && "$PY" -m pytest -v -s -p no:cacheprovider --rootdir "$HERALD_ROOT" tests/node "$@") || rc=$?
log "real-node tests took $((SECONDS - started)) s"
exit "$rc"
