#!/usr/bin/env bash
# Builds the container tests' image from this host's own files (no registry is needed): bash, the
# coreutils and process tools the tests call, every library `ldd` names, the dynamic loader, an
# /etc/passwd with a non-root user, and a world-writable /tmp. Usage: docker-test-image.sh [NAME:TAG [TOOL...]],
# where each TOOL is a further program of this host's to copy in (the network tests add curl).
set -euo pipefail
image="${1:-effect-bash-test:latest}"
extra=("${@:2}")

if docker image inspect "$image" >/dev/null 2>&1; then
  echo "image $image exists"
  exit 0
fi

root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT

tools=(bash sh cat echo printf true false sleep ls mkdir rm mv cp touch head tail wc tr cut sort uniq
  grep sed env id pwd stat dd seq yes ps kill readlink dirname basename nproc timeout tee chmod ${extra[@]+"${extra[@]}"})
copy() {
  local source="$1"
  mkdir -p "$root$(dirname "$source")"
  cp -L "$source" "$root$source"
}
for tool in "${tools[@]}"; do
  path="$(type -P "$tool" || true)"
  [ -n "$path" ] || { echo "missing on this host: $tool" >&2; exit 1; }
  copy "$path"
  ldd "$path" 2>/dev/null | grep -o '/[^ ]*' | while read -r library; do copy "$library"; done
done
copy /lib64/ld-linux-x86-64.so.2

# Every tool under /bin and /usr/bin, wherever the host keeps it (merged /usr or not).
mkdir -p "$root/bin" "$root/usr/bin"
for tool in "${tools[@]}"; do
  path="$(type -P "$tool")"
  for dir in /bin /usr/bin; do
    [ -e "$root$dir/$tool" ] || ln -s "$path" "$root$dir/$tool"
  done
done

mkdir -p "$root/etc" "$root/tmp" "$root/proc" "$root/sys" "$root/dev"
chmod 1777 "$root/tmp"
printf 'root:x:0:0:root:/root:/bin/bash\nsandbox:x:1000:1000:sandbox:/tmp:/bin/bash\n' >"$root/etc/passwd"
printf 'root:x:0:\nsandbox:x:1000:\n' >"$root/etc/group"

tar -C "$root" -c . | docker import -c 'ENV PATH=/usr/local/bin:/usr/bin:/bin' - "$image" >/dev/null
echo "built $image"
