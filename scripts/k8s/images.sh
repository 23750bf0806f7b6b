#!/usr/bin/env bash
# Images built here for the test node (charts/README.md, "Images built here for the test node"). No
# registry is reachable, so every image comes from what the machine has and Debian's packages:
#   base      a Java 25 runtime: a jlink'd runtime of the local Temurin 25 (/opt/java, on PATH) on a
#             root holding only Debian's libc6, zlib1g and the CA bundle (taken from a debootstrap
#             minbase of bookworm); user 65532 `nonroot`; no shell
#   pause     containerd's sandbox image: a static C program that sleeps until SIGTERM/SIGINT
#   services  every service image, built by Jib on `base` (Maven builds the jars first)
#   busybox   the node tests' image (tests/node): Debian's static busybox and its applets' links
#   rabbitmq  Debian's rabbitmq-server and the Erlang it depends on (deb_closure.py over a debootstrap
#             --foreign root: files unpacked, no maintainer script run), a shell and coreutils for the
#             RabbitMQ Cluster Operator's setup container and probes; user 999 `rabbitmq` (what the
#             operator runs it as), named docker.io/local/rabbitmq:<RabbitMQ version>
#   rabbitmq-cluster-operator, messaging-topology-operator
#             the RabbitMQ operators (versions: scripts/k8s/testbed.sh, which reads their CRDs), each a
#             static binary (CGO_ENABLED=0) built from its Go module through a wrapper module (go
#             install refuses: the proxy answers 403 to their version listings) and cached by module
#             and Go version; the image holds only /manager, passwd and the CA bundle; user 65532
#   redis     Debian's redis-server on the base's Debian root (with the libraries it links); user 65532
#   locust    the load generator: Debian's Python 3.11 and Locust with the scenarios' libraries from PyPI
#             (herald_load's Kubernetes mode runs it as a Job); user 65532
# Each is a docker-save style tarball (manifest.json, config JSON, one tar per layer): Jib takes it as
# a base (-Djib.from.image=tar://...), containerd imports it (ctr -n k8s.io images import
# --index-name NAME FILE). base and pause are cached in ~/.cache/herald/images/<key>/, the key a hash
# of their inputs (this script, which holds the module list and the Debian suite, and the JDK's
# release file); their tars are deterministic (sorted entries, fixed mtimes and owners).
#
# Usage: scripts/k8s/images.sh base|pause|services|busybox|rabbitmq|rabbitmq-cluster-operator|
#                             messaging-topology-operator|redis|locust|build   (build = the first three)
#   prints one line per image: the name to import it under, then its tarball
# Env:   HERALD_IMAGE_BASE=<Jib image reference> builds the services on another base (e.g. scratch)
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

JDK="${HERALD_IMAGE_JDK:-/usr/lib/jvm/temurin-25-jdk-amd64}"
SUITE=bookworm
MIRROR=http://deb.debian.org/debian
# What the services need: java.se and the jdk.* modules that `jdeps --print-module-deps -recursive
# --class-path 'app/libs/*' app/classes` over the service images lists (jdk.jfr, jdk.management,
# jdk.net, jdk.unsupported), plus those loaded by name, which jdeps cannot see (crypto providers,
# JMX agent, DNS by JNDI, charsets, locales, zip file system, the JDK's HTTP server).
MODULES=java.se,jdk.unsupported,jdk.crypto.ec,jdk.crypto.cryptoki,jdk.management,jdk.management.agent,jdk.jfr,jdk.management.jfr,jdk.naming.dns,jdk.net,jdk.zipfs,jdk.charsets,jdk.httpserver,jdk.localedata
# Debian packages whose files make the base's root (dpkg's file lists of the debootstrap root).
ROOT_PACKAGES=(libc6 zlib1g)
USER_ID=65532
SERVICES=(dispatcher gateway connection-manager provider-sandbox)

CACHE="${XDG_CACHE_HOME:-${HOME}/.cache}/herald/images"
KEY="$( { cat "${BASH_SOURCE[0]}" "$(dirname "${BASH_SOURCE[0]}")/deb_closure.py" "${JDK}/release"; } | sha256sum | cut -c1-16)"
OUT="${CACHE}/${KEY}"
# Fixed time of every file and of the image configs, so equal inputs give equal tarballs.
EPOCH=0

