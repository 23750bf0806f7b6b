#!/usr/bin/env bash
# Herald's benchmarks, printing figures (no pass/fail thresholds: targets are in the output).
#   scripts/bench.sh [fanout|fanout-webpush|scheduled|accept|import|cm-connections|cm-delivery|all|soak] [--profile] [--record]   (default all; soak: 30 min)
#   --profile: JFR + Redis command statistics over the warm fan-out, top-frame tables in docs/perf/
#   --record:  append the run's output (dated, commit, load) to docs/benchmarks.md
#   BENCH_PORTS=free: a platform of its own on free ports, stopped at the end (fan-out only)
# Starts the local platform (as scripts/run-local.sh does, without the demo) with benchmark
# settings and runs them: python3 -m herald_load bench (locust/src/herald_load/bench/run.py says
# what each measures, its target and its knobs: BENCH_FCM_PER_MINUTE, FANOUT_COUNT, FANOUT_WARM_RUNS, FANOUT_WARM_PROVIDER, SEED_COUNT, WEBPUSH_COUNT, SCHEDULED_COUNT, SCHEDULED_ZONES, ACCEPT_SECONDS, ACCEPT_WARMUP_SECONDS, ACCEPT_CONNECTIONS,
# ACCEPT_PIPELINE, IMPORT_COUNT, CM_CONNECTIONS, CM_DEVICES, CM_RATE, CM_SECONDS, CM_WARMUP_SECONDS, CM_TO, HERALD_GATEWAY_*).
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

bash "${HERALD_ROOT}/scripts/install-deps.sh"
# 50,000 MQTT connections need as many descriptors in the connection manager (inherited from here)
# and in the bench client.
ulimit -n 1048576 2>/dev/null || ulimit -n 200000 2>/dev/null || true
PYTHONPATH="${HERALD_ROOT}/locust/src${PYTHONPATH:+:${PYTHONPATH}}" exec python3 -m herald_load bench "$@"
