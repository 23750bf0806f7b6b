"""Faults with real pods on the real node (issue 11), each checked at the provider sandbox by
message id: nothing lost, nothing sent twice.

- a gateway pod deleted (the chart's grace period) in the middle of a topic campaign;
- a rolling upgrade of the dispatcher and the gateway (`helm upgrade` with a changed pod annotation)
  while a client keeps sending: no 5xx, no connection error, every 202 delivered once;
- a connection-manager pod deleted with MQTT devices connected: they reconnect through the Service
  and receive what was sent while they were away, once.

Runs after test_herald.py in the same session (file order) on its `platform`; each test ends with
every release's pods Ready again, so the tests after it find the platform healthy.
"""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from herald_load.provisioning import Provisioned, Provisioner
from herald_load.servers import http_json

from heraldnode import Herald
from traffic import (MqttDevices, Sandbox, Sender, message_states, metric, pods_of,
                     ready, trouble, wait_for, wait_for_final_states, wait_until_replaced)

CAMPAIGN = 4000          # FCM devices subscribed to the campaign's topic
CAMPAIGN_LATENCY_MS = 1500  # the sandbox's answer time: 512 requests in flight take ~12 s for the campaign
DEVICES = 6              # MQTT devices


@pytest.fixture(scope="module")
def services(platform: Herald):
    """Where the releases' Services answer (a herald_load DemoTarget)."""
    return platform.demo_target()


@pytest.fixture(scope="module")
def api(services) -> str:
    return services.dispatcher


@pytest.fixture(scope="module")
def sandbox(services) -> Sandbox:
    return Sandbox(services.sandbox)


@pytest.fixture(scope="module")
def provisioner(platform: Herald, api: str, sandbox: Sandbox) -> Provisioner:
    return Provisioner(api, platform.admin_token, sandbox.url)


@pytest.fixture(scope="module")
def app(provisioner: Provisioner) -> Provisioned:
    return provisioner.create_app(f"faults-{int(time.time())}")


def delete_pod(platform: Herald, release: str) -> str:
    """Deletes one Ready pod of `release` with the chart's grace period; its name."""
    pod = next(p for p in pods_of(platform, release) if ready(p))["metadata"]["name"]
    platform.kube.kubectl("delete", "pod", pod, "-n", platform.namespace, "--wait=false")
    return pod


def assert_each_token_once(sandbox: Sandbox, tokens: list[str]) -> None:
    """Each token accepted exactly once at the sandbox, no other token, and no duplicate of any
    message id (the counts start at the test's reset)."""
    with ThreadPoolExecutor(8) as pool:
        counts = dict(zip(tokens, pool.map(sandbox.received, tokens)))
    wrong = {token: n for token, n in counts.items() if n != 1}
    assert not wrong, f"{len(wrong)} of {len(tokens)} tokens not received exactly once, e.g. {dict(list(wrong.items())[:10])}"
    stats = sandbox.stats()
    assert (stats["duplicates"], stats["accepted"], stats["distinctTokens"]) == (0, len(tokens), len(tokens)), stats


def assert_sent_once(api: str, app: Provisioned, sandbox: Sandbox, sends, other_tokens: list[str] = ()) -> None:
    """Every send answered 202 and reached `sent`; its token, and each of `other_tokens`, got
    exactly one push."""
    assert sends and all(s.status == 202 for s in sends), [(s.token, s.attempts) for s in sends if s.status != 202][:10]
    states = wait_for_final_states(api, app.app, app.api_key, [s.message_id for s in sends])
    not_sent = {i: s for i, s in states.items() if s["state"] != "sent"}
    assert not not_sent, f"{len(not_sent)} messages not sent, e.g. {list(not_sent.items())[:3]}"
    assert_each_token_once(sandbox, [s.token for s in sends] + list(other_tokens))