# tar of <dir>'s content, deterministic: sorted, owned by root, fixed mtime, no atime/ctime; the
# entries named without a leading ./ (Jib refuses one: "Blocked unzipping files outside destination").
deterministic_tar() {
  local dir="$1" file="$2" entries
  mapfile -t entries < <(cd "$dir" && LC_ALL=C ls -A)
  tar -C "$dir" --sort=name --mtime="@${EPOCH}" --owner=0 --group=0 --numeric-owner \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime --format=posix \
    -cf "$file" "${entries[@]}"
}

sha256() { sha256sum "$1" | cut -d' ' -f1; }

# Writes <tarball> named <name> from a config fragment (JSON of the image's "config") and layer
# folders, one layer each, in order.
image_tar() {
  local tarball="$1" name="$2" config="$3" work layer sha diff_ids="" layers=""
  shift 3
  work="$(mktemp -d)"
  for layer in "$@"; do
    deterministic_tar "$layer" "${work}/layer.tar"
    sha="$(sha256 "${work}/layer.tar")"
    mv "${work}/layer.tar" "${work}/${sha}.tar"
    diff_ids+="${diff_ids:+,}\"sha256:${sha}\""
    layers+="${layers:+,}\"${sha}.tar\""
  done
  printf '{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z","config":%s,"rootfs":{"type":"layers","diff_ids":[%s]}}\n' \
    "$config" "$diff_ids" >"${work}/config.json"
  sha="$(sha256 "${work}/config.json")"
  mv "${work}/config.json" "${work}/${sha}.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":[%s]}]\n' "$sha" "$name" "$layers" >"${work}/manifest.json"
  deterministic_tar "$work" "${tarball}.part"
  mv "${tarball}.part" "$tarball"
  rm -rf "$work"
}

# The files of Debian <package>s installed in <debootstrap>, copied into <root>.
package_files() {
  local root="$1" debootstrap="$2" package list
  shift 2
  for package in "$@"; do
    # Multi-Arch: same packages have their list under <package>:amd64, the others under <package>.
    list="${debootstrap}/var/lib/dpkg/info/${package}:amd64.list"
    [[ -f "$list" ]] || list="${debootstrap}/var/lib/dpkg/info/${package}.list"
    [[ -f "$list" ]] || die "no dpkg file list of ${package} in the debootstrap root"
    # Files and links only (directories come with them), no docs; the lists name /lib paths, which
    # the usrmerge links of the root lead into /usr/lib.
    grep -v -e '^/usr/share/doc' -e '^/usr/share/lintian' -e '^/usr/share/locale' -e '^/usr/share/man' "$list" |
      while read -r path; do
        [[ -d "${debootstrap}${path}" && ! -L "${debootstrap}${path}" ]] || printf '.%s\n' "$path"
      done |
      tar -C "$debootstrap" --no-recursion -cf - -T - | tar -C "$root" --keep-directory-symlink -xf -
  done
}

# The root of the base image: the files of ROOT_PACKAGES from a debootstrap minbase root, the CA
# bundle, the usrmerge links, passwd/group with `nonroot`, an empty /tmp.
# More packages for the debootstrap root to include may follow <root> <debootstrap>.
debian_root() {
  local root="$1" debootstrap="$2" include
  shift 2
  include="$(IFS=,; echo "ca-certificates${*:+,$*}")"
  [[ $EUID -eq 0 ]] || die "debootstrap needs root"
  command -v debootstrap >/dev/null || die "debootstrap is missing (apt-get install debootstrap)"
  mkdir -p "${CACHE}/debs"
  log "debootstrap --variant=minbase ${SUITE} (${MIRROR}; packages cached in ${CACHE}/debs)" >&2
  debootstrap --variant=minbase --include="$include" --cache-dir="${CACHE}/debs" \
    "$SUITE" "$debootstrap" "$MIRROR" >"${debootstrap}.log" 2>&1 ||
    die "debootstrap failed, see ${debootstrap}.log: $(tail -3 "${debootstrap}.log")"
  mkdir -p "$root"/{etc/ssl/certs,tmp,usr/bin,usr/lib,usr/lib64,usr/sbin}
  for link in bin lib lib64 sbin; do ln -s "usr/${link}" "${root}/${link}"; done
  package_files "$root" "$debootstrap" "${ROOT_PACKAGES[@]}"
  cp "${debootstrap}/etc/ssl/certs/ca-certificates.crt" "${root}/etc/ssl/certs/"
  cp "${debootstrap}/usr/lib/os-release" "${root}/usr/lib/os-release"
  ln -s ../usr/lib/os-release "${root}/etc/os-release"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%s:%s:nonroot:/home/nonroot:/sbin/nologin\n' \
    "$USER_ID" "$USER_ID" >"${root}/etc/passwd"
  printf 'root:x:0:\nnonroot:x:%s:\n' "$USER_ID" >"${root}/etc/group"
  printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"${root}/etc/nsswitch.conf"
  mkdir -p "${root}/home/nonroot"
  chmod 1777 "${root}/tmp"
  ldconfig -r "$root"
}

