#!/usr/bin/env bash
# A scale-out run from real pods on the local test node (locust/README.md, "Kubernetes mode"): the
# test cluster's control plane and real node with Herald installed (as scripts/k8s/try-node.sh), the
# Locust image (scripts/k8s/images.sh locust) on the node, then scripts/scale-out.sh SERVICE --mode
# kubernetes against it (tests/scaleoutnode.py); everything is torn down at the end or on Ctrl-C.
# The real node is one per machine: run it under the machine's lock.
#
# Usage: sudo flock /tmp/herald-node.lock scripts/k8s/scale-out-node.sh gateway --max-n 6 \
#          --cpu-limit 250m --descending --duration 180 --warmup 60 --fit-max-n 5 [--run-id ID] \
#          [-- dispatcher --max-n 4 ...] [-- connection-manager --max-n 4 ...]   (more services,
#          one after the other, same installation; each Deployment is put back as found after its run)
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

((EUID == 0)) || die "the local node needs root (containerd, network namespaces, iptables)"
[[ $# -ge 1 ]] || die "usage: $0 gateway|dispatcher|connection-manager [scale-out.sh options] [-- SERVICE [options]]..."
bash "${HERALD_ROOT}/scripts/install-deps.sh"
bash "${HERALD_ROOT}/scripts/k8s/testbed.sh" build
PY="$(bash "${HERALD_ROOT}/scripts/k8s/test-venv.sh")"
dir="$(mktemp -d /tmp/herald-scale-out.XXXXXX)"
cd "$HERALD_ROOT"
exec "$PY" tests/scaleoutnode.py "$dir" "$@"
