# shellcheck shell=bash
# The container wrapper (see served.ts): $1 = "serve" (one call after another, each read from stdin)
# or "once" (one call, whose command reads the rest of stdin); see the loop at the end.
oom() {
  local f k v
  for f in /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control; do
    [ -r "$f" ] || continue
    while read -r k v; do [ "$k" = oom_kill ] && { ooms=$v; return; }; done <"$f"
  done
  ooms=0
}
members() {
  local d s
  for d in /proc/[0-9]*; do
    read -r s <"$d/stat" 2>/dev/null || continue
    s=${s##*) }
    # shellcheck disable=SC2086 # split into the stat's fields (state letters and numbers: no glob)
    set -- $s
    [ "$3" = "$pg" ] && [ "$1" != Z ] && [ "$1" != X ] && { group=alive; return; }
  done
  group=empty
}
# The command's processes are the OOM killer's first choice, so the wrapper lives to write the status.
victim() { { echo 1000 >/proc/self/oom_score_adj; } 2>/dev/null; }
# The tag of $1 under the key's pair ($2, $3), as statusTag computes it.
tag() {
  local t=$1 h=0 i c
  for (( i = 0; i < ${#t}; i++ )); do printf -v c %d "'${t:i:1}"; h=$(( (h + c) * $2 % 2147483647 )); done
  tagged=$(( (h + $3) % 2147483647 ))
}
# The wrapper's lines on stdout (and `end` on fd 3, the exec's stderr): after a NUL and the call's
# token, which no process of the command has seen before the wrapper writes it.
say() { printf '\0%s %s\n' "$__effect_bash_token" "$1"; }
# Whether a process but this one holds the exec's stdout or stderr (a member that left the group):
# then a later call's output would not be that call's alone, and this exec serves no more calls.
held() {
  local f
  for f in /proc/[0-9]*/task/[0-9]*/fd/*; do
    case $f in "/proc/$$/"*) continue ;; esac
    { [ "$f" -ef /dev/fd/1 ] || [ "$f" -ef /dev/fd/3 ]; } 2>/dev/null && return 0
  done
  return 1
}
# A stopped leader has not ended: bash 5.1's "wait -f" waits for its end (an older bash's wait returns
# at the stop, and the leader is reported as ended by its stop signal).
untilEnd=
(( BASH_VERSINFO[0] > 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] >= 1) )) && untilEnd=-f
set -m
# The leader's last state in the job table (Stopped, Exit 3, Killed...), kept once the job has left it.
# Read through a command substitution (bash lists the parent's jobs there), never a file the command could write.
onChild() {
  set -f
  # shellcheck disable=SC2207 # split into the job line's words (no glob: set -f)
  __effect_bash_job=($(jobs -l))
  set +f
  [ -n "${__effect_bash_job[2]-}" ] && { word=${__effect_bash_job[2]}; code=${__effect_bash_job[3]-}; }
}
# The variables that change how bash starts, hidden from this shell by the host (see wrapperEnv),
# given back to the command's shell: exported as given, its options set here just before its exec,
# but for xtrace and verbose, which its bash turns on itself (no line of this shell is traced).
unhide() {
  local v name o IFS=:
  for v in "${!__effect_bash_saved_@}"; do
    name=${v#__effect_bash_saved_}
    case $name in
      SHELLOPTS) continue ;;
      BASHOPTS) for o in ${!v}; do shopt -s "$o" 2>/dev/null; done; export BASHOPTS ;;
      *) export "$name=${!v}" ;;
    esac
    unset "$v"
  done
  [ -n "${__effect_bash_saved_SHELLOPTS+x}" ] || return 0
  o=$__effect_bash_saved_SHELLOPTS
  unset __effect_bash_saved_SHELLOPTS
  set +m
  export SHELLOPTS
  for name in $o; do
    case $name in
      xtrace|verbose) __effect_bash_own+=(-o "$name") ;;
      *) set -o "$name" 2>/dev/null || : ;;
    esac
  done
}
# The leader says its pid, then runs nothing until the host's `go` (an exec the host gave up on is
# closed: its input ends instead). The call's variables are exported only here, in the leader. A
# served leader's input is /dev/null; a one-call exec's leader keeps the exec's input, which holds
# the call's input after `go` (read byte by byte from a pipe, the frame and `go` take nothing of it).
gate() {
  victim
  for __effect_bash_e in ${__effect_bash_env[@]+"${__effect_bash_env[@]}"}; do export "${__effect_bash_e?}"; done
  unset __effect_bash_e __effect_bash_env
  say "pid $BASHPID"
  IFS= read -r __effect_bash_go && [ "$__effect_bash_go" = go ] || exit 125
  unset __effect_bash_go __effect_bash_token
  [ "$__effect_bash_once" = once ] || exec </dev/null
  # An engine's fallback for a user without a home (/, which is not the user's) is a writable one.
  [ "${HOME:-/}" = / ] && [ ! -w / ] && export HOME=/tmp
  unhide
}
# One call: $1 = workdir, $2 = "argv" | "fd" (a command too long for an argument goes to its shell
# over fd 3, read with builtins, as the local executor passes it), $3 = the command; returns once the
# leader has ended and its group is empty, its status said on stdout.
call() {
# No bash for the command: no pid line, and the host says the image needs bash on the call's PATH.
PATH=${__effect_bash_path-$PATH} type -P bash >/dev/null || exit 0
cd -- "$1" 2>/dev/null || { say nowd; exit 0; }
oom; before=$ooms oomed='' word='' code='' __effect_bash_own=()
trap onChild CHLD
if [ "$2" = fd ]; then
  { gate; exec bash --norc --noprofile ${__effect_bash_own[@]+"${__effect_bash_own[@]}"} -c -- "IFS= read -r -d '' -u 3 __effect_bash_script; exec 3<&-; eval \"unset __effect_bash_script; \$__effect_bash_script\"" 2>&3 3< <(printf '%s\0' "$3"); } &
else
  { gate; exec bash --norc --noprofile ${__effect_bash_own[@]+"${__effect_bash_own[@]}"} -c -- "$3" 2>&3 3>&-; } &
fi
pg=$!
wait $untilEnd "$pg"
st=$?
# For a leader stopped before the wait began, bash gives the stop's status: the job table says how
# it ended.
case $word in
  Done) st=0 ;;
  Exit) st=$code ;;
  Killed) st=137 ;;
  Terminated) st=143 ;;
esac
trap - CHLD
if [ "$st" -gt 128 ] && [ "$word" != Exit ]; then how="signal SIG$(kill -l "$st")"; else how="exit $st"; fi
members
oom
[ "$ooms" -gt "$before" ] && oomed=" oom"
line="$how $group$oomed"
tag "$line" "${__effect_bash_key[0]}" "${__effect_bash_key[1]}"; first=$tagged
tag "$line" "${__effect_bash_key[2]}" "${__effect_bash_key[3]}"
say "$line $first $tagged"
[ "$group" = alive ] || return 0
while command -p sleep 0.05; do
  members
  [ "$group" = empty ] || continue
  say "empty ${__effect_bash_key[4]} ${__effect_bash_key[5]}"
  return 0
done
}
# The wrapper's own stderr goes before the leader starts: with job control on, bash reports a job that
# ends before the wait ("[1]+ Done …") on it, which would reach the command's stderr. The leader
# gets the exec's stderr back as fd 2; a call's `end` goes to fd 3.
exec 3>&2 2>/dev/null
# Each call is a key line (eight numbers and the call's token), then NUL-terminated fields: the
# workdir, "argv" or "fd", the command, the call's variables (NAME=value) and an empty one; its leader
# waits for `go` (see gate). Once the call's group is empty, `end` under the key's last pair on stdout
# and on the exec's stderr closes the call's output. `serve` then reads the next call; `once` (an
# exec of the call's own, whose further input is the command's) exits. An exec whose output a
# process of the command still holds says no `end` and serves no more.
__effect_bash_once=$1
while IFS=' ' read -r -a __effect_bash_key && [ "${#__effect_bash_key[@]}" = 9 ]; do
  __effect_bash_token=${__effect_bash_key[8]} __effect_bash_env=()
  unset __effect_bash_path
  IFS= read -r -d '' __effect_bash_cwd && IFS= read -r -d '' __effect_bash_mode && IFS= read -r -d '' __effect_bash_command || exit 0
  while IFS= read -r -d '' __effect_bash_e || exit 0; [ -n "$__effect_bash_e" ]; do
    __effect_bash_env+=("$__effect_bash_e")
    case $__effect_bash_e in PATH=*) __effect_bash_path=${__effect_bash_e#PATH=} ;; esac
  done
  call "$__effect_bash_cwd" "$__effect_bash_mode" "$__effect_bash_command"
  held && exit 0
  say "end ${__effect_bash_key[6]} ${__effect_bash_key[7]}"
  say "end ${__effect_bash_key[6]} ${__effect_bash_key[7]}" >&3
  [ "$__effect_bash_once" = once ] && exit 0
done
