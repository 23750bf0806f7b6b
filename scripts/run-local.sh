#!/usr/bin/env bash
# Runs the whole Herald platform locally and shows it working:
#
#   scripts/run-local.sh [start]   install deps, start RabbitMQ + Redis, build, start
#                                  provider-sandbox, gateway, connection-manager,
#                                  dispatcher, run the demo;
#                                  leaves everything running
#   scripts/run-local.sh stop      stop the services and RabbitMQ + Redis
#   scripts/run-local.sh status    show what runs
#
# Everything lives in .run/: logs (<service>.log), pid files, the generated admin
# token (.run/admin-token) and credential encryption key (.run/crypto-key).
# Ports: dispatcher 8080 (API), gateway 8081 (actuator), connection manager 1883 (MQTT)
# and 8082 (actuator), provider sandbox 9090/9443.
# Any other setting can be given by environment, Spring style, e.g.
#   HERALD_GATEWAY_MAX_IN_FLIGHT=64 scripts/run-local.sh
# HERALD_JAVA_OPTS adds JVM options; HERALD_DEMO=0 skips the demo.
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

# Start order matters: the gateway trusts the certificate the sandbox writes on
# start-up, and the dispatcher is the last piece the demo needs.
SERVICES=(provider-sandbox gateway connection-manager dispatcher)

service_port() {
  case "$1" in
    provider-sandbox) echo 9090 ;;
    gateway) echo 8081 ;;
    connection-manager) echo 8082 ;;
    dispatcher) echo 8080 ;;
  esac
}

pid_file() { echo "${HERALD_RUN_DIR}/$1.pid"; }
# Pattern that identifies our java process of a service in its command line.
jar_pattern() { echo "$(module_dir "$1")/target/"; }
running() { pid_file_alive "$(pid_file "$1")" "$(jar_pattern "$1")"; }

# The executable jar that `mvn package` builds (Spring Boot repackage, classifier exec).
service_jar() {
  local jars=("$(module_dir "$1")/target/$1-"*-exec.jar)
  [[ -f "${jars[0]}" ]] || die "no executable jar for $1 in $(module_dir "$1")/target (did the build run?)"
  echo "${jars[0]}"
}

# Creates <file> with the output of <command...> unless it exists (kept across runs,
# so credentials stored in Redis stay decryptable while Redis runs).
ensure_secret() {
  local file="$1"
  shift
  if [[ ! -s "$file" ]]; then
    (
      umask 077
      "$@" >"$file"
    )
  fi
}

crypto_key() { head -c 32 /dev/urandom | base64 -w0; }

start_service() {
  local name="$1" java="$2"
  shift 2
  local jar log="${HERALD_RUN_DIR}/${name}.log" java_opts=()
  jar="$(service_jar "$name")"
  read -r -a java_opts <<<"${HERALD_JAVA_OPTS:-}"
  log "starting ${name} (log .run/${name}.log)"
  # Keep the previous run's log next to the new one.
  if [[ -f "$log" ]]; then mv -f "$log" "${log}.1"; fi
  # setsid: its own session, so it keeps running after this script and a Ctrl-C.
  # A plain background command, so $! is the java process itself.
  setsid "$java" "${java_opts[@]}" -jar "$jar" "$@" >>"$log" 2>&1 </dev/null &
  echo $! >"$(pid_file "$name")"
}

# The end of a service's log without stack frames (and repeats), for error messages.
log_excerpt() {
  local log="${HERALD_RUN_DIR}/$1.log"
  echo "--- end of .run/$1.log (stack frames left out):" >&2
  grep -v -E '^[[:space:]]+(at |\.\.\. [0-9]+ more)' "$log" | uniq | tail -n 30 >&2 || true
}

# Waits for the service's readiness probe (the sandbox may only have /actuator/health).
await_ready() {
  local name="$1" port deadline=$((SECONDS + 180))
  port="$(service_port "$name")"
  until curl -fs -o /dev/null --max-time 2 "http://127.0.0.1:${port}/actuator/health/readiness" ||
    { [[ "$name" == provider-sandbox ]] &&
      curl -fs -o /dev/null --max-time 2 "http://127.0.0.1:${port}/actuator/health"; }; do
    if ! running "$name"; then
      log_excerpt "$name"
      die "${name} exited during start-up; see .run/${name}.log"
    fi
    if ((SECONDS >= deadline)); then
      log_excerpt "$name"
      die "${name} not ready on port ${port} after 180 s; see .run/${name}.log"
    fi
    sleep 1
  done
  log "${name} ready on http://127.0.0.1:${port}"
}

