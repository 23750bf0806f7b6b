#!/usr/bin/env bash
# A network namespace for a test: one veth pair, a /30 of test-only addresses, no route out.
#
# Kubernetes' aggregation layer reaches an extension API server (KEDA's metrics adapter) through
# a Service's Endpoints, which may not be loopback addresses. Running the adapter in a namespace
# of its own gives it a non-loopback address that only this machine knows: the namespace has a
# link to the host side of the pair and nothing else (no default route), so nothing in it can
# send traffic anywhere but to the host's end of the link.
#
#   scripts/k8s/netns.sh up NAME     creates namespace NAME with the first free /30 of
#                                    10.213.0.0/24 (host side .1, namespace side .2 of it) and
#                                    prints `HOST_IP=... NS_IP=... NETNS=NAME`
#   scripts/k8s/netns.sh down NAME   deletes it (and so the veth pair)
#
# Needs root (ip netns). Interface names derive from NAME (at most 15 characters each).
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

usage() { die "usage: $0 up NAME | down NAME"; }
(($# == 2)) || usage
action="$1" name="$2"
[[ "$name" =~ ^[a-z0-9-]{1,40}$ ]] || die "namespace name must be [a-z0-9-]{1,40}: ${name}"
command -v ip >/dev/null 2>&1 || die "ip (iproute2) is needed"
((EUID == 0)) || die "creating a network namespace needs root"

# Interface names: "hv" + 8 hex of the name's hash + "h"/"n" (11 characters).
suffix="$(printf '%s' "$name" | sha256sum | cut -c1-8)"
host_if="hv${suffix}h"
ns_if="hv${suffix}n"

case "$action" in
  up)
    ip netns list | grep -qw -- "$name" && die "network namespace ${name} exists already"
    # The first /30 of 10.213.0.0/24 that no interface of this machine uses.
    used="$(ip -4 -o addr show | awk '{print $4}')"
    base=""
    for ((o = 0; o < 256; o += 4)); do
      if ! grep -q "^10\.213\.0\.$((o + 1))/" <<<"$used"; then
        base="$o"
        break
      fi
    done
    [[ -n "$base" ]] || die "no free /30 left in 10.213.0.0/24"
    host_ip="10.213.0.$((base + 1))"
    ns_ip="10.213.0.$((base + 2))"
    ip netns add "$name"
    if ! {
      ip link add "$host_if" type veth peer name "$ns_if" netns "$name" &&
        ip addr add "${host_ip}/30" dev "$host_if" &&
        ip link set "$host_if" up &&
        ip -n "$name" addr add "${ns_ip}/30" dev "$ns_if" &&
        ip -n "$name" link set "$ns_if" up &&
        ip -n "$name" link set lo up
    }; then
      ip netns delete "$name" 2>/dev/null || true
      ip link delete "$host_if" 2>/dev/null || true
      die "could not set up network namespace ${name}"
    fi
    # The kernel needs a moment before the host side address can be bound (DAD is IPv6-only, but
    # the link state settles asynchronously): wait until the host address is usable.
    for _ in $(seq 50); do
      ip -4 -o addr show dev "$host_if" | grep -q "$host_ip" && break
      sleep 0.1
    done
    printf 'HOST_IP=%s NS_IP=%s NETNS=%s\n' "$host_ip" "$ns_ip" "$name"
    ;;
  down)
    ip netns delete "$name" 2>/dev/null || true
    # Deleting the namespace deletes its end of the pair and with it the host end; be sure.
    ip link delete "$host_if" 2>/dev/null || true
    ;;
  *) usage ;;
esac
