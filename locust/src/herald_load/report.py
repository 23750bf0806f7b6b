"""Markdown pieces of the scale-out notebook: a planner's wording of what
:mod:`herald_capacity` computed (no fitting here), plus what the run's meta.json recorded about
the machine (load average, CPU per process) so the reader can judge the measurement.
"""

from __future__ import annotations

import math
from typing import Sequence

from herald_capacity import Analysis, Point, Run
from herald_capacity.models import CeilingKind, Model

__all__ = ["counted_run", "describe_run", "fit_table", "held_out_table", "measured_table", "planning_answer",
           "replicas_table", "resources_table", "saturation_finding", "latency_table"]


def _x(value: float | None) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:,.0f}"


def _interval(iv, fmt=_x) -> str:
    if iv is None or not iv.has_error_bar:
        return f"{fmt(iv.value)} (no error bar)" if iv is not None else "–"
    return f"{fmt(iv.value)} [{fmt(iv.low)} – {fmt(iv.high)}]"


def counted_run(run: Run) -> Run:
    """A Kubernetes-mode run with each N's throughput from the service's own counter, as
    ``python -m herald_load counted`` reads it (the sandbox's accepted count, the dispatchers' accepts,
    the managers' deliveries, sampled by the runner), in place of Locust's entry. Locust's entry for
    the gateway is the rate its poller saw, in bursts: at N = 6 of run gateway-k8s-20261128c it gave a
    median of 1,121/s where the sandbox counted 3,264/s. Local-mode runs are returned as they are."""
    from dataclasses import replace
    from .counted import counted_point
    if not run.measurements or run.measurements[0].meta.get("machine", {}).get("mode") != "kubernetes":
        return run
    measurements = []
    for m in run.measurements:
        c = counted_point(m.path)
        drift = (c["drift_pct"] or 0.0) / 100
        plateau = replace(m.plateau, median=c["throughput"], q1=c["throughput"] - c["spread"] / 2,
                          q3=c["throughput"] + c["spread"] / 2, samples=c["samples"], drift=drift,
                          stable=abs(drift) <= run.settings.max_drift)
        measurements.append(replace(m, plateau=plateau))
    return replace(run, measurements=tuple(measurements))


def describe_run(run: Run, fit_max_n: int | None = None) -> str:
    first = run.measurements[0].meta
    ns = ", ".join(str(m.n) for m in run.measurements)
    settings = first.get("settings", {})
    machine = first.get("machine", {})
    lines = [
        f"**Run** `{run.run_id}`: service **{first.get('service', '?')}** at N = {ns} "
        f"replicas ({machine.get('mode', 'mode not recorded')}).",
        f"**Measured**: {first.get('measured', 'Locust Requests/s')} " + (
            "(the service's own counter over each plateau, sampled by the runner: "
            "`python -m herald_load counted`)." if machine.get("mode") == "kubernetes"
            else f"(Locust entry `{first.get('throughput_row', 'Aggregated')}`)."),
        "**Settings** (the same at every N): " +
        ", ".join(f"{k} = {v}" for k, v in settings.items() if k != "jvm_options") + ".",
        _machine_line(first),
    ]
    deployment = first.get("deployment")
    if deployment:
        for c in deployment.get("containers", []):
            lines.append(f"**Pods measured**: Deployment `{deployment['name']}`, container "
                         f"`{c['name']}` ({c['image']}), resources {c.get('resources') or 'none'}; "
                         f"configuration: " + (", ".join(
                             f"{k} = {v}" for cm in deployment.get("configmaps", {}).values()
                             for k, v in sorted(cm.items()) if k.startswith("HERALD_"))
                             or "the chart's defaults") + ".")
    if fit_max_n is not None:
        lines.append(f"**Fit** uses N ≤ {fit_max_n} only; larger N are held out to check the "
                     f"prediction against a measurement.")
    return "\n\n".join(lines)


