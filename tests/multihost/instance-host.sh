#!/usr/bin/env bash
# A fake cloud's instance as a host of its own in the multi-host tests' network
# (tests/testing/virtual_network.h): makes the network namespace "$DET_NETNS_PREFIX<instance id>",
# links it to the switch "${DET_NETNS_PREFIX}switch" with the next free address (10.99.0.100 on,
# counted in "$DET_NETNS_STATE"), and runs the rest of the command line there.
#   fake-ec2 --boot --boot-wrapper instance-host.sh   runs   instance-host.sh ID bash user-data.sh
set -euo pipefail
id=$1
shift
: "${DET_NETNS_PREFIX:?set by the test}" "${DET_NETNS_STATE:?set by the test}"
ns="${DET_NETNS_PREFIX}${id}"
switch="${DET_NETNS_PREFIX}switch"
exec 9>>"$DET_NETNS_STATE.lock"
flock 9
n=$(cat "$DET_NETNS_STATE" 2>/dev/null || echo 100)
echo $((n + 1)) >"$DET_NETNS_STATE"
flock -u 9
exec 9>&-
[ "$n" -le 254 ] || { echo "no address left for instance $id" >&2; exit 1; }
ip netns add "$ns"
ip -n "$switch" link add "i$n" type veth peer name eth0 netns "$ns"
ip -n "$switch" link set "i$n" master br0 up
ip -n "$ns" addr add "10.99.0.$n/24" dev eth0
ip -n "$ns" link set eth0 up
ip -n "$ns" link set lo up
echo "instance $id is host 10.99.0.$n (network namespace $ns)"
exec ip netns exec "$ns" "$@"