build_base() {
  local work="$1" java="$1/java/opt/java"
  debian_root "${work}/root" "${work}/debootstrap"
  log "jlink ${MODULES} (${JDK})" >&2
  mkdir -p "$(dirname "$java")"
  "${JDK}/bin/jlink" --add-modules "$MODULES" --strip-debug --no-header-files --no-man-pages \
    --compress=zip-6 --output "$java" >&2
  image_tar "${OUT}/base.tar" "docker.io/local/herald-java-base:${KEY}" \
    "{\"User\":\"${USER_ID}:${USER_ID}\",\"Env\":[\"PATH=/opt/java/bin:/usr/bin:/bin\",\"JAVA_HOME=/opt/java\",\"LANG=C.UTF-8\"],\"WorkingDir\":\"/home/nonroot\"}" \
    "${work}/root" "${work}/java"
}

build_pause() {
  local work="$1"
  mkdir -p "${work}/pause"
  # pause(2) returns after each handled signal; SIGTERM and SIGINT end the program, others are ignored.
  cat >"${work}/pause.c" <<'EOF'
#include <signal.h>
#include <unistd.h>
static void stop(int signal) { _exit(signal == SIGTERM || signal == SIGINT ? 0 : 1); }
int main(void) {
  signal(SIGTERM, stop);
  signal(SIGINT, stop);
  for (;;) pause();
}
EOF
  gcc -static -Os -s -o "${work}/pause/pause" "${work}/pause.c"
  image_tar "${OUT}/pause.tar" "docker.io/local/pause:${KEY}" \
    "{\"User\":\"${USER_ID}:${USER_ID}\",\"Entrypoint\":[\"/pause\"]}" "${work}/pause"
}

# Builds base and pause unless the cache has them; prints their lines.
cached_images() {
  local want="$1" work
  if [[ ! -s "${OUT}/base.tar" || ! -s "${OUT}/pause.tar" ]]; then
    work="$(mktemp -d "${CACHE}/work.XXXXXX")"
    mkdir -p "$OUT"
    local started=$SECONDS
    [[ -s "${OUT}/pause.tar" ]] || build_pause "$work"
    [[ -s "${OUT}/base.tar" ]] || build_base "$work"
    rm -rf "$work"
    log "images built in $((SECONDS - started)) s: ${OUT}" >&2
  fi
  [[ "$want" != base ]] || echo "docker.io/local/herald-java-base:${KEY} ${OUT}/base.tar"
  [[ "$want" != pause ]] || echo "docker.io/local/pause:${KEY} ${OUT}/pause.tar"
}

busybox_image() {
  local work
  if [[ ! -s "${OUT}/busybox.tar" ]]; then
    [[ -x /bin/busybox ]] || die "no /bin/busybox: install Debian's busybox-static (scripts/install-deps.sh)"
    work="$(mktemp -d "${CACHE}/work.XXXXXX")"
    mkdir -p "${work}/root/bin" "$OUT"
    cp /bin/busybox "${work}/root/bin/busybox"
    "${work}/root/bin/busybox" --install -s "${work}/root/bin"
    # --install links to where the binary was; in the image it is /bin/busybox.
    find "${work}/root/bin" -type l -exec ln -sfn /bin/busybox {} \;
    image_tar "${OUT}/busybox.tar" "docker.io/local/busybox:${KEY}" \
      "{\"User\":\"${USER_ID}:${USER_ID}\",\"Env\":[\"PATH=/bin\"],\"Entrypoint\":[\"/bin/sh\"]}" "${work}/root"
    rm -rf "$work"
  fi
  echo "docker.io/local/busybox:${KEY} ${OUT}/busybox.tar"
}