def _machine_line(meta: dict) -> str:
    machine = meta.get("machine", {})
    if machine.get("mode") == "kubernetes":
        return (f"**Cluster**: context `{machine.get('context', '?')}`, namespace "
                f"`{machine.get('namespace', '?')}`, node(s) {machine.get('node_cpu_capacity', '?')} "
                f"(CPU capacity); the runner's machine has {machine.get('cpus', '?')} CPUs; Locust "
                f"image {meta.get('locust_image', '?')}; git revision {meta.get('git_revision', '?')}.")
    return (f"**Machine**: {machine.get('cpus', '?')} CPUs ({machine.get('cpu_model', '?')}), "
            f"{machine.get('memory_gib', '?')} GiB, host {machine.get('host', '?')}; "
            f"git revision {meta.get('git_revision', '?')}.")


def planning_answer(analysis: Analysis) -> str:
    out = []
    for r in (analysis.amdahl, analysis.usl):
        if r.fit is None:
            out.append(f"- **{r.model.title}**: not fitted. {r.refusal}")
            continue
        f = r.fit
        sigma = f.interval("sigma")
        if sigma.has_error_bar:
            p = (f"P = 1 − σ = {1 - sigma.value:.4f} "
                 f"[{1 - sigma.high:.4f} – {1 - sigma.low:.4f}] ({analysis.confidence:.0%})")
        else:
            p = f"P = {1 - sigma.value:.4f} (exact through two points: no error bar)"
        c = f.ceiling()
        kind = {CeilingKind.ASYMPTOTE: "the asymptote λ/σ, never reached",
                CeilingKind.PEAK: f"the peak, X at N = {c.at_n}",
                CeilingKind.NONE: "none"}[c.kind]
        text = (f"- **{r.model.title}**: λ (one replica) = {_interval(f.interval('lambda'))}/s, "
                f"{p}. Ceiling quoted: {kind}: {c.describe()}.")
        if r.model is Model.USL:
            text += f" κ = {_interval(f.interval('kappa'), lambda v: f'{v:.3g}')}."
        if r.bootstrap is not None and c.kind is not CeilingKind.NONE:
            b = r.bootstrap.ceiling()
            high = "unbounded (some refits had no ceiling)" if b.high is None or \
                not math.isfinite(b.high) else f"{_x(b.high)}/s"
            text += f" Bootstrap range of the ceiling: {_x(b.low)}/s – {high}."
        for est in r.replicas:
            text += f" {est.message}"
        out.append(text)
    return "\n".join(out)


def measured_table(run: Run) -> str:
    rows = ["| N | throughput/s (median) | IQR | samples | stable | load avg (1 min) during run "
            "| machine CPU % | CPU cores of the measured replicas | started (UTC) |",
            "|---:|---:|---:|---:|:---:|---:|---:|---:|---|"]
    if any("resources" in m.meta for m in run.measurements):
        return _measured_table_kubernetes(run)
    for m in run.measurements:
        load = m.meta.get("load_during_run", {})
        l1 = load.get("load1", {})
        cpu = load.get("machine_cpu_pct", {})
        by_process = load.get("cpu_cores_by_process", {}) or {}
        service = m.meta.get("service", "")
        replicas = sum(v for k, v in by_process.items() if k.startswith(service) and v)
        rows.append(
            f"| {m.n} | {_x(m.plateau.median)} | {_x(m.plateau.iqr)} | {m.plateau.samples} | "
            f"{'yes' if m.plateau.stable else 'NO'} | "
            f"{l1.get('mean', '–')} (max {l1.get('max', '–')}) | {cpu.get('mean', '–')} | "
            f"{replicas:.2f} | {m.meta.get('started_at', '–')} |")
    return "\n".join(rows)


