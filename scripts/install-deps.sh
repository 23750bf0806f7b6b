#!/usr/bin/env bash
# Installs the system packages that Herald's tests and local run need.
#
# Idempotent: packages already installed are left alone, and `apt-get update`
# runs at most once, only when something is missing. Starts nothing: the Java
# integration tests start their own RabbitMQ/Redis on free ports, and
# scripts/run-local.sh (herald_load) starts the ones of a local run.
#
# Usage: scripts/install-deps.sh
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

PACKAGES=(
  rabbitmq-server   # message broker (tests run /usr/lib/rabbitmq/bin/rabbitmq-server)
  redis-server      # registry store (tests run /usr/bin/redis-server)
  mosquitto         # MQTT broker (MQTT channel)
  mosquitto-clients # mosquitto_pub/_sub for manual checks
  openssl           # the connection manager's TLS tests: test certificates, s_client offering TLS 1.0/1.1
  wrk               # HTTP load generator
  etcd-server       # the charts' test control plane (scripts/k8s/testbed.sh)
  python3-venv      # venv for the locust/ Python tests
  curl              # readiness checks (scripts/k8s)
  debootstrap       # the Debian root of the test node's Java base image (scripts/k8s/images.sh)
  runc              # runs the images built here (tests/charts/test_images.py)
  iproute2          # network namespaces of the tests (ip netns)
  prometheus        # promtool: the charts' alert rules checked and unit-tested (tests/charts/test_alert_rules.py);
                    # the server that scrapes the test clusters (tests/prometheus.py)
  # the test cluster's real node (tests/realnode.py)
  containerd containernetworking-plugins iptables conntrack
  busybox-static    # the node tests' one-binary image (scripts/k8s/images.sh busybox)
  chromium          # the console's browser tests (Playwright's playwright-core drives /usr/bin/chromium)
)
# Maven normally comes with the machine; install Debian's only if there is none.
command -v mvn >/dev/null 2>&1 || PACKAGES+=(maven)
# Go builds the charts' test control plane (scripts/k8s/testbed.sh); the machine normally has it.
command -v go >/dev/null 2>&1 || PACKAGES+=(golang-go)

# Runs a command as root (directly, or through sudo when we are not root).
as_root() {
  if ((EUID == 0)); then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    die "need root (or sudo) to run: $*"
  fi
}

is_installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

# PIDs of the Debian system services (they run as their own system users).
# `pgrep -u` fails when the user does not exist yet, which just means "none".
system_rabbit_pids() { pgrep -u rabbitmq beam 2>/dev/null || true; }
system_redis_pids() { pgrep -u redis -x redis-server 2>/dev/null || true; }
system_prometheus_pids() { pgrep -u prometheus -x prometheus 2>/dev/null || true; }

POLICY_RC=/usr/sbin/policy-rc.d
created_policy_rc=false
remove_policy_rc() {
  if [[ "$created_policy_rc" == true ]]; then
    as_root rm -f "$POLICY_RC"
    created_policy_rc=false
  fi
}

# Stops a system service that the package install started although we asked it not to.
stop_autostarted() {
  local service="$1" pids_before="$2" pids_now="$3" pid
  [[ -n "$pids_now" && -z "$pids_before" ]] || return 0
  log "stopping the ${service} system service that the package install started"
  if [[ -x "/etc/init.d/${service}" ]]; then
    as_root "/etc/init.d/${service}" stop || true
  fi
  for pid in $pids_now; do
    if kill -0 "$pid" 2>/dev/null; then
      as_root kill -TERM "$pid" || true
    fi
  done
}

missing=()
for pkg in "${PACKAGES[@]}"; do
  is_installed "$pkg" || missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
  log "system packages: all present (${PACKAGES[*]})"
else
  log "installing missing packages: ${missing[*]}"
  rabbit_before="$(system_rabbit_pids)"
  redis_before="$(system_redis_pids)"
  prometheus_before="$(system_prometheus_pids)"

  # Debian's maintainer scripts start services through invoke-rc.d, which asks
  # policy-rc.d first; exit code 101 means "don't start". Add one for the duration
  # of the install unless the machine already has its own (containers usually do).
  if [[ ! -e "$POLICY_RC" ]]; then
    trap remove_policy_rc EXIT
    printf '#!/bin/sh\n# temporary, from Herald scripts/install-deps.sh\nexit 101\n' |
      as_root tee "$POLICY_RC" >/dev/null
    as_root chmod 755 "$POLICY_RC"
    created_policy_rc=true
  fi

  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
  remove_policy_rc

  # Belt and braces: if a service got started anyway, stop it, but only if it
  # was not running before we installed anything (then it is someone else's).
  stop_autostarted rabbitmq-server "$rabbit_before" "$(system_rabbit_pids)"
  stop_autostarted redis-server "$redis_before" "$(system_redis_pids)"
  stop_autostarted prometheus "$prometheus_before" "$(system_prometheus_pids)"
fi

# The local run (scripts/run-local.sh) needs the fixed ports 5672/15672/6379. Tests
# don't (they pick free ports), so a conflict is only reported here, not fatal.
if ! PYTHONPATH="${HERALD_ROOT}/locust/src" python3 -m herald_load local check-ports; then
  warn "the ports above are taken: tests are unaffected, but scripts/run-local.sh will not start until they are free"
fi

# Maven selects a JDK >= 25 through the toolchains plugin; make sure one exists.
if java25="$(find_java25)"; then
  log "JDK 25+: ${java25%/bin/java}"
else
  die "no JDK 25 or newer under /usr/lib/jvm (looked for /usr/lib/jvm/*/release with JAVA_VERSION >= 25).
       Herald's services need Java 25: install one (e.g. Temurin 25 to /usr/lib/jvm/temurin-25-jdk-amd64)."
fi

# Only the Kubernetes checks need Go (1.23+, checked where they build: require_go); the local run
# does not, so an older one is a warning here.
if go_version="$(go_version_ok)"; then
  log "Go: ${go_version}"
else
  warn "Go 1.23 or newer is needed by the Kubernetes checks of the test command (found: ${go_version:-none});
       install a current Go from https://go.dev/dl/ and put it first on PATH (Debian 12's golang-go is 1.19)"
fi