# The RabbitMQ image: these packages and what they depend on, less what only a booted Debian system
# needs (adduser: the image's passwd has the user; logrotate, lsb-base, init-system-helpers: no init;
# python3: only for rabbitmqadmin). bash, coreutils, sed: the operator's setup container (sh -c cp
# ...), its preStop hook (/bin/bash) and the rabbitmq-* scripts; hostname: rabbitmq-env calls it.
RABBITMQ_PACKAGES=(rabbitmq-server bash dash coreutils sed grep hostname)
RABBITMQ_EXCLUDED=(adduser logrotate lsb-base init-system-helpers python3)
RABBITMQ_USER_ID=999  # the operator's StatefulSet sets runAsUser 999 (internal/resource/statefulset.go)

# foreign_root ROOT DEBOOTSTRAP INCLUDE PACKAGES EXCLUDED: the files of PACKAGES (comma-separated) and
# of what they depend on, less EXCLUDED and what only those bring in (deb_closure.py), unpacked into
# ROOT with the usrmerge links. The packages come from a debootstrap --foreign root with INCLUDE: it
# only downloads and unpacks, so no maintainer script runs (no RabbitMQ is started here).
foreign_root() {
  local root="$1" debootstrap="$2" include="$3" packages="$4" excluded="$5" deb
  [[ $EUID -eq 0 ]] || die "debootstrap needs root"
  command -v debootstrap >/dev/null || die "debootstrap is missing (apt-get install debootstrap)"
  mkdir -p "${CACHE}/debs"
  log "debootstrap --foreign --include=${include} ${SUITE} (packages cached in ${CACHE}/debs)" >&2
  debootstrap --variant=minbase --foreign --include="$include" --cache-dir="${CACHE}/debs" \
    "$SUITE" "$debootstrap" "$MIRROR" >"${debootstrap}.log" 2>&1 ||
    die "debootstrap failed, see ${debootstrap}.log: $(tail -3 "${debootstrap}.log")"
  mkdir -p "$root"/{usr/bin,usr/lib,usr/lib64,usr/sbin}
  for link in bin lib lib64 sbin; do ln -s "usr/${link}" "${root}/${link}"; done
  python3 "$(dirname "${BASH_SOURCE[0]}")/deb_closure.py" "$debootstrap" "$packages" "$excluded" >"${debootstrap}.debs"
  while read -r deb; do
    dpkg-deb --fsys-tarfile "$deb" | tar -C "$root" --keep-directory-symlink -xf -
  done <"${debootstrap}.debs"
  rm -rf "$root"/usr/share/{doc,man,info,lintian,locale}
}

rabbitmq_root() {
  local root="$1" debootstrap="$2"
  foreign_root "$root" "$debootstrap" rabbitmq-server,hostname "$(IFS=,; echo "${RABBITMQ_PACKAGES[*]}")" \
    "$(IFS=,; echo "${RABBITMQ_EXCLUDED[*]}")"
  rm -rf "$root"/etc/{cron.daily,logrotate.d,init.d}
  # What the rabbitmq-* scripts of /usr/sbin (Debian's wrappers, which switch to the user) would
  # run; PATH leads to the scripts themselves. Data, logs and the cookie live in /var/lib/rabbitmq,
  # an emptyDir under the operator (mnesia/ its persistence volume).
  mkdir -p "$root"/{etc/rabbitmq/conf.d,var/lib/rabbitmq,var/log/rabbitmq,tmp}
  printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nrabbitmq:x:%s:%s:RabbitMQ:/var/lib/rabbitmq:/bin/sh\n' \
    "$RABBITMQ_USER_ID" "$RABBITMQ_USER_ID" >"${root}/etc/passwd"
  printf 'root:x:0:\nrabbitmq:x:%s:\n' "$RABBITMQ_USER_ID" >"${root}/etc/group"
  printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"${root}/etc/nsswitch.conf"
  # localhost for a node named rabbit@localhost outside Kubernetes (the kubelet mounts its own hosts file)
  printf '127.0.0.1 localhost\n::1 localhost\n' >"${root}/etc/hosts"
  # Logs go to stdout (RABBITMQ_LOGS=-), what else RabbitMQ logs to files (upgrade log, crash dump)
  # to the data volume (RABBITMQ_LOG_BASE), so a read-only root works. Every file of the tar is
  # root's: the data and log folders are writable by whoever runs the image
  # (as /tmp is), for where no volume is mounted over them (a runtime keeps a folder's mode for a tmpfs).
  chmod 1777 "${root}/tmp" "${root}/var/lib/rabbitmq" "${root}/var/log/rabbitmq"
  ldconfig -r "$root"
  rm -f "${root}/var/cache/ldconfig/aux-cache"  # inode numbers and times: equal inputs, equal tarballs
  sed -n 's|^rabbitmq-server .*/rabbitmq-server_\(.*\)_all\.deb$|\1|p' "${debootstrap}/debootstrap/debpaths"
}

