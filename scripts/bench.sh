#!/usr/bin/env bash
# Herald's benchmarks, printing figures (no pass/fail thresholds: targets are in the output).
#   scripts/bench.sh [fanout|accept|cm-connections|cm-delivery|all]   (default all)
# Starts the local platform (scripts/run-local.sh) with benchmark settings, then:
#   fanout: N notifications (default 100,000) to N distinct FCM tokens through the whole pipeline,
#           API accept -> sandbox receipt, sandbox latency 50 ms. Target: <= 10 s.
#   accept: sustained single-token sends to the Dispatcher with wrk on the same machine.
#           Target: >= 5,000 requests/s, p99 <= 25 ms, no errors.
#           Measured twice: right after start (cold JVMs: JIT compilation competes for the 2 cores)
#           and again once warm (a running platform's steady state), on a fresh topic each time.
#   cm-connections: hold CM_CONNECTIONS (50,000) idle MQTT 5 connections on the one local connection
#           manager, from source addresses 127.0.0.2.., and print its heap (after GC) and RSS per
#           connection. Target: <= 20 kB per connection.
#   cm-delivery: CM_DEVICES (1,000) MQTT devices connected; CM_RATE (1,000) messages/s for
#           CM_SECONDS (30) through the Dispatcher API, gateway and CM, one device each; prints
#           p50/p99 from API accept to device receipt. Target: p99 <= 50 ms.
#           CM_TO=tokens sends to the MQTT target directly instead of to the registered device.
#           Both use scripts/bench/mqtt_bench.py (asyncio, stdlib only) as the devices.
# Knobs: FANOUT_COUNT, ACCEPT_SECONDS, ACCEPT_CONNECTIONS, HERALD_GATEWAY_MAX_IN_FLIGHT,
#        ACCEPT_PIPELINE=1 to keep the gateway delivering during the accept run (default: the
#        gateway is stopped so the run measures the Dispatcher, not the 2 cores it shares with
#        gateway and sandbox; the backlog is purged afterwards and the gateway restarted).
set -euo pipefail
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

what="${1:-all}"
FANOUT_COUNT="${FANOUT_COUNT:-100000}"
ACCEPT_SECONDS="${ACCEPT_SECONDS:-30}"
ACCEPT_CONNECTIONS="${ACCEPT_CONNECTIONS:-32}"
# 50 ms per request at the sandbox: 10,000/s needs at least 500 requests in flight; leave headroom.
export HERALD_GATEWAY_MAX_IN_FLIGHT="${HERALD_GATEWAY_MAX_IN_FLIGHT:-2000}"
export HERALD_GATEWAY_FCM_CONNECTIONS="${HERALD_GATEWAY_FCM_CONNECTIONS:-4}"
export HERALD_GATEWAY_CONSUMERS_NORMAL="${HERALD_GATEWAY_CONSUMERS_NORMAL:-4}"
if [[ "$what" == cm-delivery ]]; then
  # One message per device send: each is its own small audience job and batch, so the gateway needs
  # more of them in hand than for fan-out (where one job becomes thousands of targets).
  export HERALD_GATEWAY_PREFETCH="${HERALD_GATEWAY_PREFETCH:-16}"
  export HERALD_GATEWAY_CONSUMERS_AUDIENCE="${HERALD_GATEWAY_CONSUMERS_AUDIENCE:-4}"
fi
export HERALD_GATEWAY_PREFETCH="${HERALD_GATEWAY_PREFETCH:-2}"
export HERALD_DEMO=0

# 50,000 MQTT connections need as many descriptors in the connection manager (inherited from here)
# and in the bench client.
ulimit -n 1048576 2>/dev/null || ulimit -n 200000 2>/dev/null || true

HERALD_DEMO=0 bash "${HERALD_ROOT}/scripts/run-local.sh" start
admin="$(<"${HERALD_RUN_DIR}/admin-token")"
api=http://127.0.0.1:8080

