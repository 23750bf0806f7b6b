"""Every reference between the releases' objects resolves, as the API server holds them after the
install and again after the gateway's upgrade to KEDA (its TriggerAuthentication and ScaledObject):

- every Secret and ConfigMap that a pod template, a test pod, a KEDA TriggerAuthentication or a
  RabbitMQ User references exists, with the referenced key;
- every ServiceMonitor selects at least one Service that has the named port (ServiceMonitors of
  Services that an operator creates, labelled herald.dev/operator-service, are noted, not required);
- every ScaledObject targets an existing Deployment.
"""

from __future__ import annotations

import pytest

from releases import Objects


class References:
    """The checks on one snapshot: how many references were checked, which failed, what was seen."""

    def __init__(self, objects: Objects):
        self.secrets = {s["metadata"]["name"]: set((s.get("data") or {})) for s in objects["secrets"]}
        self.configmaps = {c["metadata"]["name"]: set((c.get("data") or {})) for c in objects["configmaps"]}
        self.checked = 0
        self.failures: list[str] = []
        self.notes: list[str] = []

        for d in objects["deployments"]:
            self.pod_spec(f"Deployment {d['metadata']['name']}", d["spec"]["template"]["spec"])
        for p in objects["pods"]:
            if (p["metadata"].get("annotations") or {}).get("helm.sh/hook") == "test":
                self.pod_spec(f"test Pod {p['metadata']['name']}", p["spec"])
        for t in objects["triggerauthentications.keda.sh"]:
            for r in t["spec"].get("secretTargetRef", []):
                self.need("Secret", self.secrets, f"TriggerAuthentication {t['metadata']['name']} {r['parameter']}",
                          r["name"], r["key"])
        for u in objects["users.rabbitmq.com"]:
            ref = u["spec"].get("importCredentialsSecret")
            if ref:
                for key in ("username", "password"):
                    self.need("Secret", self.secrets, f"RabbitMQ User {u['metadata']['name']}", ref["name"], key)
        for sm in objects["servicemonitors.monitoring.coreos.com"]:
            self.service_monitor(sm, objects["services"])
        deployments = {d["metadata"]["name"] for d in objects["deployments"]}
        for so in objects["scaledobjects.keda.sh"]:
            target = so["spec"]["scaleTargetRef"]["name"]
            self.checked += 1
            if target in deployments:
                self.notes.append(f"ScaledObject {so['metadata']['name']} -> Deployment {target}")
            else:
                self.failures.append(f"ScaledObject {so['metadata']['name']}: no Deployment {target}")

    def need(self, kind: str, existing: dict[str, set[str]], owner: str, name: str, key: str | None = None) -> None:
        self.checked += 1
        if name not in existing:
            self.failures.append(f"{owner}: {kind} {name} does not exist")
        elif key is not None and key not in existing[name]:
            self.failures.append(f"{owner}: {kind} {name} has no key {key} (keys: {sorted(existing[name])})")

    def pod_spec(self, owner: str, spec: dict) -> None:
        for c in spec.get("containers", []) + spec.get("initContainers", []):
            for e in c.get("env", []):
                ref = e.get("valueFrom", {})
                if "secretKeyRef" in ref and not ref["secretKeyRef"].get("optional"):
                    self.need("Secret", self.secrets, f"{owner} env {e['name']}", ref["secretKeyRef"]["name"],
                              ref["secretKeyRef"]["key"])
                if "configMapKeyRef" in ref and not ref["configMapKeyRef"].get("optional"):
                    self.need("ConfigMap", self.configmaps, f"{owner} env {e['name']}", ref["configMapKeyRef"]["name"],
                              ref["configMapKeyRef"]["key"])
            for ef in c.get("envFrom", []):
                if "secretRef" in ef and not ef["secretRef"].get("optional"):
                    self.need("Secret", self.secrets, f"{owner} envFrom", ef["secretRef"]["name"])
                if "configMapRef" in ef and not ef["configMapRef"].get("optional"):
                    self.need("ConfigMap", self.configmaps, f"{owner} envFrom", ef["configMapRef"]["name"])
        for v in spec.get("volumes", []):
            if "secret" in v and not v["secret"].get("optional"):
                self.need("Secret", self.secrets, f"{owner} volume {v['name']}", v["secret"]["secretName"])
            if "configMap" in v and not v["configMap"].get("optional"):
                self.need("ConfigMap", self.configmaps, f"{owner} volume {v['name']}", v["configMap"]["name"])

    def service_monitor(self, sm: dict, services: list[dict]) -> None:
        name = sm["metadata"]["name"]
        selector = sm["spec"].get("selector", {}).get("matchLabels", {})
        ports = {e.get("port") for e in sm["spec"].get("endpoints", [])}
        matched = [s["metadata"]["name"] for s in services
                   if selector and all((s["metadata"].get("labels") or {}).get(k) == v for k, v in selector.items())
                   and ports <= {p.get("name") for p in s["spec"].get("ports", [])}]
        self.checked += 1
        if (sm["metadata"].get("labels") or {}).get("herald.dev/operator-service"):
            self.notes.append(f"ServiceMonitor {name} selects a Service an operator creates ({selector}); not checked here")
        elif not matched:
            self.failures.append(f"ServiceMonitor {name}: selector {selector} with ports {sorted(ports)} matches no Service")
        else:
            self.notes.append(f"ServiceMonitor {name} -> Service {', '.join(matched)}")


@pytest.mark.parametrize("step", ["installed", "upgraded"])
def test_references_resolve(request, step):
    """After the install, and after the upgrades (the gateway's TriggerAuthentication included)."""
    references = References(request.getfixturevalue(step).objects)
    print("\n" + "\n".join(references.notes))
    assert references.checked and not references.failures, "\n".join(references.failures)
