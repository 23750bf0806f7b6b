#!/usr/bin/env bash
# The test cluster's tools and images that do not need Maven's jars, built and cached:
#   the control plane, kwok, helm and CoreDNS (scripts/k8s/testbed.sh build), KEDA
#   (scripts/k8s/keda-build.sh), helm-docs (scripts/k8s/chart-docs.sh --tool), and the images
#   base, pause, busybox, rabbitmq, the RabbitMQ operators and redis (scripts/k8s/images.sh).
# Cold, on 2 cores, about 22 minutes (almost all of it Go compiling); warm, seconds. What needs
# Maven's jars (the services' images) or the test venv is left to scripts/k8s/test-cluster.sh,
# which runs this first.
#
# scripts/test.sh starts it in the background at idle CPU priority while the Python and Java stages
# run (see there), so that a cold run spends the CPU those stages leave idle on it.
#
# Usage: scripts/k8s/tools.sh       (output: the builds' progress, on stderr and stdout)
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

K8S="${HERALD_ROOT}/scripts/k8s"

log "tools: testbed build (kube binaries, kwok, helm, CoreDNS, CRDs; cached)"
bash "${K8S}/testbed.sh" build
log "tools: KEDA's operator and metrics adapter (scripts/k8s/keda-build.sh; cached)"
bash "${K8S}/keda-build.sh" >/dev/null
log "tools: helm-docs (scripts/k8s/chart-docs.sh --tool; cached)"
bash "${K8S}/chart-docs.sh" --tool >/dev/null
log "images: base, pause, busybox, RabbitMQ and its operators, Redis (scripts/k8s/images.sh; cached)"
for kind in base pause busybox rabbitmq rabbitmq-cluster-operator messaging-topology-operator redis; do
  bash "${K8S}/images.sh" "$kind" >/dev/null
done