def test_gateway_pod_deleted_mid_campaign(platform, api, app, sandbox, provisioner):
    topic = "campaign"
    provisioner.register_fcm_devices(app, CAMPAIGN, topic, prefix="campaign")
    sandbox.reset()
    latency = sandbox.settings()["latencyMs"]
    sandbox.faults(latencyMs=CAMPAIGN_LATENCY_MS)  # so that the campaign takes a while
    try:
        with Sender(api, app.app, app.api_key, f"gw-{app.app}", interval=0.2) as sender:
            status, answer = http_json("POST", f"{api}/v1/apps/{app.app}/messages",
                                       {"to": {"topic": topic}, "title": "campaign", "body": "to everyone"},
                                       {"Authorization": f"Bearer {app.api_key}"}, timeout=30)
            assert status == 202, answer
            campaign = answer["id"]

            def progress() -> int:
                return message_states(api, app.app, app.api_key, [campaign])[campaign]["targets"]["sent"]

            wait_for("the campaign under way", lambda: progress() >= CAMPAIGN // 10, 180, 0.2)
            victim = delete_pod(platform, "herald-gateway")
            sent_at_delete = progress()
            assert sent_at_delete < CAMPAIGN, "the campaign was over before the gateway pod was deleted"
            wait_until_replaced(platform, "herald-gateway", {victim})
            state = wait_for_final_states(api, app.app, app.api_key, [campaign], timeout=600)[campaign]
    finally:
        sandbox.faults(latencyMs=latency)
    print(f"\ncampaign of {CAMPAIGN}: {sent_at_delete} sent when gateway pod {victim} was deleted; "
          f"{len(sender.sends)} single sends meanwhile")
    assert (state["state"], state["targets"]["sent"], state["targets"]["pending"]) == ("sent", CAMPAIGN, 0), state
    assert not trouble(sender.sends), trouble(sender.sends)[:20]
    assert_sent_once(api, app, sandbox, sender.sends, other_tokens=app.fcm_tokens)


def test_rolling_upgrade_while_sending(platform, api, app, sandbox):
    """Each release upgraded with a new pod annotation, which rolls its pods one by one (maxSurge 1,
    maxUnavailable 0), while the sender keeps going; then a few more sends on the new pods."""
    sandbox.reset()
    rolled = {"herald-dispatcher": "dispatcher", "herald-gateway": "gateway"}
    before = {release: {p["metadata"]["name"] for p in pods_of(platform, release)} for release in rolled}
    stamp = f"roll-{int(time.time())}"
    with Sender(api, app.app, app.api_key, f"roll-{app.app}", interval=0.1) as sender:
        wait_for("sends before the upgrade", lambda: len(sender.sends) >= 20, 60)
        for release, chart in rolled.items():
            platform.helm_install(release, chart, "--set-string", f"podAnnotations.herald-fault-test={stamp}")
            wait_until_replaced(platform, release, before[release])
        after_roll = len(sender.sends)
        wait_for("sends after the upgrade", lambda: len(sender.sends) >= after_roll + 20, 60)
    sends = sender.sends
    print(f"\n{len(sends)} sends during the rolling upgrade, {sum(len(s.attempts) for s in sends)} requests")
    for release in rolled:
        assert not before[release] & {p["metadata"]["name"] for p in pods_of(platform, release)}, f"{release} not rolled"
    assert not trouble(sends), f"{len(trouble(sends))} attempts were not clean: {trouble(sends)[:20]}"
    assert_sent_once(api, app, sandbox, sends)


def test_connection_manager_pod_deleted(platform, services, api, app, provisioner):
    """The devices on a deleted connection-manager pod stay away (as if out of coverage) while each
    is sent a push; then they reconnect through the MQTT Service, to the pod that replaced it, and
    each receives its pending push and nothing twice."""
    names = [f"cm-fault-{i}" for i in range(DEVICES)]
    devices = [provisioner.register_mqtt_device(app, name, ["cm-fault"]) for name in names]
    key = {"Authorization": f"Bearer {app.api_key}"}

    def push(device: str, label: str) -> str:
        status, answer = http_json("POST", f"{api}/v1/apps/{app.app}/messages",
                                   {"to": {"devices": [device]}, "title": label, "body": device}, key, timeout=30)
        assert status == 202, answer
        return answer["id"]

    with MqttDevices(services.mqtt_host, services.mqtt_port, app.app, devices) as fleet:
        wait_for("every device connected", lambda: len(fleet.snapshot()[0]) == DEVICES, 120)
        first = {name: push(name, "before") for name in names}
        wait_for("the first pushes received",
                 lambda: all(first[n] in ids for n, ids in fleet.snapshot()[1].items()), 120)

        victim = cm_pod_with_devices(platform)
        fleet.away()
        platform.kube.kubectl("delete", "pod", victim, "-n", platform.namespace, "--wait=false")
        wait_for(f"pod {victim} gone", lambda: victim not in {p["metadata"]["name"] for p in platform.pods()}, 120, 1)
        online, _ = fleet.snapshot()
        away = sorted(set(names) - online)
        assert away, f"no device was connected to {victim}"
        pending = {name: push(name, "while away") for name in names}
        states = message_states(api, app.app, app.api_key, [pending[n] for n in away])
        assert all(s["state"] != "delivered" for s in states.values()), states

        fleet.back()
        wait_until_replaced(platform, "herald-connection-manager", {victim})
        wait_for("the pending pushes received",
                 lambda: all(pending[n] in ids for n, ids in fleet.snapshot()[1].items()), 300)
        final = wait_for_final_states(api, app.app, app.api_key, list(first.values()) + list(pending.values()))
        _, received = fleet.snapshot()
        reconnections = {n: fleet.connections[n] for n in away}
    print(f"\n{len(away)} of {DEVICES} devices were on {victim}; connections made: {reconnections}")
    assert all(s["state"] == "delivered" for s in final.values()), final
    assert all(n >= 2 for n in reconnections.values()), reconnections
    for name in names:
        assert Counter(received[name]) == Counter([first[name], pending[name]]), (name, received[name])


def cm_pod_with_devices(platform: Herald) -> str:
    """The connection-manager pod holding the most device connections (its herald_cm_connections);
    the only one when there is one."""
    pods = [p for p in pods_of(platform, "herald-connection-manager") if ready(p)]
    if len(pods) == 1:
        return pods[0]["metadata"]["name"]
    port = next(c["containerPort"] for p in pods[:1] for c in p["spec"]["containers"][0]["ports"] if c["name"] == "http")
    return max(pods, key=lambda p: metric(f"http://{p['status']['podIP']}:{port}/actuator/prometheus",
                                          "herald_cm_connections"))["metadata"]["name"]
