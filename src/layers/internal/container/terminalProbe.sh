# shellcheck shell=bash
# The probe of a terminal in a box (terminalProbe.ts): $1 is the shell's pid in the box.
exec 2>/dev/null
leader=$1 self=$$ pts='' rp=') '
declare -A known=()
case $HOSTTYPE in
  x86_64) readcall=0 epolls=' 232 281 441 ' ;;
  aarch64) readcall=63 epolls=' 22 441 ' ;;
  *) readcall='' epolls=' ' ;;
esac
stat_of() {
  local line
  read -r line <"/proc/$1/stat" || return 1
  line=${line##*"$rp"}
  # Split on spaces without a here-string (no temporary file): past the name, fields hold no glob.
  # shellcheck disable=SC2206
  f=($line)
  [[ ${f[0]} != [ZX] ]]
}
find_pts() {
  local d
  for d in /dev/pts/[0-9]*; do [[ $d -ef /proc/$leader/fd/0 ]] && { pts=$d; return; }; done
}
waits() {
  local p=$1 w='' call='' arg='' rest='' tfd fd events
  stat_of "$p" && [[ ${f[0]} == S ]] || return 1
  read -r w <"/proc/$p/wchan"
  case $w in
    n_tty_read|wait_woken)
      read -r call arg rest <"/proc/$p/syscall" || return 1
      [[ -n $readcall && $call == "$readcall" && -n $arg ]] && [[ /proc/$p/fd/$((arg)) -ef $pts ]] ;;
    do_epoll_wait*|ep_poll*)
      read -r call arg rest <"/proc/$p/syscall" || return 1
      [[ $epolls == *" $call "* && -n $arg ]] || return 1
      while read -r tfd fd _ events rest; do
        [[ $tfd == tfd: ]] && (( 16#$events & 1 )) && [[ /proc/$p/fd/$fd -ef $pts ]] && return 0
      done <"/proc/$p/fdinfo/$((arg))"
      return 1 ;;
    poll_schedule_timeout*|do_select*|do_sys_poll*|core_sys_select*)
      [[ /proc/$p/fd/0 -ef $pts ]] ;;
    *) return 1 ;;
  esac
}
foreground() {
  stat_of "$leader" || { echo "$id none"; return; }
  local pg=${f[5]} reading=0 k v wakeups=-1
  (( pg > 0 )) || { echo "$id none"; return; }
  [[ -n $pts ]] && waits "$pg" && reading=1
  while read -r k v; do [[ $k == voluntary_ctxt_switches: ]] && { wakeups=$v; break; }; done <"/proc/$pg/status"
  echo "$id $pg $reading $wakeups"
}
refresh() {
  local p d
  for p in "${!known[@]}"; do
    if ! stat_of "$p" || [[ ${f[19]} != "${known[$p]}" ]]; then unset "known[$p]"; fi
  done
  local -A kids=() starts=() seen=()
  local -a found=() stack=()
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [[ $p == "$self" ]] && continue
    stat_of "$p" || continue
    starts[$p]=${f[19]}
    kids[${f[1]}]+=" $p"
    if [[ ${f[3]} == "$leader" ]] || { [[ -n $pts ]] && [[ $d/fd/0 -ef $pts || $d/fd/1 -ef $pts || $d/fd/2 -ef $pts ]]; }; then found+=("$p"); fi
  done
  stack=("${found[@]}" "${!known[@]}")
  while (( ${#stack[@]} > 0 )); do
    p=${stack[-1]}
    unset 'stack[-1]'
    [[ -n ${starts[$p]} && -z ${seen[$p]} ]] || continue
    seen[$p]=1
    known[$p]=${starts[$p]}
    # shellcheck disable=SC2206 # a list of pids
    stack+=(${kids[$p]})
  done
}
find_pts
while read -r id op a b; do
  [[ -n $pts ]] || find_pts
  case $op in
    fg) foreground ;;
    group) if kill -s "$a" -- "-$b"; then echo "$id ok"; else echo "$id gone"; fi ;;
    all) refresh; n=0; for p in "${!known[@]}"; do kill -s "$a" "$p"; n=$((n + 1)); done; echo "$id $n" ;;
    alive) refresh; echo "$id ${#known[@]}" ;;
    others) refresh; n=0; for p in "${!known[@]}"; do [[ $p == "$leader" ]] || n=$((n + 1)); done; echo "$id $n" ;;
    exit) exit 0 ;;
    *) echo "$id unknown" ;;
  esac
done
# The input ended without `exit`: the host is gone (killed without its finalizers, or its connection
# to the engine lost). Its terminal goes with it, as a terminal on the host goes with a dead host:
# TERM and HUP to every process of it, a grace of about 3 s while any is left, then KILL.
refresh
for p in "${!known[@]}"; do kill -s TERM "$p"; kill -s HUP "$p"; done
for (( wait = 0; wait < 30; wait++ )); do
  refresh
  (( ${#known[@]} > 0 )) || break
  command -p sleep 0.1 || break
done
for p in "${!known[@]}"; do kill -s KILL "$p"; done
