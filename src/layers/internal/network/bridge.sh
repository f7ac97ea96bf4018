# shellcheck shell=sh
# The sandbox's network bridge (see bridge.ts): $1 = socat, $2 = the HTTP relay's port, $3 = its unix
# socket, $4 = its line of /proc/net/tcp when listening, $5 $6 $7 = the same for the SOCKS5 relay,
# $8 = how many seconds of /proc/uptime it waits for both, $9 = the descriptor the unix-socket filter
# is on (empty: no filter), ${10} = perl, ${11} = the perl program that installs the filter; then the
# argv it runs.
socat=$1 httpPort=$2 httpSocket=$3 httpListening=$4 socksPort=$5 socksSocket=$6 socksListening=$7
startSeconds=$8 filterFd=$9 perl=${10} installFilter=${11}
shift 11
# Run in the background (a subshell): the relay does not keep the filter's descriptor.
relay() {
  if [ -n "$filterFd" ]; then eval "exec $filterFd<&-"; fi
  exec "$socat" "TCP-LISTEN:$1,bind=127.0.0.1,fork,reuseaddr" "UNIX-CONNECT:$2"
}
relay "$httpPort" "$httpSocket" </dev/null >/dev/null 2>&1 &
relay "$socksPort" "$socksSocket" </dev/null >/dev/null 2>&1 &
# Read with builtins only: a poll forks nothing but its pause.
read -r start _ </proc/uptime; start=${start%.*}
while :; do
  n=0
  while read -r _ local remote state _; do
    case "$local $remote $state" in "$httpListening"|"$socksListening") n=$((n + 1)) ;; esac
  done </proc/net/tcp
  [ "$n" -ge 2 ] && break
  read -r now _ </proc/uptime
  if [ "${now%.*}" -gt $((start + startSeconds)) ]; then
    printf 'bwrap: the network bridge did not start\n' >&2; exit 1
  fi
  sleep 0.005
done
# What sends curl, git, npm, pip and most HTTP clients through the relays.
http=http://127.0.0.1:$httpPort socks=socks5h://127.0.0.1:$socksPort here=localhost,127.0.0.1,::1
export HTTP_PROXY="$http" HTTPS_PROXY="$http" http_proxy="$http" https_proxy="$http"
export ALL_PROXY="$socks" all_proxy="$socks" NO_PROXY="$here" no_proxy="$here"
if [ -z "$filterFd" ]; then exec "$@"; fi
exec "$perl" -e "$installFilter" "$filterFd" "$@"
