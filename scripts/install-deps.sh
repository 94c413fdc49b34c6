#!/usr/bin/env bash
# Installs the system packages coord needs, or names them when it cannot.
#   main: chromium (the browser grid's workers)
#   test: redis-server, redis-tools, chromium, chromium-driver, ffmpeg (tests use real ones; ffmpeg encodes and checks screen recordings)
set -euo pipefail
what="${1:-test}"
case "$what" in
  main) need=(chromium) ;;
  test) need=(redis-server redis-tools chromium chromium-driver ffmpeg) ;;
  *) echo "usage: $0 main|test" >&2; exit 2 ;;
esac

declare -A binary=([redis-server]=redis-server [redis-tools]=redis-cli [chromium]=chromium [chromium-driver]=chromedriver [ffmpeg]=ffmpeg)
missing=()
for pkg in "${need[@]}"; do
  command -v "${binary[$pkg]}" >/dev/null 2>&1 || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${missing[*]} with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "coord needs these system packages: ${missing[*]} (Debian/Ubuntu: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