stop_services() {
  local i name
  for ((i = ${#SERVICES[@]} - 1; i >= 0; i--)); do
    name="${SERVICES[i]}"
    # Spring Boot shuts down gracefully on SIGTERM (in-flight work finishes, up to 30 s).
    stop_pid_file "$(pid_file "$name")" "$(jar_pattern "$name")" "$name" 45
  done
}

cmd_start() {
  bash "${HERALD_ROOT}/scripts/install-deps.sh"
  bash "${HERALD_ROOT}/scripts/local-infra.sh" start

  log "building the services (mvn -B -q package -DskipTests)"
  (cd "${HERALD_ROOT}" && mvn -B -q package -DskipTests) ||
    die "build failed (RabbitMQ and Redis keep running; scripts/run-local.sh stop stops them)"

  local java
  java="$(find_java25)" || die "no JDK 25 or newer under /usr/lib/jvm"

  # A rerun restarts the services on the fresh build.
  stop_services
  local name port busy=0
  for name in "${SERVICES[@]}"; do
    port="$(service_port "$name")"
    if port_in_use "$port"; then
      printf 'ERROR: port %s (for %s) is already in use by a process this script did not start:\n' "$port" "$name" >&2
      port_owner "$port" >&2
      busy=1
    fi
  done
  if port_in_use 1883; then
    printf 'ERROR: port 1883 (connection manager MQTT) is already in use:\n' >&2
    port_owner 1883 >&2
    busy=1
  fi
  if port_in_use 9443; then
    printf 'ERROR: port 9443 (provider sandbox APNs) is already in use:\n' >&2
    port_owner 9443 >&2
    busy=1
  fi
  ((busy == 0)) || die "free the ports above and retry"

  ensure_secret "${HERALD_RUN_DIR}/admin-token" random_hex 24
  ensure_secret "${HERALD_RUN_DIR}/crypto-key" crypto_key
  local admin_token crypto apns_cert="${HERALD_RUN_DIR}/sandbox-apns.pem"
  admin_token="$(<"${HERALD_RUN_DIR}/admin-token")"
  crypto="$(<"${HERALD_RUN_DIR}/crypto-key")"
  start_service provider-sandbox "$java" "--herald.sandbox.apns-certificate-path=${apns_cert}"
  await_ready provider-sandbox
  # Secrets go through the environment (Spring's relaxed binding), not the command line,
  # where any local user could read them with ps.
  HERALD_DISPATCHER_ADMIN_TOKEN="$admin_token" HERALD_CRYPTO_KEY="$crypto" \
    start_service gateway "$java" --spring.profiles.active=sandbox "--herald.gateway.apns.trusted-certificate=${apns_cert}"
  await_ready gateway
  HERALD_CRYPTO_KEY="$crypto" start_service connection-manager "$java"
  await_ready connection-manager
  HERALD_DISPATCHER_ADMIN_TOKEN="$admin_token" HERALD_CRYPTO_KEY="$crypto" \
    start_service dispatcher "$java"
  await_ready dispatcher

  if [[ "${HERALD_DEMO:-1}" != 0 ]]; then
    ADMIN_TOKEN="$admin_token" bash "${HERALD_ROOT}/scripts/demo.sh"
  fi

  cat <<EOF

Herald is running:
  dispatcher API    http://127.0.0.1:8080/v1   (admin token: .run/admin-token)
  gateway actuator  http://127.0.0.1:8081/actuator
  connection mgr    mqtt://127.0.0.1:1883, actuator http://127.0.0.1:8082/actuator
  provider sandbox  http://127.0.0.1:9090/sandbox (APNs on 9443)
  RabbitMQ UI       http://127.0.0.1:15672 (guest/guest), Redis 127.0.0.1:6379
  logs              .run/*.log
Stop it with: scripts/run-local.sh stop
EOF
}

cmd_status() {
  local name
  for name in "${SERVICES[@]}"; do
    if running "$name"; then
      printf '%-17s running (pid %s, port %s)\n' "${name}:" "$(<"$(pid_file "$name")")" "$(service_port "$name")"
    else
      printf '%-17s stopped\n' "${name}:"
    fi
  done
  bash "${HERALD_ROOT}/scripts/local-infra.sh" status
}

case "${1:-start}" in
  start)
    mkdir -p "$HERALD_RUN_DIR"
    cmd_start
    ;;
  stop)
    stop_services
    bash "${HERALD_ROOT}/scripts/local-infra.sh" stop
    ;;
  status) cmd_status ;;
  *)
    echo "usage: $0 [start|stop|status]" >&2
    exit 2
    ;;
esac
