#!/usr/bin/env bash
# Starts a Docker Engine that shares no file system with this host, on TCP loopback, for the container
# tests' remote engine: a second dockerd in a mount namespace of its own, where /tmp, /root, /home and
# the checkout's top folder are empty tmpfs (so no workspace, spill file or source of the host
# is visible to it), with no iptables rules of its own. It shares the host's network namespace (its
# address is on the host's loopback), so it gets a bridge of its own: `--bridge=none` would make it
# delete the host engine's docker0 as it starts. Loads IMAGE from the engine on /var/run/docker.sock
# into it, and prints its address once it answers.
#   scripts/remote-dockerd.sh PORT IMAGE
set -euo pipefail
port=$1
image=$2
address=tcp://127.0.0.1:$port
checkout=$(cd "$(dirname "$0")/.." && pwd)
top=/$(printf '%s' "$checkout" | cut -d/ -f2)
log=${TMPDIR:-/tmp}/effect-bash-remote-dockerd.log

if ! curl -sf --max-time 2 "http://127.0.0.1:$port/_ping" >/dev/null 2>&1; then
  bridge=effect-bash-br0
  if ! ip link show "$bridge" >/dev/null 2>&1; then
    ip link add "$bridge" type bridge
    ip addr add 10.213.0.1/24 dev "$bridge"
    ip link set "$bridge" up
  fi
  # The program is the inner bash's, its arguments its own "$1"…: nothing in it is this shell's to expand.
  # shellcheck disable=SC2016
  setsid unshare --mount --propagation private bash -c '
    set -e
    mount -t tmpfs -o mode=1777 tmpfs /tmp
    for dir in /root /home "$1"; do mount -t tmpfs -o mode=0755 tmpfs "$dir"; done
    mkdir -p /tmp/exec
    exec dockerd --data-root /var/lib/effect-bash-remote-docker --exec-root /tmp/exec --pidfile /tmp/exec/docker.pid \
      -H "$2" --bridge="$3" --iptables=false --ip-masq=false --userland-proxy=false
  ' effect-bash "$top" "$address" "$bridge" >"$log" 2>&1 </dev/null &
  echo $! >"$log.pid"
  for _ in $(seq 1 60); do
    curl -sf --max-time 2 "http://127.0.0.1:$port/_ping" >/dev/null 2>&1 && break
    sleep 0.5
  done
  curl -sf --max-time 2 "http://127.0.0.1:$port/_ping" >/dev/null ||
    { echo "the remote dockerd did not answer on $address within 30 s" >&2; tail -20 "$log" >&2; exit 1; }
fi
if ! docker -H "$address" image inspect "$image" >/dev/null 2>&1; then
  docker -H unix:///var/run/docker.sock save "$image" | docker -H "$address" load >/dev/null
fi
printf '%s\n' "$address"