def fit_table(analysis: Analysis) -> str:
    rows = ["| model | status | λ | σ | κ | P = 1 − σ | residual std. error |",
            "|---|---|---:|---:|---:|---:|---:|"]
    for r in (analysis.amdahl, analysis.usl):
        if r.fit is None:
            rows.append(f"| {r.model.title} | refused: {r.refusal} | | | | | |")
            continue
        f = r.fit
        sigma = f.interval("sigma")
        kappa = _interval(f.interval("kappa"), lambda v: f"{v:.3g}") \
            if r.model is Model.USL else "–"
        rse = f.residual_standard_error
        rows.append(
            f"| {r.model.title} | {r.status} | {_interval(f.interval('lambda'))} | "
            f"{_interval(sigma, lambda v: f'{v:.4f}')} | {kappa} | {1 - sigma.value:.4f} | "
            f"{_x(rse) if rse is not None else '–'} |")
    rows.append("")
    rows.append(f"Intervals: {analysis.confidence:.0%}, from the fit's covariance "
                f"(t-distribution). No R²: it is not valid for nonlinear regression.")
    return "\n".join(rows)


def replicas_table(analysis: Analysis) -> str:
    if not analysis.targets:
        return "No target given (`--target`)."
    rows = ["| target/s | model | replicas | predicted X at those replicas | bootstrap range "
            "| note |", "|---:|---|---:|---:|---|---|"]
    for i, target in enumerate(analysis.targets):
        for r in (analysis.amdahl, analysis.usl):
            if r.fit is None:
                rows.append(f"| {_x(target)} | {r.model.title} | – | – | – | model refused |")
                continue
            est = r.replicas[i]
            boot = r.replica_intervals[i]
            boot_text = "–" if boot is None else (
                f"{boot.low:g} – {'out of reach' if math.isinf(boot.high) else f'{boot.high:g}'}"
                f" ({boot.unreachable_fraction:.0%} of refits: out of reach)")
            if not est.reachable:
                rows.append(f"| {_x(target)} | {r.model.title} | **out of reach** | – | "
                            f"{boot_text} | {est.message} |")
                continue
            predicted = r.fit.predict(est.replicas).throughput
            rows.append(f"| {_x(target)} | {r.model.title} | {est.replicas} | "
                        f"{_interval(predicted)} | {boot_text} | "
                        f"{est.replicas / analysis.max_measured_n:.2g}× the largest measured N |")
    return "\n".join(rows)


def held_out_table(analysis: Analysis, held_out: Sequence[Point]) -> str:
    if not held_out and not any(r.predictions for r in analysis.results):
        return "No N held out and no prediction asked for."
    measured = {p.n: p.throughput for p in held_out}
    rows = ["| N | model | predicted X (CI of the fitted curve) | measured | measured vs "
            "predicted |", "|---:|---|---:|---:|---:|"]
    for r in (analysis.amdahl, analysis.usl):
        for pred in r.predictions:
            got = measured.get(pred.n)
            diff = f"{(got - pred.throughput.value) / pred.throughput.value:+.1%}" \
                if got is not None else "–"
            inside = ""
            if got is not None and pred.throughput.has_error_bar:
                inside = " (inside the band)" if pred.throughput.low <= got <= pred.throughput.high \
                    else " (outside the band)"
            rows.append(f"| {pred.n:g} | {r.model.title} | {_interval(pred.throughput)} | "
                        f"{_x(got)} | {diff}{inside} |")
    return "\n".join(rows)


# ---------------------------------------------------------------- Kubernetes runs: where the CPU goes

def _limit_cores(meta: dict) -> float | None:
    """The measured pods' CPU limit in cores: the one they were resized to in place when the run
    warmed them at a larger one (meta's cpu_limit_in_place), else the Deployment's (first container)."""
    from .kube import millicores
    containers = meta.get("deployment", {}).get("containers", [])
    limit = (meta.get("cpu_limit_in_place") or {}).get("measured") or \
        (str(containers[0].get("resources", {}).get("limits", {}).get("cpu", "")) if containers else "")
    return millicores(limit) / 1000 if limit else None


def _node_capacity(meta: dict) -> float | None:
    capacities = meta.get("machine", {}).get("node_cpu_capacity", {}) or {}
    try:
        return sum(float(v) for v in capacities.values()) or None
    except ValueError:
        return None


def _component(resources: dict, word: str) -> float | None:
    """Cores of the pods whose name holds `word` (pod names, not labels: the charts' Redis pod is
    labelled push-platform, and the Job's pod is listed before its labels are known)."""
    values = [v for k, v in resources.get("pods_cores", {}).items() if word in k]
    return sum(values) if values else None


