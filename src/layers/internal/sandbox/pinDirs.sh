# shellcheck shell=sh
# The sandbox's directory pinner (see bwrap.ts): $1 = the first descriptor, $2 = the most directories,
# $3 = how many follow, then those directories, then the argv it runs.
first=$1 max=$2 n=$3; shift 3; i=$first
if [ "$n" -gt "$max" ]; then printf 'bwrap: more than %s directories to pin\n' "$max" >&2; exit 1; fi
given=$PWD; old=${OLDPWD+set}; oldValue=${OLDPWD-}; here=$(pwd -P && echo .); here=${here%?.}
while [ "$i" -lt $((first + n)) ]; do
  if ! cd -P "$1" 2>/dev/null || ! eval "command exec $i<." 2>/dev/null ||
    [ "$(cd -P "/proc/self/fd/$i" 2>/dev/null && pwd -P)" != "$1" ]; then
    printf 'bwrap: %s was moved while the sandbox started\n' "$1" >&2; exit 1
  fi
  i=$((i + 1)); shift
done
if [ -z "$here" ] || ! cd -P "$here" 2>/dev/null; then
  printf 'bwrap: the working directory was moved while the sandbox started\n' >&2; exit 1
fi
PWD=$given; if [ "$old" = set ]; then OLDPWD=$oldValue; else unset OLDPWD; fi
exec "$@"
