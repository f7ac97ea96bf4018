# shellcheck shell=bash
# The host-death reaper (see reaperProcess.ts): reads its events on stdin.
trap '' INT QUIT TERM HUP
shopt -s nullglob
for fd in /proc/"$$"/fd/*; do fd=${fd##*/}; if (( fd > 2 )); then eval "exec $fd>&-"; fi; done 2>/dev/null
declare -A groups=() resume=()
dirs=()
while IFS= read -r line; do
  case $line in
    +[0-9]*) groups[${line:1}]=1 ;;
    -[0-9]*) unset "groups[${line:1}]" "resume[${line:1}]" ;;
    c[0-9]*) resume[${line:1}]=1 ;;
    d?*) dirs+=("${line:1}") ;;
    q) exit 0 ;;
  esac
done
for pid in "${!resume[@]}"; do kill -CONT -- "$pid" 2>/dev/null; done
for pgid in "${!groups[@]}"; do kill -KILL -- "-$pgid" 2>/dev/null; done
for dir in "${dirs[@]}"; do rm -rf -- "$dir"; done