def _per_n(run: Run) -> list[dict]:
    """Per N: throughput and what the sampler saw over the plateau (meta.json's resources)."""
    rows = []
    for m in run.measurements:
        r = m.meta.get("resources") or {}
        pods = [v for k, v in r.get("pods_cores", {}).items() if k in set(m.meta.get("pods", []))]
        rows.append({
            "n": m.n, "x": m.plateau.median, "pods": pods,
            "pod_mean": sum(pods) / len(pods) if pods else None,
            "limit": _limit_cores(m.meta),
            "node": sum(r.get("nodes_cores", {}).values()) if r.get("nodes_cores") else None,
            "capacity": _node_capacity(m.meta),
            "rabbitmq": _component(r, "rabbitmq"), "redis": _component(r, "redis"),
            "dispatcher": _component(r, "dispatcher"), "locust": _component(r, "herald-load"),
            "all_pods": sum(r.get("pods_cores", {}).values()) if r.get("pods_cores") else None,
            "queue": r.get("queue_total_mean"), "load": r.get("runner_loadavg_mean")})
    return rows


def _c(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _measured_table_kubernetes(run: Run) -> str:
    rows = ["| N | throughput/s (median) | IQR | samples | stable | node CPU (cores, of capacity) "
            "| load avg (1 min, runner's machine) | started (UTC) |",
            "|---:|---:|---:|---:|:---:|---:|---:|---|"]
    for m, r in zip(run.measurements, _per_n(run)):
        rows.append(
            f"| {m.n} | {_x(m.plateau.median)} | {_x(m.plateau.iqr)} | {m.plateau.samples} | "
            f"{'yes' if m.plateau.stable else 'NO'} | {_c(r['node'])} of {_c(r['capacity'], 0)} | "
            f"{_c(r['load'])} | {m.meta.get('started_at', '–')} |")
    return "\n".join(rows)


def resources_table(run: Run) -> str:
    """CPU (cores, cgroup usage from the kubelet) of the measured pods and the parts they share,
    the node's, and RabbitMQ's queue depth, per N over the plateau."""
    per_n = _per_n(run)
    if not any(r["node"] is not None or r["pods"] for r in per_n):
        return "No resource samples in this run (local mode: see the load columns above)."
    rows = ["| N | throughput/s | measured pods: cores each (mean; of limit) | throughput per "
            "measured-pod core | RabbitMQ | Redis | dispatcher | Locust | node (of capacity) "
            "| of which outside the namespace's pods | queued messages (mean) |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in per_n:
        limit = f"; {r['pod_mean'] / r['limit']:.0%} of {r['limit']:g}" \
            if r["pod_mean"] is not None and r["limit"] else ""
        per_core = _x(r["x"] / sum(r["pods"])) if r["pods"] and sum(r["pods"]) > 0 else "–"
        outside = _c(r["node"] - r["all_pods"]) \
            if r["node"] is not None and r["all_pods"] is not None else "–"
        rows.append(f"| {r['n']} | {_x(r['x'])} | {_c(r['pod_mean'])}{limit} | {per_core} | "
                    f"{_c(r['rabbitmq'])} | "
                    f"{_c(r['redis'])} | {_c(r['dispatcher'])} | {_c(r['locust'])} | "
                    f"{_c(r['node'])} of {_c(r['capacity'], 0)} | {outside} | {_x(r['queue'])} |")
    restarted = [f"N = {m.n}: {m.meta['restarts_during_run']}" for m in run.measurements
                 if m.meta.get("restarts_during_run")]
    if restarted:
        rows.append("")
        rows.append("**Containers restarted during these runs** (their N measured a platform "
                    "short of a replica for a while): " + "; ".join(restarted) + ".")
    rows.append("")
    rows.append("The node's figure is its root cgroup: every process on the machine, the pods and "
                "whatever else runs there (on a shared test machine, other work); the column after "
                "it is that figure less the namespace's pods.")
    return "\n".join(rows)


def saturation_finding(run: Run, busy: float = 0.9) -> str:
    """Which component saturates first, by a stated rule over the plateau figures: the measured
    pods at `busy` of their CPU limit; the node at `busy` of its capacity (the host, not Herald);
    a shared part (RabbitMQ, Redis, the dispatcher) whose CPU keeps growing with N while the
    throughput's growth stops (less than half of one replica's gain per added replica)."""
    per_n = _per_n(run)
    if len(per_n) < 2 or not any(r["node"] is not None for r in per_n):
        return "Not enough resource samples to name a saturating component."
    x1 = per_n[0]["x"] / per_n[0]["n"]
    stalled = next((b for a, b in zip(per_n, per_n[1:])
                    if (b["x"] - a["x"]) / (b["n"] - a["n"]) < 0.5 * x1), None)
    lines = []
    host = next((r for r in per_n if r["node"] is not None and r["capacity"]
                 and r["node"] >= busy * r["capacity"]), None)
    pods = next((r for r in per_n if r["pod_mean"] is not None and r["limit"]
                 and r["pod_mean"] >= busy * r["limit"]), None)
    if stalled is None:
        lines.append(f"Throughput kept growing up to N = {per_n[-1]['n']} (each added replica "
                     f"added at least half of one replica's {x1:,.0f}/s).")
    else:
        lines.append(f"Throughput stopped growing at N = {stalled['n']}: {_x(stalled['x'])}/s, "
                     f"less than half of one replica's gain over N − 1.")
    if pods:
        lines.append(f"- The measured pods reach their CPU limit first at N = {pods['n']}: "
                     f"{pods['pod_mean']:.2f} cores each of {pods['limit']:g} "
                     f"({pods['pod_mean'] / pods['limit']:.0%}).")
    if host:
        lines.append(f"- **The node (the host) is out of cores at N = {host['n']}**: "
                     f"{host['node']:.2f} of {host['capacity']:.0f} cores busy. Beyond it the curve "
                     f"measures the host, not Herald.")
    if stalled is not None:
        before = per_n[per_n.index(stalled) - 1]
        for name in ("rabbitmq", "redis", "dispatcher"):
            a, b = before[name], stalled[name]
            if a is not None and b is not None and b > a * 1.1:
                lines.append(f"- {name}'s CPU still grew where throughput stopped: {a:.2f} → "
                             f"{b:.2f} cores from N = {before['n']} to {stalled['n']}.")
    first = min((r["n"], what) for r, what in ((pods, "the measured pods' CPU limit"),
                                                (host, "the node's CPU (the host)"))
                if r is not None) if (pods or host) else None
    if first:
        lines.insert(1, f"**First to saturate: {first[1]}, at N = {first[0]}** (rule: "
                        f"{busy:.0%} of a limit or of the node's capacity, CPU from the kubelet's "
                        f"cgroup counters over the plateau).")
    else:
        lines.insert(1, f"**No component reached {busy:.0%} of its CPU limit or of the node's "
                        f"capacity.** The limit is elsewhere (I/O, locks, the load generator); see "
                        f"the table above.")
    return "\n".join(lines)


def latency_table(run: Run) -> str:
    """Latency percentiles (ms) of each Locust entry over the whole Job (stats.csv)."""
    import csv
    rows = ["| N | entry | requests | p50 | p95 | p99 | max |", "|---:|---|---:|---:|---:|---:|---:|"]
    for m in run.measurements:
        stats = next(m.history.parent.glob("*_stats.csv"), None)
        if stats is None:
            continue
        with stats.open(newline="") as source:
            for row in csv.DictReader(source):
                if row.get("Name") == "Aggregated":
                    continue
                rows.append(f"| {m.n} | {row['Name']} | {row['Request Count']} | {row.get('50%', '–')} "
                            f"| {row.get('95%', '–')} | {row.get('99%', '–')} | "
                            f"{_x(float(row['Max Response Time'] or 'nan'))} |")
    return "\n".join(rows)
