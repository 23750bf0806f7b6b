"""push-platform's RabbitMQ topology, as the API server stored its Queue, Exchange and Binding
resources, equals what the services declare (libs/contract, printed by QueueTopologyJson.java).
RabbitMQ refuses a redeclaration whose arguments differ, so they must be equal: same queues, quorum,
same arguments, same exchanges and bindings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from herald_load.processes import find_java, module_dir
from releases import ROOT
from testbed import run


@pytest.fixture(scope="module")
def contract() -> dict:
    classes = module_dir("contract", ROOT) / "target/classes"
    if not classes.is_dir():
        pytest.fail(f"{classes.relative_to(ROOT)} is missing: run Maven first (scripts/test.sh does)")
    return json.loads(run([find_java(), "-cp", str(classes), str(Path(__file__).with_name("QueueTopologyJson.java"))]))


def mismatches(contract: dict, objects) -> list[str]:
    queues = {i["spec"]["name"]: i["spec"] for i in objects["queues.rabbitmq.com"]}
    exchanges = {i["spec"]["name"]: i["spec"] for i in objects["exchanges.rabbitmq.com"]}
    bindings = {(i["spec"]["source"], i["spec"]["destination"], i["spec"].get("routingKey", ""))
                for i in objects["bindings.rabbitmq.com"]}
    errors = []

    def expect(what, got, want):
        if got != want:
            errors.append(f"{what}: chart has {got!r}, contract declares {want!r}")

    want_queues = contract["workQueues"] + [contract["deadLetterQueue"], contract["parkedQueue"]]
    expect("queues", sorted(queues), sorted(want_queues))
    for name in want_queues:
        q = queues.get(name)
        if not q:
            continue
        want_args = (contract["workQueueArguments"] if name in contract["workQueues"]
                     else contract["parkedQueueArguments"] if name == contract["parkedQueue"]
                     else contract["deadQueueArguments"])
        args = dict(q.get("arguments") or {})
        args["x-queue-type"] = q.get("type")  # the operator sends type as x-queue-type
        args.pop("x-quorum-initial-group-size", None)  # placement only, not compared by RabbitMQ
        expect(f"queue {name} arguments", dict(sorted(args.items())), dict(sorted(want_args.items())))
        expect(f"queue {name} durable", q.get("durable"), True)
        expect(f"queue {name} autoDelete", q.get("autoDelete", False), False)
    expect("exchanges", {n: e.get("type") for n, e in exchanges.items()},
           {contract["exchange"]: "direct", contract["deadLetterExchange"]: "fanout", contract["parkExchange"]: "fanout"})
    want_bindings = {(contract["exchange"], q, q) for q in contract["workQueues"]}
    want_bindings.add((contract["deadLetterExchange"], contract["deadLetterQueue"], ""))
    want_bindings.add((contract["parkExchange"], contract["parkedQueue"], ""))
    expect("bindings", sorted(bindings), sorted(want_bindings))
    return errors


def test_queue_topology_equals_the_contract(contract, installed):
    errors = mismatches(contract, installed.objects)
    assert not errors, "\n".join(errors)
