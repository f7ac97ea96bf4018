# shellcheck shell=bash
# The host-death reaper (see reaperProcess.ts): reads its events on stdin.
trap '' INT QUIT TERM HUP
shopt -s nullglob
for fd in /proc/"$$"/fd/*; do fd=${fd##*/}; if (( fd > 2 )); then eval "exec $fd>&-"; fi; done 2>/dev/null
declare -A groups=() terminals=()
dirs=()
host=$PPID
# Every process of the dead host's terminals: their sessions, the processes holding their PTYs as
# stdio (children that left with setsid; a PTY whose master closed reads "(deleted)", and its number
# is not reused while one is held) and every descendant of those. Each is stopped as it is found, so
# none forks away while the search goes on; then all are killed.
reap_terminals() {
  local -A caught=()
  local -a held=()
  local stat line pid ppid sid new round pts
  local -a fields
  for pts in "${terminals[@]}"; do held+=(-o -lname "$pts (deleted)"); done
  for (( round = 0; round < 50; round++ )); do
    new=0
    while IFS= read -r line; do
      pid=${line#/proc/}; pid=${pid%%/*}
      if [[ -z ${caught[$pid]} ]]; then caught[$pid]=1; new=1; kill -STOP "$pid" 2>/dev/null; fi
    done < <(find /proc/[0-9]*/fd -maxdepth 1 -name '[012]' \( "${held[@]:1}" \) 2>/dev/null)
    for stat in /proc/[0-9]*/stat; do
      { read -r line < "$stat"; } 2>/dev/null || continue
      pid=${stat#/proc/}; pid=${pid%/stat}
      [[ -n ${caught[$pid]} ]] && continue
      # The fields after the command name: state, ppid, pgrp, session, ...
      read -r -a fields <<< "${line##*) }"
      ppid=${fields[1]}; sid=${fields[3]}
      if [[ -n ${terminals[$sid]} || -n ${caught[$ppid]} ]]; then caught[$pid]=1; new=1; kill -STOP "$pid" 2>/dev/null; fi
    done 2>/dev/null
    (( new )) || break
  done
  for pid in "${!caught[@]}"; do kill -KILL "$pid"; done 2>/dev/null
}
# The host's descriptors close as it dies, its PTY masters among them: wait (bounded) until it is a
# zombie or gone, so its PTYs read "(deleted)" by the time they are looked for.
await_host() {
  local line i
  for (( i = 0; i < 100; i++ )); do
    { read -r line < "/proc/$host/stat"; } 2>/dev/null || return
    line=${line##*) }
    [[ $line == [ZX]* ]] && return
    sleep 0.01
  done
}
while IFS= read -r line; do
  case $line in
    +[0-9]*) groups[${line:1}]=1 ;;
    -[0-9]*) unset "groups[${line:1}]" "terminals[${line:1}]" ;;
    d?*) dirs+=("${line:1}") ;;
    t[0-9]*\ /dev/*) line=${line:1}; terminals[${line%% *}]=${line#* } ;;
    q) exit 0 ;;
  esac
done
for pgid in "${!groups[@]}"; do kill -KILL -- "-$pgid" 2>/dev/null; done
if (( ${#terminals[@]} )); then await_host; reap_terminals; fi
for dir in "${dirs[@]}"; do rm -rf -- "$dir"; done
