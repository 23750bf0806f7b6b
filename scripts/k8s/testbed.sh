#!/usr/bin/env bash
# A real (small) Kubernetes control plane for tests, built from package registries only.
#
#   scripts/k8s/testbed.sh build
#       Builds and caches, under ${HERALD_K8S_CACHE:-~/.cache/herald/k8s}/<version>/:
#         bin/kube-apiserver, bin/kube-controller-manager, bin/kube-scheduler, bin/kubectl, and
#         bin/kubelet, bin/kube-proxy for the real node (tests/realnode.py)
#         (Kubernetes v1.31.4, built from the Go module k8s.io/kubernetes through a wrapper module),
#         bin/kwok (v0.6.1), bin/helm (v3.16.3) and bin/coredns (v1.15.0) (go install),
#         crds/*.yaml: the CRDs of KEDA, the RabbitMQ cluster and messaging-topology
#         operators and prometheus-operator, read from their Go modules (go mod download).
#       Installs Debian's etcd-server if there is no etcd. Idempotent: a warm run takes seconds.
#   scripts/k8s/testbed.sh up DIR
#       Starts etcd (Debian's), kube-apiserver, kube-controller-manager, kube-scheduler and kwok on free
#       ports, with their data, logs and pid files in DIR; creates the fake node(s), installs
#       the CRDs and waits until the node is Ready and the CRDs are Established. Writes
#         DIR/kubeconfig  admin kubeconfig (token auth, system:masters)
#         DIR/env         `source DIR/env` exports KUBECONFIG and puts the cached kubectl, helm,
#                         kwok and control-plane binaries first on PATH
#       Runs `build` first (a no-op when warm).
#   scripts/k8s/testbed.sh down DIR
#       Stops everything `up DIR` started (pid files DIR/*.pid); keeps DIR (logs) unless
#       HERALD_K8S_KEEP_DIR=false.
#   scripts/k8s/testbed.sh env
#       Prints the cache paths (bin, crds) of this version, one `NAME=value` per line.
#   scripts/k8s/testbed.sh tool NAME PACKAGE@VERSION
#       Builds one more Go tool into the same cache the way `build` builds helm (once per version),
#       e.g. helm-docs for scripts/k8s/chart-docs.sh; prints the binary's path (build log on stderr).
#
# Environment (all optional):
#   HERALD_K8S_BIND_ADDRESS   address kube-apiserver binds and advertises (default 127.0.0.1);
#                             set it to an address that a test-made network namespace reaches
#   HERALD_K8S_NODES          number of kwok fake nodes (default 1), named kwok-node-0..N-1
#   HERALD_K8S_NODE_CPU / HERALD_K8S_NODE_MEMORY / HERALD_K8S_NODE_PODS
#                             each node's allocatable (default 32 / 64Gi / 110)
#   HERALD_K8S_HPA_SYNC_PERIOD  kube-controller-manager --horizontal-pod-autoscaler-sync-period
#                             (e.g. 2s; default: the controller's own, 15s)
#   HERALD_K8S_KWOK_CONFIG    kwok --config file (default: kwok's fast pod stages plus one that marks
#                             pods annotated helm.sh/hook=test Succeeded, so `helm test` passes)
#   HERALD_K8S_CONTROLLER_ARGS / HERALD_K8S_APISERVER_ARGS  extra flags (word-split)
#   HERALD_K8S_FEATURE_GATES  --feature-gates of kube-apiserver, kube-controller-manager and
#                             kube-scheduler (e.g. InPlacePodVerticalScaling=true); default: none
#   HERALD_K8S_CACHE          cache root (default ~/.cache/herald/k8s)
#   HERALD_K8S_READY_TIMEOUT  seconds `up` waits for each readiness condition (default 120)
#
# The node-lifecycle controller tolerates an hour without heartbeat: the nodes are fake, and on a
# loaded machine kwok's heartbeats arrive late enough for the default 40 s to mark nodes, and with
# them every pod, not ready. (It must run: it lifts the not-ready taint of new nodes.)
# Limits: pods never run (kwok only fakes their status); the API server's aggregation layer
# routes to Endpoints (--enable-aggregator-routing=true), which must not be loopback addresses.
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

