# shellcheck shell=bash
# Helpers shared by the scripts in scripts/. Source it, don't run it:
#   source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

# Repository root (this file lives in <root>/scripts/lib/).
HERALD_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
# Everything a local run creates (data, logs, pid files, secrets); git-ignored.
HERALD_RUN_DIR="${HERALD_ROOT}/.run"
export HERALD_ROOT HERALD_RUN_DIR

# The folder of a Maven module: deployables in services/, the providers' stand-in in testing/.
module_dir() {
  case "$1" in
    provider-sandbox | test-support) echo "${HERALD_ROOT}/testing/$1" ;;
    contract | store) echo "${HERALD_ROOT}/libs/$1" ;;
    *) echo "${HERALD_ROOT}/services/$1" ;;
  esac
}

log() { printf '==> %s\n' "$*"; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
die() {
  printf 'ERROR: %s\n' "$*" >&2
  exit 1
}

# Prints <n> random bytes as lowercase hex (no newline).
random_hex() {
  od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'
}

# True if <pid-file> names a live process whose command line contains <pattern>.
# The pattern check guards against a stale pid file whose pid got reused.
pid_file_alive() {
  local pid_file="$1" pattern="$2" pid
  [[ -s "$pid_file" ]] || return 1
  pid="$(<"$pid_file")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [[ -r "/proc/${pid}/cmdline" ]] || return 1
  tr '\0' ' ' <"/proc/${pid}/cmdline" | grep -qF -- "$pattern"
}

# Waits up to <seconds> for <pid> to exit. Returns 1 if it is still alive.
wait_for_exit() {
  local pid="$1" seconds="$2" i
  for ((i = 0; i < seconds * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  ! kill -0 "$pid" 2>/dev/null
}

# Stops the process named in <pid-file> (if it is alive and matches <pattern>):
# SIGTERM, then SIGKILL after <grace> seconds. Removes the pid file.
stop_pid_file() {
  local pid_file="$1" pattern="$2" name="$3" grace="${4:-30}" pid
  if pid_file_alive "$pid_file" "$pattern"; then
    pid="$(<"$pid_file")"
    log "stopping ${name} (pid ${pid})"
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_for_exit "$pid" "$grace"; then
      warn "${name} did not stop within ${grace}s; killing it"
      kill -KILL "$pid" 2>/dev/null || true
      wait_for_exit "$pid" 5 || true
    fi
  fi
  rm -f "$pid_file"
}

# Prints the java launcher of the first installed JDK whose major version is >= 25,
# preferring Temurin 25. Returns 1 if there is none.
find_java25() {
  local candidate java_home version major
  for candidate in /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/*; do
    java_home="${candidate%/}"
    [[ -x "${java_home}/bin/java" && -x "${java_home}/bin/javac" ]] || continue
    # The JDK's `release` file says e.g. JAVA_VERSION="25.0.1".
    version="$(sed -n 's/^JAVA_VERSION="\([^"]*\)".*/\1/p' "${java_home}/release" 2>/dev/null || true)"
    major="${version%%.*}"
    if [[ "$major" =~ ^[0-9]+$ ]] && ((major >= 25)); then
      printf '%s\n' "${java_home}/bin/java"
      return 0
    fi
  done
  return 1
}

# True if an Erlang port mapper daemon (epmd) answers.
epmd_running() {
  command -v epmd >/dev/null 2>&1 && epmd -names >/dev/null 2>&1
}

# True if epmd runs but no Erlang node is registered with it any more.
epmd_idle() {
  local names
  names="$(epmd -names 2>/dev/null)" || return 1
  ! grep -q '^name ' <<<"$names"
}

# Prints `go env GOVERSION` (e.g. go1.26.1); fails if there is no go or it is older than 1.23, the
# oldest that builds kube v1.31 and KEDA v2.16 from their modules.
go_version_ok() {
  local version
  version="$(go env GOVERSION 2>/dev/null || true)"
  printf '%s\n' "$version"
  [[ "$version" =~ ^go1\.([0-9]+) ]] && ((BASH_REMATCH[1] >= 23))
}

# Stops with a clear message, before a build, where an old Go would fail with a compiler error
# about a go.mod's go line instead.
require_go() {
  local version
  version="$(go_version_ok)" ||
    die "Go 1.23 or newer is needed to build $1 (found: ${version:-none}): install a current Go from
       https://go.dev/dl/ and put it first on PATH (Debian 12's golang-go is 1.19)"
}
