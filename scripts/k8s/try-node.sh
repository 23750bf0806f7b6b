#!/usr/bin/env bash
# Try Herald on a local Kubernetes node, no cloud cluster needed (README, "Try it on a local
# Kubernetes node"): the test cluster's control plane and real node (containerd, kubelet,
# kube-proxy, CoreDNS; tests/sharedcluster.py), the images built here, the RabbitMQ operators and
# every Herald release from its chart (tests/heraldnode.py), then the demo through the Services. It
# stays up until Ctrl-C, which tears everything down.
#
# Usage: sudo scripts/k8s/try-node.sh [DIR]   (DIR keeps kubeconfig, logs and the admin token;
#                                              default: a new folder under /tmp)
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

((EUID == 0)) || die "the local node needs root (containerd, network namespaces, iptables)"
bash "${HERALD_ROOT}/scripts/install-deps.sh"
bash "${HERALD_ROOT}/scripts/k8s/testbed.sh" build
PY="$(bash "${HERALD_ROOT}/scripts/k8s/test-venv.sh")"
dir="${1:-$(mktemp -d /tmp/herald-node.XXXXXX)}"
mkdir -p "$dir"
cd "$HERALD_ROOT"
exec "$PY" tests/heraldnode.py "$dir"
