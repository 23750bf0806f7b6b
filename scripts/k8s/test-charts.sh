#!/usr/bin/env bash
# Herald's chart checks, part of the test command (scripts/test.sh runs it after Maven, whose tests
# leave the Prometheus scrapes the metric-name check reads).
#
#   1. static: `helm lint --strict` (values.schema.json included) of every chart under every
#      ci/*-values.yaml; values the schemas must refuse; keda/ equals what the gateway chart renders;
#      push-platform's queues equal what libs/contract declares.
#   2. a real control plane (scripts/k8s/testbed.sh: kube-apiserver, controller-manager, scheduler,
#      etcd, kwok nodes) with the real CRDs of KEDA, the RabbitMQ operators and prometheus-operator:
#      every rendered scenario passes the API server's validation (dry run), then the releases are
#      installed in order with `helm install --wait`, tested, upgraded with changed values, rolled
#      back and uninstalled, with assertions on the objects at each step.
#   3. every metric a dashboard (grafana/) or an alert rule uses is in a scrape of the services.
#
# Honest limits: pods do not run under kwok; "Available" and `helm test` prove the objects, their
# wiring and the controllers acting on them, not the containers. kwok marks the helm test pods
# Succeeded (a kwok Stage in the testbed); the operators (RabbitMQ, KEDA, Prometheus) are not running,
# so their CRs are validated and stored but not reconciled.
#
# Usage: scripts/k8s/test-charts.sh        (HERALD_K8S_KEEP=true keeps the cluster and its dir)
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

K8S="${HERALD_ROOT}/scripts/k8s"
CHARTS_DIR="${HERALD_ROOT}/charts"
CHARTS=(push-platform dispatcher gateway connection-manager)
NS=herald
WORK="$(mktemp -d "${TMPDIR:-/tmp}/herald-charts.XXXXXX")"
API_VERSIONS=(--kube-version 1.31.4 --api-versions monitoring.coreos.com/v1 --api-versions keda.sh/v1alpha1 --api-versions rabbitmq.com/v1beta1)
started=$SECONDS
phase_started=$SECONDS
failures=0
passes=0

cleanup() {
  local rc=$?
  if [[ "${HERALD_K8S_KEEP:-false}" == true ]]; then
    log "kept the test cluster: source ${WORK}/k8s/env"
  else
    bash "${K8S}/testbed.sh" down "${WORK}/k8s" >/dev/null 2>&1 || true
    rm -rf "$WORK"
  fi
  exit "$rc"
}
trap cleanup EXIT

phase() {
  log "$1 ($((SECONDS - phase_started)) s since the last phase, $((SECONDS - started)) s in all)"
  phase_started=$SECONDS
}
ok() {
  printf '  ok: %s\n' "$*"
  passes=$((passes + 1))
}
fail() {
  printf '  FAILED: %s\n' "$*" >&2
  failures=$((failures + 1))
}
# check DESCRIPTION COMMAND...: runs COMMAND, counts a failure (with its output) if it fails.
check() {
  local what="$1" out
  shift
  if out="$("$@" 2>&1)"; then ok "$what"; else fail "$what"; printf '%s\n' "$out" | tail -n 20 | sed 's/^/    /' >&2; fi
}
# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND until it succeeds (or counts a failure).
wait_for() {
  local seconds="$1" what="$2" deadline
  shift 2
  deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then fail "$what (not within ${seconds}s)"; return 1; fi
    sleep 0.5
  done
  ok "$what"
}

# ------------------------------------------------------------------ tools
phase "tools: testbed build (kube binaries, kwok, helm, CRDs; cached)"
bash "${K8S}/testbed.sh" build
eval "$(bash "${K8S}/testbed.sh" env)"
export PATH="${HERALD_K8S_BIN}:${PATH}"
helm version --short

