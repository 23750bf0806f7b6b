#!/usr/bin/env python3
"""Compares the RabbitMQ topology stored in the cluster (Queue, Exchange, Binding resources of
charts/push-platform, as `kubectl get -o json`) with what the services declare (libs/contract,
printed by QueueTopologyJson.java). RabbitMQ refuses a redeclaration whose arguments differ, so
they must be equal: same queues, quorum, same arguments, same exchanges and bindings.

Usage: queue_topology.py CONTRACT.json CLUSTER.json
"""
import json
import sys


def main():
    contract = json.load(open(sys.argv[1]))
    items = json.load(open(sys.argv[2]))["items"]
    queues = {i["spec"]["name"]: i["spec"] for i in items if i["kind"] == "Queue"}
    exchanges = {i["spec"]["name"]: i["spec"] for i in items if i["kind"] == "Exchange"}
    bindings = {(i["spec"]["source"], i["spec"]["destination"], i["spec"].get("routingKey", "")) for i in items if i["kind"] == "Binding"}
    errors = []

    def expect(what, got, want):
        if got != want:
            errors.append(f"{what}: chart has {got!r}, contract declares {want!r}")

    want_queues = contract["workQueues"] + [contract["deadLetterQueue"]]
    expect("queues", sorted(queues), sorted(want_queues))
    for name in want_queues:
        q = queues.get(name)
        if not q:
            continue
        want_args = contract["workQueueArguments"] if name in contract["workQueues"] else contract["deadQueueArguments"]
        args = dict(q.get("arguments") or {})
        args["x-queue-type"] = q.get("type")  # the operator sends type as x-queue-type
        args.pop("x-quorum-initial-group-size", None)  # placement only, not compared by RabbitMQ
        expect(f"queue {name} arguments", dict(sorted(args.items())), dict(sorted(want_args.items())))
        expect(f"queue {name} durable", q.get("durable"), True)
        expect(f"queue {name} autoDelete", q.get("autoDelete", False), False)
    expect("exchanges", {n: e.get("type") for n, e in exchanges.items()},
           {contract["exchange"]: "direct", contract["deadLetterExchange"]: "fanout"})
    want_bindings = {(contract["exchange"], q, q) for q in contract["workQueues"]}
    want_bindings.add((contract["deadLetterExchange"], contract["deadLetterQueue"], ""))
    expect("bindings", sorted(bindings), sorted(want_bindings))
    for e in errors:
        print(f"MISMATCH: {e}", file=sys.stderr)
    print(f"topology: {len(queues)} queues, {len(exchanges)} exchanges, {len(bindings)} bindings compared, {len(errors)} mismatches")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