rabbitmq_image() {
  local work version
  if [[ ! -s "${OUT}/rabbitmq.tar" || ! -s "${OUT}/rabbitmq.name" ]]; then
    work="$(mktemp -d "${CACHE}/work.XXXXXX")"
    mkdir -p "$OUT"
    local started=$SECONDS
    version="$(rabbitmq_root "${work}/root" "${work}/debootstrap")"
    [[ -n "$version" ]] || die "no rabbitmq-server among the packages of the debootstrap root"
    # Tagged with RabbitMQ's version, which a Debian release keeps (its security updates change only
    # the Debian revision, kept in a label), so values files can name the image.
    echo "docker.io/local/rabbitmq:${version%%-*}" >"${OUT}/rabbitmq.name"
    image_tar "${OUT}/rabbitmq.tar" "$(cat "${OUT}/rabbitmq.name")" \
      "{\"Labels\":{\"herald.dev/debian-package\":\"rabbitmq-server=${version}\"},\"User\":\"${RABBITMQ_USER_ID}:${RABBITMQ_USER_ID}\",\"Env\":[\"PATH=/usr/lib/rabbitmq/bin:/usr/bin:/bin:/usr/sbin:/sbin\",\"HOME=/var/lib/rabbitmq\",\"LANG=C.UTF-8\",\"RABBITMQ_LOGS=-\",\"RABBITMQ_LOG_BASE=/var/lib/rabbitmq/log\"],\"Cmd\":[\"/usr/lib/rabbitmq/bin/rabbitmq-server\"],\"WorkingDir\":\"/var/lib/rabbitmq\",\"ExposedPorts\":{\"5672/tcp\":{},\"15672/tcp\":{},\"15692/tcp\":{}}}" \
      "${work}/root"
    rm -rf "$work"
    log "rabbitmq image built in $((SECONDS - started)) s" >&2
  fi
  echo "$(cat "${OUT}/rabbitmq.name") ${OUT}/rabbitmq.tar"
}

# operator_binary NAME MODULE VERSION: the static binary of MODULE's main package, built once per
# module version and Go version in a wrapper module (the control plane's trick, scripts/k8s/testbed.sh).
operator_binary() {
  local name="$1" module="$2" version="$3" dir
  dir="$(dirname "$CACHE")/operators/${name}-${version}-$(go env GOVERSION)"
  if [[ ! -x "${dir}/${name}" ]]; then
    require_go "the RabbitMQ operators"
    log "building ${module}@v${version} (cold: about 2 min)" >&2
    mkdir -p "${dir}/module"
    printf 'module operatorbuild\n\ngo 1.23\n\nrequire %s v%s\n' "$module" "$version" >"${dir}/module/go.mod"
    printf '//go:build tools\n\n// Package operatorbuild only pins the command it builds.\npackage operatorbuild\n\nimport _ "%s"\n' \
      "$module" >"${dir}/module/tools.go"
    (
      cd "${dir}/module"
      export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0
      go mod tidy >&2
      go build -trimpath -o "${dir}/${name}.part" "$module" >&2
    )
    mv "${dir}/${name}.part" "${dir}/${name}"
  fi
  echo "${dir}/${name}"
}