K8S_VERSION=1.31.4
KWOK_VERSION=0.6.1
HELM_VERSION=3.16.3
COREDNS_VERSION=1.15.0
KEDA_VERSION=2.16.1
RABBITMQ_CLUSTER_OPERATOR_VERSION=2.11.0
RABBITMQ_TOPOLOGY_OPERATOR_VERSION=1.15.0
PROMETHEUS_OPERATOR_VERSION=0.78.2

CACHE_ROOT="${HERALD_K8S_CACHE:-${XDG_CACHE_HOME:-${HOME}/.cache}/herald/k8s}"
CACHE="${CACHE_ROOT}/${K8S_VERSION}"
BIN="${CACHE}/bin"
CRDS="${CACHE}/crds"
# kwok and helm versions are part of the file names' keys (see build_go_tool).
TOOL_STAMPS="${CACHE}/stamps"

STAGING_MODULES=(api apiextensions-apiserver apimachinery apiserver cli-runtime client-go
  cloud-provider cluster-bootstrap code-generator component-base component-helpers
  controller-manager cri-api cri-client csi-translation-lib dynamic-resource-allocation
  endpointslice kms kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl
  kubelet metrics mount-utils pod-security-admission sample-apiserver sample-cli-plugin
  sample-controller)

need_go() {
  require_go "the test control plane"
}

# ---------------------------------------------------------------- build

build_control_plane() {
  local names=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy) n missing=false
  # The version the binaries report (the module carries none: it would be v0.0.0-master, which
  # Helm's kubeVersion checks and KEDA refuse). -X only changes the link step.
  # -s -w: no symbol table or DWARF (nothing debugs these; the link of six large binaries is faster).
  local v pkg ldflags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X ${pkg}.gitVersion=v${K8S_VERSION} -X ${pkg}.gitMajor=${K8S_VERSION%%.*}"
    v="${K8S_VERSION#*.}"
    ldflags+=" -X ${pkg}.gitMinor=${v%%.*} -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=1970-01-01T00:00:00Z"
  done
  for n in "${names[@]}"; do [[ -x "${BIN}/${n}" ]] || missing=true; done
  [[ "$(cat "${TOOL_STAMPS}/kubernetes" 2>/dev/null || true)" == "$ldflags" ]] || missing=true
  [[ "$missing" == true ]] || return 0
  log "building ${names[*]} v${K8S_VERSION} (cold: about 6 min)"
  local mod="${CACHE}/k8sbuild" m
  mkdir -p "$mod" "$BIN"
  {
    printf 'module k8sbuild\n\ngo 1.23\n\nrequire k8s.io/kubernetes v%s\n\n' "$K8S_VERSION"
    for m in "${STAGING_MODULES[@]}"; do
      printf 'replace k8s.io/%s => k8s.io/%s v0.%s\n' "$m" "$m" "${K8S_VERSION#1.}"
    done
  } >"${mod}/go.mod"
  cat >"${mod}/tools.go" <<'GO'
//go:build tools

// Package k8sbuild only pins the commands this module builds.
package k8sbuild

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
)
GO
  (
    cd "$mod"
    export GOFLAGS=-mod=mod GOTOOLCHAIN=local
    go mod tidy
    go build -ldflags="$ldflags" -o "${BIN}/" "${names[@]/#/k8s.io/kubernetes/cmd/}"
  )
  mkdir -p "$TOOL_STAMPS"
  printf '%s\n' "$ldflags" >"${TOOL_STAMPS}/kubernetes"
}

# build_go_tool NAME PACKAGE@VERSION: go install into the cache, once per version.
build_go_tool() {
  local name="$1" pkg="$2" stamp="${TOOL_STAMPS}/${1}"
  if [[ -x "${BIN}/${name}" && "$(cat "$stamp" 2>/dev/null || true)" == "$pkg" ]]; then
    return 0
  fi
  log "building ${pkg} (cold: about 2 min)"
  mkdir -p "$BIN" "$TOOL_STAMPS"
  GOBIN="$BIN" GOTOOLCHAIN=local GOFLAGS= go install "$pkg"
  printf '%s\n' "$pkg" >"$stamp"
}

