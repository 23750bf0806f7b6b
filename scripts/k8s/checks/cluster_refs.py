#!/usr/bin/env python3
"""Assertions on the objects the Herald releases created in a namespace (read from the API server).

Usage: cluster_refs.py NAMESPACE   (kubectl on PATH with KUBECONFIG set)

- every Secret and ConfigMap a pod template, a test pod, a KEDA TriggerAuthentication or a RabbitMQ
  User references exists, with the referenced key;
- every ServiceMonitor selects at least one Service in its namespaces that has the named port
  (ServiceMonitors of Services that an operator creates, labelled herald.dev/operator-service, are
  reported, not required);
- every ScaledObject targets an existing Deployment.
Prints one line per check; exits 1 if any failed.
"""
import json
import subprocess
import sys


def kubectl_json(*args):
    out = subprocess.run(["kubectl", *args, "-o", "json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def items(ns, kind):
    try:
        return kubectl_json("get", kind, "-n", ns)["items"]
    except subprocess.CalledProcessError:
        return []


def main():
    ns = sys.argv[1]
    secrets = {s["metadata"]["name"]: set((s.get("data") or {}).keys()) for s in items(ns, "secrets")}
    configmaps = {c["metadata"]["name"]: set((c.get("data") or {}).keys()) for c in items(ns, "configmaps")}
    failures, checks = [], 0

    def need_secret(owner, name, key=None):
        nonlocal checks
        checks += 1
        if name not in secrets:
            failures.append(f"{owner}: Secret {name} does not exist")
        elif key is not None and key not in secrets[name]:
            failures.append(f"{owner}: Secret {name} has no key {key} (keys: {sorted(secrets[name])})")

    def need_configmap(owner, name, key=None):
        nonlocal checks
        checks += 1
        if name not in configmaps:
            failures.append(f"{owner}: ConfigMap {name} does not exist")
        elif key is not None and key not in configmaps[name]:
            failures.append(f"{owner}: ConfigMap {name} has no key {key}")

    def pod_spec_refs(owner, spec):
        for c in spec.get("containers", []) + spec.get("initContainers", []):
            for e in c.get("env", []):
                ref = e.get("valueFrom", {})
                if "secretKeyRef" in ref and not ref["secretKeyRef"].get("optional"):
                    need_secret(f"{owner} env {e['name']}", ref["secretKeyRef"]["name"], ref["secretKeyRef"]["key"])
                if "configMapKeyRef" in ref and not ref["configMapKeyRef"].get("optional"):
                    need_configmap(f"{owner} env {e['name']}", ref["configMapKeyRef"]["name"], ref["configMapKeyRef"]["key"])
            for ef in c.get("envFrom", []):
                if "secretRef" in ef and not ef["secretRef"].get("optional"):
                    need_secret(f"{owner} envFrom", ef["secretRef"]["name"])
                if "configMapRef" in ef and not ef["configMapRef"].get("optional"):
                    need_configmap(f"{owner} envFrom", ef["configMapRef"]["name"])
        for v in spec.get("volumes", []):
            if "secret" in v and not v["secret"].get("optional"):
                need_secret(f"{owner} volume {v['name']}", v["secret"]["secretName"])
            if "configMap" in v and not v["configMap"].get("optional"):
                need_configmap(f"{owner} volume {v['name']}", v["configMap"]["name"])

    deployments = items(ns, "deployments")
    for d in deployments:
        pod_spec_refs(f"Deployment {d['metadata']['name']}", d["spec"]["template"]["spec"])
    for p in items(ns, "pods"):
        if p["metadata"].get("annotations", {}).get("helm.sh/hook") == "test":
            pod_spec_refs(f"test Pod {p['metadata']['name']}", p["spec"])
    for t in items(ns, "triggerauthentications.keda.sh"):
        for r in t["spec"].get("secretTargetRef", []):
            need_secret(f"TriggerAuthentication {t['metadata']['name']} {r['parameter']}", r["name"], r["key"])
    for u in items(ns, "users.rabbitmq.com"):
        ref = u["spec"].get("importCredentialsSecret")
        if ref:
            need_secret(f"RabbitMQ User {u['metadata']['name']}", ref["name"], "username")
            need_secret(f"RabbitMQ User {u['metadata']['name']}", ref["name"], "password")

    services = items(ns, "services")
    for sm in items(ns, "servicemonitors.monitoring.coreos.com"):
        name = sm["metadata"]["name"]
        sel = sm["spec"].get("selector", {}).get("matchLabels", {})
        ports = {e.get("port") for e in sm["spec"].get("endpoints", [])}
        matched = [s for s in services
                   if sel and all(s["metadata"].get("labels", {}).get(k) == v for k, v in sel.items())
                   and ports <= {p.get("name") for p in s["spec"].get("ports", [])}]
        checks += 1
        if sm["metadata"].get("labels", {}).get("herald.dev/operator-service"):
            print(f"note: ServiceMonitor {name} selects a Service an operator creates ({sel}); not checked here")
        elif not matched:
            failures.append(f"ServiceMonitor {name}: selector {sel} with ports {sorted(ports)} matches no Service")
        else:
            print(f"ok: ServiceMonitor {name} -> Service {', '.join(s['metadata']['name'] for s in matched)}")

    by_name = {d["metadata"]["name"]: d for d in deployments}
    for so in items(ns, "scaledobjects.keda.sh"):
        target = so["spec"]["scaleTargetRef"]["name"]
        checks += 1
        d = by_name.get(target)
        if not d:
            failures.append(f"ScaledObject {so['metadata']['name']}: no Deployment {target}")
            continue
        print(f"ok: ScaledObject {so['metadata']['name']} -> Deployment {target}")

    print(f"references: {checks} checked, {len(failures)} failed")
    for f in failures:
        print(f"FAILED: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
