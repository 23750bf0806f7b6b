#!/usr/bin/env bash
# Builds KEDA's operator and metrics adapter from the Go module proxy and caches them.
#
# KEDA's go.mod carries `replace` directives, so `go install .../cmd/operator@vX` refuses.
# A small wrapper module of our own requires github.com/kedacore/keda/v2 at the pinned
# version and copies every upstream replace line (all of them are version pins), then
# builds the two commands. Cold: about 9 minutes on 2 cores; warm: the cached binaries.
#
# Usage: scripts/k8s/keda-build.sh        prints the bin folder (keda-operator, keda-adapter)
# Env:   HERALD_KEDA_VERSION  (default v2.16.1, the version verified here)
#        HERALD_CACHE         (default ~/.cache/herald)
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

KEDA_VERSION="${HERALD_KEDA_VERSION:-v2.16.1}"
KEDA_MODULE=github.com/kedacore/keda/v2
CACHE="${HERALD_CACHE:-${XDG_CACHE_HOME:-${HOME}/.cache}/herald}"
OUT="${CACHE}/keda/${KEDA_VERSION}"
BIN="${OUT}/bin"

if [[ -x "${BIN}/keda-operator" && -x "${BIN}/keda-adapter" ]]; then
  printf '%s\n' "$BIN"
  exit 0
fi

require_go "KEDA (from the Go module proxy)"

started=$SECONDS
log "building KEDA ${KEDA_VERSION} (operator + metrics adapter) into ${BIN}; takes minutes when cold" >&2
work="${OUT}/build"
rm -rf "$work"
mkdir -p "$work"

# The upstream go.mod (from the module cache, fetched through the proxy).
upstream_dir="$(cd "$work" && go mod download -json "${KEDA_MODULE}@${KEDA_VERSION}" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[[ -f "${upstream_dir}/go.mod" ]] || die "could not download ${KEDA_MODULE}@${KEDA_VERSION}"

# Every `OLD => NEW VERSION` line of upstream's replace blocks (and single-line replaces).
replaces="$(awk '
  /^replace[[:space:]]*\(/ { inblock = 1; next }
  inblock && /^\)/ { inblock = 0; next }
  inblock && /=>/ { sub(/\/\/.*/, ""); print "replace " $0; next }
  /^replace[[:space:]]+[^(]/ { print }
' "${upstream_dir}/go.mod" | sed 's/[[:space:]]\+/ /g; s/ $//')"
if grep -qE '=> \.{0,2}/' <<<"$replaces"; then
  die "upstream go.mod of ${KEDA_VERSION} replaces a module with a local path; the wrapper cannot copy that"
fi
go_line="$(sed -n 's/^go \([0-9.]*\).*/\1/p' "${upstream_dir}/go.mod")"

{
  echo "module heraldkedabuild"
  echo
  echo "go ${go_line}"
  echo
  echo "require ${KEDA_MODULE} ${KEDA_VERSION}"
  echo
  printf '%s\n' "$replaces"
} >"${work}/go.mod"
cat >"${work}/tools.go" <<EOF
//go:build tools

// Package tools only pins the KEDA commands this module builds.
package tools

import (
	_ "${KEDA_MODULE}/cmd/adapter"
	_ "${KEDA_MODULE}/cmd/operator"
)
EOF

mkdir -p "${work}/bin"
# -mod=mod lets go resolve the wrapper's go.sum itself; -s -w: no debug info (smaller, faster link).
(cd "$work" && GOFLAGS="-mod=mod -buildvcs=false" go build -trimpath \
  -ldflags "-s -w -X ${KEDA_MODULE}/version.Version=${KEDA_VERSION#v}" \
  -o bin/ "${KEDA_MODULE}/cmd/operator" "${KEDA_MODULE}/cmd/adapter") >&2

mkdir -p "$BIN"
mv "${work}/bin/operator" "${BIN}/keda-operator"
mv "${work}/bin/adapter" "${BIN}/keda-adapter"
# The CRDs of this very version, for whoever installs them.
mkdir -p "${OUT}/crd"
cp "${upstream_dir}"/config/crd/bases/*.yaml "${OUT}/crd/"
chmod u+w "${OUT}"/crd/*.yaml
rm -rf "$work"
log "KEDA ${KEDA_VERSION} built in $((SECONDS - started)) s" >&2
printf '%s\n' "$BIN"