# module_dir MODULE@VERSION: downloads a module into Go's module cache, prints its folder.
module_dir() {
  local json dir
  json="$(GOFLAGS=-mod=mod go mod download -json "$1")" || die "go mod download $1 failed"
  dir="$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"$json")"
  [[ -d "$dir" ]] || die "go mod download $1: no module folder in: ${json}"
  printf '%s\n' "$dir"
}

fetch_crds() {
  local stamp="${TOOL_STAMPS}/crds"
  local want="keda${KEDA_VERSION} rco${RABBITMQ_CLUSTER_OPERATOR_VERSION} mto${RABBITMQ_TOPOLOGY_OPERATOR_VERSION} po${PROMETHEUS_OPERATOR_VERSION}"
  if [[ -d "$CRDS" && "$(cat "$stamp" 2>/dev/null || true)" == "$want" ]]; then
    return 0
  fi
  log "fetching CRDs (KEDA ${KEDA_VERSION}, RabbitMQ operators ${RABBITMQ_CLUSTER_OPERATOR_VERSION}/${RABBITMQ_TOPOLOGY_OPERATOR_VERSION}, prometheus-operator ${PROMETHEUS_OPERATOR_VERSION})"
  local tmp="${CACHE}/crds.tmp" dir f
  rm -rf "$tmp"
  mkdir -p "$tmp" "$TOOL_STAMPS"
  # go mod download needs a module context for -json of a bare MODULE@VERSION: none needed
  # outside a module (GOFLAGS=-mod=mod is harmless), so run it from a neutral folder.
  cd "$tmp"
  dir="$(module_dir "github.com/kedacore/keda/v2@v${KEDA_VERSION}")"
  for f in "${dir}"/config/crd/bases/*.yaml; do cp "$f" "${tmp}/keda-$(basename "$f")"; done
  dir="$(module_dir "github.com/rabbitmq/cluster-operator/v2@v${RABBITMQ_CLUSTER_OPERATOR_VERSION}")"
  for f in "${dir}"/config/crd/bases/*.yaml; do cp "$f" "${tmp}/rabbitmq-$(basename "$f")"; done
  dir="$(module_dir "github.com/rabbitmq/messaging-topology-operator@v${RABBITMQ_TOPOLOGY_OPERATOR_VERSION}")"
  for f in "${dir}"/config/crd/bases/*.yaml; do cp "$f" "${tmp}/rabbitmq-topology-$(basename "$f")"; done
  dir="$(module_dir "github.com/prometheus-operator/prometheus-operator@v${PROMETHEUS_OPERATOR_VERSION}")"
  for f in "${dir}"/example/prometheus-operator-crd/*.yaml; do cp "$f" "${tmp}/prometheus-$(basename "$f")"; done
  cd - >/dev/null
  chmod -R u+w "$tmp"
  rm -rf "$CRDS"
  mv "$tmp" "$CRDS"
  printf '%s\n' "$want" >"$stamp"
}

install_etcd() {
  command -v etcd >/dev/null 2>&1 && return 0
  log "installing Debian's etcd-server"
  if ((EUID != 0)); then die "etcd is missing and installing it needs root: apt-get install etcd-server"; fi
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q etcd-server
  # The package starts a system etcd on 2379; tests use their own on free ports.
}

# kwok's own "fast" pod stages (ready, complete for Jobs, delete) plus one that completes the pods
# of `helm test` (annotated helm.sh/hook: test) once they run, since no container ever runs here.
# Giving kwok any pod stage replaces its defaults, hence the copies.
write_kwok_stages() {
  local out="${CACHE}/kwok-stages.yaml" dir f
  [[ -s "$out" && "$(cat "${TOOL_STAMPS}/kwok-stages" 2>/dev/null || true)" == "$KWOK_VERSION" ]] && return 0
  dir="$(cd "$CACHE" && module_dir "sigs.k8s.io/kwok@v${KWOK_VERSION}")"
  {
    for f in pod-ready pod-complete pod-delete; do
      printf -- '---\n'
      cat "${dir}/kustomize/stage/pod/fast/${f}.yaml"
    done
    cat <<'YAML'
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-complete-helm-test
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchAnnotations:
      helm.sh/hook: test
    matchExpressions:
      - key: '.metadata.deletionTimestamp'
        operator: 'DoesNotExist'
      - key: '.status.phase'
        operator: 'In'
        values: ['Running']
  next:
    statusTemplate: |
      {{ $now := Now }}
      containerStatuses:
      {{ range $index, $item := .spec.containers }}
      - image: {{ $item.image | Quote }}
        name: {{ $item.name | Quote }}
        ready: false
        restartCount: 0
        started: false
        state:
          terminated:
            exitCode: 0
            finishedAt: {{ $now | Quote }}
            reason: Completed
            startedAt: {{ $now | Quote }}
      {{ end }}
      phase: Succeeded
YAML
  } >"${out}.tmp"
  grep -q 'pod-complete-helm-test' "${out}.tmp" || die "could not derive the helm-test stage from kwok's pod-complete stage"
  mv "${out}.tmp" "$out"
  printf '%s\n' "$KWOK_VERSION" >"${TOOL_STAMPS}/kwok-stages"
}

cmd_build() {
  need_go
  install_etcd
  build_control_plane
  build_go_tool kwok "sigs.k8s.io/kwok/cmd/kwok@v${KWOK_VERSION}"
  build_go_tool helm "helm.sh/helm/v3/cmd/helm@v${HELM_VERSION}"
  # the real node's cluster DNS (tests/realnode.py)
  build_go_tool coredns "github.com/coredns/coredns@v${COREDNS_VERSION}"
  fetch_crds
  write_kwok_stages
}


# ---------------------------------------------------------------- up / down

# free_ports N ADDRESS: prints N distinct free TCP ports on ADDRESS (sockets held until all picked).
free_ports() {
  python3 - "$1" "$2" <<'PY'
import socket, sys
n, addr = int(sys.argv[1]), sys.argv[2]
socks = []
for _ in range(n):
    s = socket.socket()
    s.bind((addr, 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

# start NAME DIR COMMAND...: starts a server in the background, pid in DIR/NAME.pid, log in DIR/NAME.log.
start() {
  local name="$1" dir="$2"
  shift 2
  nohup "$@" >"${dir}/${name}.log" 2>&1 </dev/null &
  printf '%s\n' "$!" >"${dir}/${name}.pid"
}

# wait_until SECONDS WHAT COMMAND...: polls COMMAND until it succeeds, or dies after SECONDS.
wait_until() {
  local seconds="$1" what="$2" deadline
  shift 2
  deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "timed out after ${seconds}s waiting for ${what}"
    sleep 0.5
  done
}

# alive DIR NAME...: dies, showing the log's tail, if a started server has exited.
alive() {
  local dir="$1" name
  shift
  for name in "$@"; do
    if ! kill -0 "$(cat "${dir}/${name}.pid")" 2>/dev/null; then
      tail -n 30 "${dir}/${name}.log" >&2 || true
      die "${name} exited (log: ${dir}/${name}.log)"
    fi
  done
}

apiserver_ready() {
  local dir="$1"
  alive "$dir" etcd kube-apiserver
  curl -sfk -H "Authorization: Bearer $(cat "${dir}/token")" "$(cat "${dir}/server")/readyz" >/dev/null
}

write_node() {
  local name="$1" zone="$2"
  cat <<YAML
---
apiVersion: v1
kind: Node
metadata:
  name: ${name}
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    kubernetes.io/hostname: ${name}
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    kubernetes.io/role: agent
    node-role.kubernetes.io/agent: ""
    topology.kubernetes.io/zone: ${zone}
    type: kwok
status:
  allocatable:
    cpu: "${HERALD_K8S_NODE_CPU:-32}"
    memory: ${HERALD_K8S_NODE_MEMORY:-64Gi}
    pods: "${HERALD_K8S_NODE_PODS:-110}"
  capacity:
    cpu: "${HERALD_K8S_NODE_CPU:-32}"
    memory: ${HERALD_K8S_NODE_MEMORY:-64Gi}
    pods: "${HERALD_K8S_NODE_PODS:-110}"
  nodeInfo:
    architecture: amd64
    kubeletVersion: fake
    kubeProxyVersion: fake
    operatingSystem: linux
YAML
}

cmd_up() {
  local dir="${1:?usage: testbed.sh up DIR}"
  local bind="${HERALD_K8S_BIND_ADDRESS:-127.0.0.1}" timeout="${HERALD_K8S_READY_TIMEOUT:-120}"
  local advertise="$bind" host="$bind"
  if [[ "$bind" == 0.0.0.0 ]]; then advertise=127.0.0.1 host=127.0.0.1; fi
  cmd_build
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd -P)"
  if [[ -f "${dir}/kube-apiserver.pid" ]] && pid_file_alive "${dir}/kube-apiserver.pid" kube-apiserver; then
    die "a test control plane already runs in ${dir}: run 'testbed.sh down ${dir}' first"
  fi
  rm -rf "${dir}/etcd-data"
  log "starting a test control plane in ${dir} (apiserver on ${bind})"

  local etcd_client etcd_peer cm_port sched_port apiserver_port kwok_port
  read -r etcd_client etcd_peer cm_port sched_port kwok_port < <(free_ports 5 127.0.0.1)
  read -r apiserver_port < <(free_ports 1 "$host")

  # Credentials: a static admin token, a service-account signing key (self-signed serving
  # certificates are generated by the apiserver itself in --cert-dir).
  random_hex 24 >"${dir}/token"
  printf '%s,admin,admin,system:masters\n' "$(cat "${dir}/token")" >"${dir}/tokens.csv"
  openssl genrsa -out "${dir}/sa.key" 2048 2>/dev/null
  openssl rsa -in "${dir}/sa.key" -pubout -out "${dir}/sa.pub" 2>/dev/null
  printf 'https://%s:%s\n' "$host" "$apiserver_port" >"${dir}/server"
  cat >"${dir}/kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters:
  - name: herald-test
    cluster:
      server: https://${host}:${apiserver_port}
      insecure-skip-tls-verify: true
users:
  - name: admin
    user:
      token: $(cat "${dir}/token")
contexts:
  - name: herald-test
    context: {cluster: herald-test, user: admin}
current-context: herald-test
YAML
  chmod 600 "${dir}/kubeconfig" "${dir}/token" "${dir}/tokens.csv" "${dir}/sa.key"
  cat >"${dir}/env" <<ENV
# source this file: the test control plane started by scripts/k8s/testbed.sh up ${dir}
export KUBECONFIG='${dir}/kubeconfig'
export PATH='${BIN}':"\${PATH}"
export HERALD_K8S_DIR='${dir}'
export HERALD_K8S_CRDS='${CRDS}'
ENV

  start etcd "$dir" etcd --name herald-test --data-dir "${dir}/etcd-data" \
    --listen-client-urls "http://127.0.0.1:${etcd_client}" --advertise-client-urls "http://127.0.0.1:${etcd_client}" \
    --listen-peer-urls "http://127.0.0.1:${etcd_peer}" --initial-advertise-peer-urls "http://127.0.0.1:${etcd_peer}" \
    --initial-cluster "herald-test=http://127.0.0.1:${etcd_peer}" --log-level warn

  local gates=()
  [[ -z "${HERALD_K8S_FEATURE_GATES:-}" ]] || gates=(--feature-gates="$HERALD_K8S_FEATURE_GATES")
  # shellcheck disable=SC2086 # extra flags are word-split on purpose
  start kube-apiserver "$dir" "${BIN}/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:${etcd_client}" \
    --bind-address="$bind" --advertise-address="$advertise" --secure-port="$apiserver_port" \
    --cert-dir="${dir}/certs" --token-auth-file="${dir}/tokens.csv" \
    --service-account-issuer=https://kubernetes.default.svc \
    --service-account-key-file="${dir}/sa.pub" --service-account-signing-key-file="${dir}/sa.key" \
    --service-cluster-ip-range=10.96.0.0/16 --authorization-mode=RBAC \
    --enable-aggregator-routing=true \
    "${gates[@]}" ${HERALD_K8S_APISERVER_ARGS:-}
  wait_until "$timeout" "kube-apiserver /readyz" apiserver_ready "$dir"

  local hpa=()
  [[ -z "${HERALD_K8S_HPA_SYNC_PERIOD:-}" ]] || hpa=(--horizontal-pod-autoscaler-sync-period="$HERALD_K8S_HPA_SYNC_PERIOD")
  # Pods verify the API server with the ca.crt of their service-account volume, which the
  # controller-manager publishes (ConfigMap kube-root-ca.crt) from --root-ca-file: the chain that the
  # API server made for itself in --cert-dir (its serving certificate names the advertised address
  # and the kubernetes Service's ClusterIP and DNS names).
  # shellcheck disable=SC2086
  start kube-controller-manager "$dir" "${BIN}/kube-controller-manager" \
    --kubeconfig="${dir}/kubeconfig" --authentication-kubeconfig="${dir}/kubeconfig" \
    --authorization-kubeconfig="${dir}/kubeconfig" --root-ca-file="${dir}/certs/apiserver.crt" \
    --service-account-private-key-file="${dir}/sa.key" --controllers='*,-serviceaccount-token-controller' \
    --node-monitor-grace-period=1h --node-startup-grace-period=1h \
    --bind-address=127.0.0.1 --secure-port="$cm_port" --leader-elect=false \
    "${hpa[@]}" "${gates[@]}" ${HERALD_K8S_CONTROLLER_ARGS:-}
  start kube-scheduler "$dir" "${BIN}/kube-scheduler" \
    --kubeconfig="${dir}/kubeconfig" --authentication-kubeconfig="${dir}/kubeconfig" \
    --authorization-kubeconfig="${dir}/kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$sched_port" --leader-elect=false "${gates[@]}"

  start kwok "$dir" "${BIN}/kwok" --config="${HERALD_K8S_KWOK_CONFIG:-${CACHE}/kwok-stages.yaml}" --kubeconfig="${dir}/kubeconfig" \
    --server-address="127.0.0.1:${kwok_port}" \
    --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --manage-nodes-with-label-selector= --manage-single-node= \
    --disregard-status-with-annotation-selector=kwok.x-k8s.io/status=custom \
    --disregard-status-with-label-selector= --cidr=10.0.0.1/24 --node-ip=10.0.0.1

  local kc=("${BIN}/kubectl" --kubeconfig="${dir}/kubeconfig") i n="${HERALD_K8S_NODES:-1}" zones=(zone-a zone-b zone-c)
  for ((i = 0; i < n; i++)); do
    write_node "kwok-node-${i}" "${zones[i % 3]}"
  done | "${kc[@]}" apply -f - >/dev/null

  log "installing CRDs from ${CRDS}"
  # Server-side apply: some CRDs are too big for the last-applied annotation of client-side apply.
  "${kc[@]}" apply --server-side --force-conflicts -f "$CRDS" >/dev/null
  "${kc[@]}" wait --for condition=Established --timeout="${timeout}s" -f "$CRDS" >/dev/null
  alive "$dir" kube-controller-manager kube-scheduler kwok
  "${kc[@]}" wait --for condition=Ready --timeout="${timeout}s" node --all >/dev/null
  # The default ServiceAccount appears once the controller-manager's serviceaccount controller runs.
  wait_until "$timeout" "the default ServiceAccount" "${kc[@]}" get serviceaccount default -n default
  log "test control plane ready: source ${dir}/env (KUBECONFIG=${dir}/kubeconfig)"
}

cmd_down() {
  local dir="${1:?usage: testbed.sh down DIR}" name
  [[ -d "$dir" ]] || return 0
  for name in kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do
    stop_pid_file "${dir}/${name}.pid" "$name" "$name" 20 >/dev/null
  done
  rm -rf "${dir}/etcd-data"
  if [[ "${HERALD_K8S_KEEP_DIR:-true}" == false ]]; then rm -rf "$dir"; fi
}

cmd_env() {
  printf 'HERALD_K8S_BIN=%s\nHERALD_K8S_CRDS=%s\n' "$BIN" "$CRDS"
}

case "${1:-}" in
  build) cmd_build ;;
  up) cmd_up "${2:-}" ;;
  down) cmd_down "${2:-}" ;;
  env) cmd_env ;;
  tool)
    need_go
    build_go_tool "${2:?usage: testbed.sh tool NAME PACKAGE@VERSION}" "${3:?usage: testbed.sh tool NAME PACKAGE@VERSION}" >&2
    printf '%s\n' "${BIN}/${2}"
    ;;
  *) die "usage: $0 build | up DIR | down DIR | env | tool NAME PACKAGE@VERSION" ;;
esac