# operator_image NAME MODULE VERSION-VARIABLE (of scripts/k8s/testbed.sh)
operator_image() {
  local name="$1" module="$2" version work binary
  version="$(sed -n "s/^${3}=//p" "$(dirname "${BASH_SOURCE[0]}")/testbed.sh")"
  [[ -n "$version" ]] || die "no ${3} in scripts/k8s/testbed.sh"
  if [[ ! -s "${OUT}/${name}-${version}.tar" ]]; then
    binary="$(operator_binary "$name" "$module" "$version")"
    work="$(mktemp -d "${CACHE}/work.XXXXXX")"
    mkdir -p "${work}/root/etc/ssl/certs" "${work}/root/tmp" "$OUT"
    cp "$binary" "${work}/root/manager"
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%s:%s:nonroot:/home/nonroot:/sbin/nologin\n' \
      "$USER_ID" "$USER_ID" >"${work}/root/etc/passwd"
    cp /etc/ssl/certs/ca-certificates.crt "${work}/root/etc/ssl/certs/"
    chmod 1777 "${work}/root/tmp"
    image_tar "${OUT}/${name}-${version}.tar" "docker.io/local/${name}:${version}" \
      "{\"User\":\"${USER_ID}:${USER_ID}\",\"Entrypoint\":[\"/manager\"]}" "${work}/root"
    rm -rf "$work"
  fi
  echo "docker.io/local/${name}:${version} ${OUT}/${name}-${version}.tar"
}

# Debian's redis-server (and redis-cli, for exec probes) on the base's root, plus the packages of the
# libraries they link (ldd in the debootstrap root). Tagged with the Debian version (epoch dropped,
# `~` made `-`: a tag allows neither). The server runs in /data, a volume (the root is read-only).
redis_image() {
  local work version packages
  if [[ ! -s "${OUT}/redis.tar" || ! -s "${OUT}/redis.name" ]]; then
    work="$(mktemp -d "${CACHE}/work.XXXXXX")"
    mkdir -p "$OUT"
    debian_root "${work}/root" "${work}/debootstrap" redis-server
    mapfile -t packages < <(chroot "${work}/debootstrap" ldd /usr/bin/redis-check-rdb /usr/bin/redis-cli |
      sed -n 's|.*=> \(/[^ ]*\) .*|\1|p' | sort -u |
      while read -r library; do
        chroot "${work}/debootstrap" dpkg -S "$library" 2>/dev/null ||
          chroot "${work}/debootstrap" dpkg -S "/usr${library}"
      done | cut -d: -f1 | sort -u)
    package_files "${work}/root" "${work}/debootstrap" redis-server redis-tools "${packages[@]}"
    mkdir -p "${work}/root/data"
    ldconfig -r "${work}/root"
    version="$(chroot "${work}/debootstrap" dpkg-query -W -f '${Version}' redis-server)"
    version="${version#*:}"
    echo "docker.io/local/redis:${version//\~/-}" >"${OUT}/redis.name"
    image_tar "${OUT}/redis.tar" "$(cat "${OUT}/redis.name")" \
      "{\"User\":\"${USER_ID}:${USER_ID}\",\"Env\":[\"PATH=/usr/bin:/bin\"],\"Entrypoint\":[\"/usr/bin/redis-server\"],\"WorkingDir\":\"/data\",\"ExposedPorts\":{\"6379/tcp\":{}}}" \
      "${work}/root"
    rm -rf "$work"
  fi
  echo "$(cat "${OUT}/redis.name") ${OUT}/redis.tar"
}

# The load generator's image (locust/src/herald_load/kube.py runs it as a Job): Debian's Python 3.11,
# libstdc++ (greenlet's C++ extension), and dash, coreutils and sed for the Job's script, unpacked from
# their packages (foreign_root); Locust and the scenarios' libraries from PyPI as cp311 manylinux
# wheels (pip --target, whatever Python runs pip), compiled ahead with unchecked-hash pycs, which stay
# valid at the tarball's fixed mtimes on a read-only root. Its own layer, so a new Locust pin leaves
# the Python layer as it is. User 65532.
LOCUST_PACKAGES=(python3 libstdc++6 dash coreutils sed)
LOCUST_REQUIREMENTS=(locust==2.47.0 requests==2.34.2 paho-mqtt==2.2.0)