# Python for the checks (jsonschema, PyYAML), in a venv of its own; installed once.
VENV="${XDG_CACHE_HOME:-${HOME}/.cache}/herald/venv-charts"
if ! "${VENV}/bin/python" -c 'import jsonschema, yaml' >/dev/null 2>&1; then
  log "creating ${VENV} (jsonschema, PyYAML)"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "${VENV}/bin/python" -m pip install -q --disable-pip-version-check 'jsonschema>=4,<5' 'PyYAML>=6,<7'
fi
PY="${VENV}/bin/python"

# ------------------------------------------------------------------ static
phase "static: helm lint --strict and schema of every ci scenario"
mkdir -p "${WORK}/rendered"
for chart in "${CHARTS[@]}"; do
  dir="${CHARTS_DIR}/${chart}"
  if grep -q '^dependencies:' "${dir}/Chart.yaml"; then
    helm dependency build "$dir" >/dev/null
  fi
  for values in "${dir}"/ci/*-values.yaml; do
    scenario="$(basename "$values" -values.yaml)"
    check "lint ${chart} (${scenario})" helm lint --strict "$dir" -f "$values"
    helm template "herald-${chart}" "$dir" -n "$NS" -f "$values" "${API_VERSIONS[@]}" \
      >"${WORK}/rendered/${chart}-${scenario}.yaml"
  done
done

# The schemas must refuse what would make the deployment unsafe or broken; each must fail lint.
refuse() {
  local chart="$1"
  shift
  if helm lint --strict "${CHARTS_DIR}/${chart}" "$@" >/dev/null 2>&1; then
    fail "schema of ${chart} accepts $*"
  else
    ok "schema of ${chart} refuses $*"
  fi
}
refuse dispatcher --set securityContext.readOnlyRootFilesystem=false
refuse dispatcher --set podSecurityContext.runAsNonRoot=false
refuse dispatcher --set replicaCount=-1
refuse dispatcher --set service.type=Internal
refuse dispatcher --set config.lower_case=1
refuse dispatcher --set unknownKey=1
refuse gateway --set keda.queues=null
refuse gateway --set keda.messagesPerReplica=0
refuse connection-manager --set mqttService.type=External
refuse push-platform --set herald.cryptoKey=short
refuse push-platform --set herald.adminToken=short

# keda/ holds the gateway's KEDA objects as the chart renders them with KEDA on (defaults otherwise).
helm template herald-gateway "${CHARTS_DIR}/gateway" -n "$NS" --kube-version 1.31.4 --set keda.enabled=true \
  --show-only templates/keda.yaml >"${WORK}/keda.yaml"
check "keda/gateway-scaledobject.yaml is what charts/gateway renders (regenerate: see keda/README.md)" \
  diff -u "${HERALD_ROOT}/keda/gateway-scaledobject.yaml" "${WORK}/keda.yaml"

# skaffold.yaml against skaffold's own JSON schema for its apiVersion (the schemas ship in skaffold's
# Go module; fetched once into Go's module cache).
SKAFFOLD_MODULE=github.com/GoogleContainerTools/skaffold/v2@v2.16.1
skaffold_dir="$(cd "$WORK" && GOFLAGS=-mod=mod go mod download -json "$SKAFFOLD_MODULE" |
  "$PY" -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')"
check "skaffold.yaml validates against skaffold's schema" \
  "$PY" "${K8S}/checks/skaffold_schema.py" "${HERALD_ROOT}/skaffold.yaml" "${skaffold_dir}/docs-v2/content/en/schemas"

# Jib assembles each service's image without Docker. No registry is reachable here, so the base is
# `scratch` (the real base, eclipse-temurin:25-jre, comes from the root pom.xml); what is checked is
# the image Jib writes: its name, the non-root user and the entrypoint.
phase "images: Jib builds the service images (jib:buildTar)"
mvn_flags=(-B -q)
[[ "${CI:-}" != true ]] || mvn_flags+=(--no-transfer-progress)
if (cd "${HERALD_ROOT}" && mvn "${mvn_flags[@]}" -pl :dispatcher,:gateway,:provider-sandbox,:connection-manager -am package jib:buildTar \
  -DskipTests -Djib.from.image=scratch >"${WORK}/jib.log" 2>&1); then
  for module in dispatcher gateway provider-sandbox connection-manager; do
    check "image herald-${module}: user 65532, java entrypoint" "$PY" -c '
import json, sys, tarfile
with tarfile.open(sys.argv[1]) as t:
    manifest = json.load(t.extractfile("manifest.json"))[0]
    config = json.load(t.extractfile(manifest["Config"]))["config"]
assert manifest["RepoTags"] == ["herald-%s:latest" % sys.argv[2]], manifest["RepoTags"]
assert config["User"] == "65532:65532", config["User"]
assert config["Entrypoint"][0] == "java", config["Entrypoint"]
' "$(module_dir "$module")/target/jib-image.tar" "$module"
  done
else
  fail "jib:buildTar (log: tail below)"
  tail -n 20 "${WORK}/jib.log" >&2
fi

# ------------------------------------------------------------------ cluster
phase "cluster: testbed up"
HERALD_K8S_NODES=3 bash "${K8S}/testbed.sh" up "${WORK}/k8s"
# shellcheck disable=SC1091
source "${WORK}/k8s/env"
kubectl create namespace "$NS" >/dev/null

phase "cluster: every rendered scenario passes the API server's validation (server-side dry run)"
for rendered in "${WORK}"/rendered/*.yaml; do
  check "dry run $(basename "$rendered" .yaml)" \
    kubectl apply --dry-run=server --validate=strict -n "$NS" -f "$rendered"
done

# kwok has no load-balancer controller: give a LoadBalancer Service an address as a cloud's would
# (192.0.2.0/24 is TEST-NET-1: written into the status only, never contacted).
fake_load_balancer() {
  local svc="$1" deadline=$((SECONDS + 120))
  until kubectl -n "$NS" get service "$svc" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.5
  done
  kubectl -n "$NS" patch service "$svc" --subresource=status --type=merge \
    -p '{"status":{"loadBalancer":{"ingress":[{"ip":"192.0.2.10"}]}}}' >/dev/null
}

install() {
  local release="$1" chart="$2"
  shift 2
  check "helm install --wait ${release}" \
    helm install "$release" "${CHARTS_DIR}/${chart}" -n "$NS" --wait --timeout 120s "$@"
}

phase "cluster: helm install --wait, in the README's order"
install herald-platform push-platform
install herald-dispatcher dispatcher
install herald-gateway gateway
fake_load_balancer herald-connection-manager-mqtt &
lb_pid=$!
install herald-connection-manager connection-manager
wait "$lb_pid" || fail "the MQTT LoadBalancer Service never appeared"

phase "cluster: assertions on the installed objects"
for d in herald-dispatcher herald-gateway herald-connection-manager; do
  check "Deployment ${d} Available" kubectl -n "$NS" wait --for=condition=Available --timeout=60s "deployment/${d}"
done
# spec.replicas of the three Deployments: 2 each by default.
check "Deployments run their default 2 replicas" \
  test "$(kubectl -n "$NS" get deploy -l app.kubernetes.io/part-of=herald -o jsonpath='{range .items[*]}{.status.readyReplicas}{" "}{end}')" = "2 2 2 "
# The CRs exist, i.e. the API server accepted them against the operators' CRD schemas.
count() { kubectl -n "$NS" get "$1" -o name 2>/dev/null | wc -l; }
expect_count() {
  local kind="$1" want="$2" got
  got="$(count "$kind")"
  if [[ "$got" == "$want" ]]; then ok "${want} ${kind} accepted"; else fail "${kind}: ${got}, expected ${want}"; fi
}
expect_count rabbitmqclusters.rabbitmq.com 1
expect_count queues.rabbitmq.com 4
expect_count exchanges.rabbitmq.com 2
expect_count bindings.rabbitmq.com 4
expect_count policies.rabbitmq.com 1
expect_count users.rabbitmq.com 1
expect_count permissions.rabbitmq.com 1
expect_count servicemonitors.monitoring.coreos.com 4
expect_count prometheusrules.monitoring.coreos.com 3
check "6 Grafana dashboards as ConfigMaps labelled grafana_dashboard=1" \
  test "$(kubectl -n "$NS" get configmaps -l grafana_dashboard=1 -o name | wc -l)" = 6
check "every Secret/ConfigMap reference resolves, every ServiceMonitor selects its Service" \
  "$PY" "${K8S}/checks/cluster_refs.py" "$NS"
"$PY" "${K8S}/checks/cluster_refs.py" "$NS" | grep '^ok: ServiceMonitor' | sed 's/^/  /' || true

# The queues the API server stored equal those the services declare (libs/contract).
contract_classes="${HERALD_ROOT}/libs/contract/target/classes"
if [[ -d "$contract_classes" ]] && java25="$(find_java25)"; then
  "$java25" -cp "$contract_classes" "${K8S}/checks/QueueTopologyJson.java" >"${WORK}/contract-topology.json"
  kubectl -n "$NS" get queues.rabbitmq.com,exchanges.rabbitmq.com,bindings.rabbitmq.com -o json >"${WORK}/topology.json"
  check "push-platform's queue topology equals what libs/contract declares" \
    "$PY" "${K8S}/checks/queue_topology.py" "${WORK}/contract-topology.json" "${WORK}/topology.json"
else
  fail "libs/contract/target/classes or a JDK 25 is missing: run Maven first (scripts/test.sh does)"
fi

phase "metrics: every name in the dashboards and alert rules is exported by the services"
kubectl -n "$NS" get prometheusrules.monitoring.coreos.com -o json >"${WORK}/rules.json"
check "dashboard and alert metric names exist in the services' scrapes" \
  "$PY" "${K8S}/checks/metric_names.py" --services "${HERALD_ROOT}" \
  --dashboards "${HERALD_ROOT}/grafana" --rules "${WORK}/rules.json"
"$PY" "${K8S}/checks/metric_names.py" --services "${HERALD_ROOT}" \
  --dashboards "${HERALD_ROOT}/grafana" --rules "${WORK}/rules.json" 2>/dev/null | sed 's/^/  /' || true

phase "cluster: helm test (kwok completes the test pods)"
for release in herald-platform herald-dispatcher herald-gateway herald-connection-manager; do
  check "helm test ${release}" helm test "$release" -n "$NS" --timeout 60s
done

phase "cluster: helm upgrade with changed values"
secret_value() { kubectl -n "$NS" get secret "$1" -o "jsonpath={.data.${2}}" 2>/dev/null || echo "(no ${1})"; }
password_before="$(secret_value herald-rabbitmq-connection password)"
crypto_before="$(secret_value herald-app crypto-key)"
check "upgrade herald-platform (5 RabbitMQ nodes)" \
  helm upgrade herald-platform "${CHARTS_DIR}/push-platform" -n "$NS" --wait --set rabbitmq.replicas=5
check "RabbitmqCluster has 5 replicas" \
  test "$(kubectl -n "$NS" get rabbitmqcluster herald-rabbitmq -o jsonpath='{.spec.replicas}')" = 5
check "generated credentials survive the upgrade" \
  test "$(secret_value herald-rabbitmq-connection password)$(secret_value herald-app crypto-key)" = "${password_before}${crypto_before}"

template_before="$(kubectl -n "$NS" get deploy herald-dispatcher -o jsonpath='{.spec.template.metadata.annotations.checksum/config}' 2>/dev/null || true)"
check "upgrade herald-dispatcher (3 replicas, a config value)" \
  helm upgrade herald-dispatcher "${CHARTS_DIR}/dispatcher" -n "$NS" --wait \
  --set replicaCount=3 --set config.HERALD_DISPATCHER_MAX_TARGETS_PER_REQUEST=500
check "dispatcher: 3 ready replicas" \
  test "$(kubectl -n "$NS" get deploy herald-dispatcher -o jsonpath='{.status.readyReplicas}')" = 3
check "dispatcher: the ConfigMap has the new value" \
  test "$(kubectl -n "$NS" get configmap herald-dispatcher -o jsonpath='{.data.HERALD_DISPATCHER_MAX_TARGETS_PER_REQUEST}')" = 500
check "dispatcher: a config change rolls the pods (new pod-template checksum)" \
  test "$(kubectl -n "$NS" get deploy herald-dispatcher -o jsonpath='{.spec.template.metadata.annotations.checksum/config}')" != "$template_before"

check "upgrade herald-gateway to KEDA scaling" \
  helm upgrade herald-gateway "${CHARTS_DIR}/gateway" -n "$NS" --wait -f "${CHARTS_DIR}/gateway/ci/keda-values.yaml"
expect_count scaledobjects.keda.sh 1
expect_count triggerauthentications.keda.sh 1
check "gateway: Helm's manifest leaves replicas to KEDA" \
  bash -c "! helm get manifest herald-gateway -n '$NS' | grep -q '^  replicas:'"
check "gateway: ScaledObject uses protocol http over the summed work queues" \
  test "$(kubectl -n "$NS" get scaledobject herald-gateway -o jsonpath='{.spec.triggers[0].metadata.protocol} {.spec.triggers[0].metadata.operation}')" = "http sum"
check "references still resolve (TriggerAuthentication included)" "$PY" "${K8S}/checks/cluster_refs.py" "$NS"

phase "cluster: helm rollback"
check "rollback herald-dispatcher to revision 1" helm rollback herald-dispatcher 1 -n "$NS" --wait
check "dispatcher: back to 2 replicas and the default config" \
  test "$(kubectl -n "$NS" get deploy herald-dispatcher -o jsonpath='{.spec.replicas}')$(kubectl -n "$NS" get configmap herald-dispatcher -o jsonpath='{.data.HERALD_DISPATCHER_MAX_TARGETS_PER_REQUEST}')" = 2
check "rollback herald-gateway to revision 1" helm rollback herald-gateway 1 -n "$NS" --wait --timeout 60s
expect_count scaledobjects.keda.sh 0
check "gateway: Helm manages 2 replicas again" \
  test "$(kubectl -n "$NS" get deploy herald-gateway -o jsonpath='{.spec.replicas}')" = 2
check "dispatcher revision 3 is the rollback" \
  test "$(helm history herald-dispatcher -n "$NS" -o json | python3 -c 'import json,sys; h=json.load(sys.stdin); print(h[-1]["revision"], h[-1]["description"])')" = "3 Rollback to 1"

phase "cluster: helm uninstall leaves nothing behind"
for release in herald-connection-manager herald-gateway herald-dispatcher herald-platform; do
  check "uninstall ${release}" helm uninstall "$release" -n "$NS" --wait --timeout 120s
done
# Everything namespaced that the API server lists, labelled by one of the releases.
kinds="$(kubectl api-resources --namespaced --verbs=list -o name | paste -sd, -)"
left="$(kubectl -n "$NS" get "$kinds" -l 'app.kubernetes.io/part-of=herald' -o name 2>/dev/null | sort)"
kept="secret/herald-app
secret/herald-rabbitmq-connection
secret/herald-redis"
check "only the Secrets marked helm.sh/resource-policy=keep are left" test "$left" = "$kept"
# Pods are deleted by the Deployments' garbage collection; wait for them.
wait_for 60 "no pods left in ${NS}" bash -c "test -z \"\$(kubectl -n '$NS' get pods -o name)\""
check "no Helm release left" test -z "$(helm list -n "$NS" -a -q)"

phase "done"
log "chart checks took $((SECONDS - started)) s"
# The plain closing line a CI log reader understands.
printf 'charts: %d passed, %d failed\n' "$passes" "$failures"
((failures == 0))