# A fresh app per run, with the sandbox's FCM credentials.
app="bench-$(date +%s)"
key="$(curl -fsS -X POST "$api/v1/apps" -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' \
  -d "{\"id\":\"$app\",\"name\":\"Benchmark\"}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["apiKey"]["key"])')"
curl -fsS http://127.0.0.1:9090/sandbox/demo-credentials |
  python3 -c 'import json,sys; print(json.dumps({"serviceAccount": json.load(sys.stdin)["fcm"]["serviceAccount"]}))' |
  curl -fsS -X PUT "$api/v1/apps/$app/credentials/fcm" -H "Authorization: Bearer $admin" \
    -H 'Content-Type: application/json' --data-binary @- >/dev/null

pids="dispatcher=$(<"${HERALD_RUN_DIR}/dispatcher.pid"),gateway=$(<"${HERALD_RUN_DIR}/gateway.pid")"
pids+=",provider-sandbox=$(<"${HERALD_RUN_DIR}/provider-sandbox.pid")"
pids+=",connection-manager=$(<"${HERALD_RUN_DIR}/connection-manager.pid")"
pids+=",rabbitmq=$(pgrep -f "beam.smp.*-home ${HERALD_RUN_DIR}/rabbitmq" | head -n1),redis=$(<"${HERALD_RUN_DIR}/redis/redis.pid")"

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "gateway: max-in-flight ${HERALD_GATEWAY_MAX_IN_FLIGHT}, ${HERALD_GATEWAY_CONSUMERS_NORMAL} normal consumers, prefetch ${HERALD_GATEWAY_PREFETCH}"

rabbitmqctl_local() { HOME="${HERALD_RUN_DIR}/rabbitmq/home" /usr/lib/rabbitmq/bin/rabbitmqctl -n herald@localhost -q "$@"; }
# Start from empty queues: a backlog of an earlier run would share the machine with this one.
for queue in herald.send.high herald.send.normal herald.audience; do rabbitmqctl_local purge_queue "$queue" >/dev/null || true; done

if [[ "$what" == all || "$what" == fanout ]]; then
  log "fan-out benchmark: ${FANOUT_COUNT} notifications"
  echo "--- cold (services just started)"
  python3 "${HERALD_ROOT}/scripts/bench/fanout.py" --app "$app" --key "$key" --count "$FANOUT_COUNT" --pids "$pids" --topic fanout-cold
  echo "--- warm (same processes, second run)"
  python3 "${HERALD_ROOT}/scripts/bench/fanout.py" --app "$app" --key "$key" --count "$FANOUT_COUNT" --pids "$pids" --topic fanout-warm
fi

if [[ "$what" == all || "$what" == cm-connections ]]; then
  count="${CM_CONNECTIONS:-50000}"
  # One descriptor per connection in the CM (and in the client): a hard limit below that cannot be
  # raised without CAP_SYS_RESOURCE, so the run is scaled down to fit, and says so.
  hard="$(ulimit -Hn)"
  if [[ "$hard" != unlimited ]] && ((count > hard - 1000)); then
    warn "open-files hard limit is ${hard} here (raising it needs CAP_SYS_RESOURCE): measuring $((hard - 1000)) connections instead of ${count}"
    count=$((hard - 1000))
  fi
  log "connection-manager connections benchmark: ${count} idle MQTT connections"
  python3 "${HERALD_ROOT}/scripts/bench/mqtt_bench.py" connections --app "$app" \
    --pid "$(<"${HERALD_RUN_DIR}/connection-manager.pid")" --crypto-key "$(<"${HERALD_RUN_DIR}/crypto-key")" \
    --count "$count" --hold "${CM_HOLD_SECONDS:-20}"
  echo "  load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
fi

if [[ "$what" == all || "$what" == cm-delivery ]]; then
  log "connection-manager delivery benchmark: ${CM_RATE:-1000} messages/s for ${CM_SECONDS:-30} s to ${CM_DEVICES:-1000} devices"
  # A warm-up at the same rate first (JIT), then the measured run.
  python3 "${HERALD_ROOT}/scripts/bench/mqtt_bench.py" delivery --app "$app" --key "$key" \
    --devices "${CM_DEVICES:-1000}" --rate "${CM_RATE:-1000}" --seconds 10 --to "${CM_TO:-devices}" >/dev/null
  python3 "${HERALD_ROOT}/scripts/bench/mqtt_bench.py" delivery --app "$app" --key "$key" \
    --devices "${CM_DEVICES:-1000}" --rate "${CM_RATE:-1000}" --seconds "${CM_SECONDS:-30}" --to "${CM_TO:-devices}"
  echo "  load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
fi

if [[ "$what" == all || "$what" == accept ]]; then
  log "accept benchmark: wrk, ${ACCEPT_CONNECTIONS} connections, ${ACCEPT_SECONDS} s (after a 10 s warm-up)"
  command -v wrk >/dev/null || die "wrk not found: run scripts/install-deps.sh"
  echo "generator: $(wrk -v 2>&1 | head -n1 | cut -c1-60), 2 threads, ${ACCEPT_CONNECTIONS} connections, closed loop"
  gateway_pid="$(<"${HERALD_RUN_DIR}/gateway.pid")"
  if [[ "${ACCEPT_PIPELINE:-0}" != 1 ]]; then
    echo "gateway stopped for this run: sends pile up in herald.send.high (purged afterwards)"
    kill "$gateway_pid"
    while kill -0 "$gateway_pid" 2>/dev/null; do sleep 0.2; done
  fi
  HERALD_APP="$app" HERALD_KEY="$key" wrk -t2 -c"$ACCEPT_CONNECTIONS" -d10s -s "${HERALD_ROOT}/scripts/bench/send.lua" "$api" >/dev/null
  HERALD_APP="$app" HERALD_KEY="$key" wrk -t2 -c"$ACCEPT_CONNECTIONS" -d"${ACCEPT_SECONDS}s" \
    -s "${HERALD_ROOT}/scripts/bench/send.lua" "$api" | sed -n '/requests .* in/,$p'
  echo "  load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  if [[ "${ACCEPT_PIPELINE:-0}" != 1 ]]; then
    rabbitmqctl_local purge_queue herald.send.high >/dev/null
    HERALD_DEMO=0 bash "${HERALD_ROOT}/scripts/run-local.sh" start >/dev/null
  fi
fi