locust_image() {
  local work
  if [[ ! -s "${OUT}/locust.tar" ]]; then
    work="$(mktemp -d "${CACHE}/work.XXXXXX")"
    mkdir -p "$OUT" "${work}/site/opt/locust"
    local started=$SECONDS
    foreign_root "${work}/root" "${work}/debootstrap" python3 "$(IFS=,; echo "${LOCUST_PACKAGES[*]}")" ""
    mkdir -p "${work}/root/tmp" "${work}/root/home/nonroot"
    chmod 1777 "${work}/root/tmp"
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%s:%s:nonroot:/home/nonroot:/sbin/nologin\n' \
      "$USER_ID" "$USER_ID" >"${work}/root/etc/passwd"
    printf 'root:x:0:\nnonroot:x:%s:\n' "$USER_ID" >"${work}/root/etc/group"
    ldconfig -r "${work}/root"
    rm -f "${work}/root/var/cache/ldconfig/aux-cache"
    log "pip: ${LOCUST_REQUIREMENTS[*]} (cp311 manylinux wheels)" >&2
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-compile --target "${work}/site/opt/locust" \
      --only-binary=:all: --implementation cp --python-version 3.11 --abi cp311 \
      --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 "${LOCUST_REQUIREMENTS[@]}" >&2
    rm -rf "${work}/site/opt/locust/bin"
    "${work}/root/usr/bin/python3.11" -m compileall -q -j0 --invalidation-mode unchecked-hash \
      "${work}/root/usr/lib/python3.11" "${work}/site/opt/locust" >/dev/null
    image_tar "${OUT}/locust.tar" "docker.io/local/herald-locust:${KEY}" \
      "{\"User\":\"${USER_ID}:${USER_ID}\",\"Env\":[\"PATH=/usr/bin:/bin\",\"PYTHONPATH=/opt/locust\",\"PYTHONDONTWRITEBYTECODE=1\",\"HOME=/tmp\",\"LANG=C.UTF-8\"],\"Entrypoint\":[\"/usr/bin/python3\",\"-m\",\"locust\"],\"WorkingDir\":\"/tmp\"}" \
      "${work}/root" "${work}/site"
    rm -rf "$work"
    log "locust image built in $((SECONDS - started)) s" >&2
  fi
  echo "docker.io/local/herald-locust:${KEY} ${OUT}/locust.tar"
}

services() {
  local base="${HERALD_IMAGE_BASE:-}" module version flags=(-B -q)
  [[ -n "$base" ]] || base="tar://$(cached_images base | cut -d' ' -f2)"
  [[ "${CI:-}" != true ]] || flags+=(--no-transfer-progress)
  log "Jib: the service images on ${base}" >&2
  (cd "$HERALD_ROOT" && mvn "${flags[@]}" -pl "$(printf ':%s,' "${SERVICES[@]}" | sed 's/,$//')" -am \
    package jib:buildTar -DskipTests "-Djib.from.image=${base}") >&2
  version="$(sed -n 's/^appVersion: "\(.*\)"/\1/p' "${HERALD_ROOT}/charts/dispatcher/Chart.yaml")"
  for module in "${SERVICES[@]}"; do
    echo "docker.io/local/herald-${module}:${version} $(module_dir "$module")/target/jib-image.tar"
  done
}

mkdir -p "$CACHE"
case "${1:-}" in
  base | pause) cached_images "$1" ;;
  services) services ;;
  busybox) busybox_image ;;
  rabbitmq) rabbitmq_image ;;
  rabbitmq-cluster-operator)
    operator_image rabbitmq-cluster-operator github.com/rabbitmq/cluster-operator/v2 RABBITMQ_CLUSTER_OPERATOR_VERSION ;;
  messaging-topology-operator)
    operator_image messaging-topology-operator github.com/rabbitmq/messaging-topology-operator \
      RABBITMQ_TOPOLOGY_OPERATOR_VERSION ;;
  redis) redis_image ;;
  locust) locust_image ;;
  build)
    cached_images base
    cached_images pause
    services
    ;;
  *) die "usage: $0 base|pause|services|busybox|rabbitmq|rabbitmq-cluster-operator|messaging-topology-operator|redis|locust|build" ;;
esac
