#!/usr/bin/env bash
# Installs the system packages coord needs, or names them when it cannot.
#   main: chromium (the browser grid's workers)
#   test: redis-server, redis-tools, chromium, chromium-driver, ffmpeg, python3-selenium (tests use real ones; ffmpeg encodes and
#         checks screen recordings; python3-selenium is the Python Selenium client the webdriver tests drive the grid with),
#         webkit2gtk-driver and xvfb (the WebDriver grid's WebKitGTK: WebKitWebDriver and MiniBrowser on an Xvfb display),
#         firefox-esr (the browser grid's Firefox for WebDriver BiDi clients)
#   bench: test's, and openjdk-17-jre-headless (bench/webdriver.mjs runs Selenium Grid 4's jar beside coord)
set -euo pipefail
what="${1:-test}"
case "$what" in
  main) need=(chromium) ;;
  test) need=(redis-server redis-tools chromium chromium-driver ffmpeg python3-selenium webkit2gtk-driver xvfb firefox-esr) ;;
  bench) need=(redis-server redis-tools chromium chromium-driver ffmpeg python3-selenium webkit2gtk-driver xvfb firefox-esr openjdk-17-jre-headless) ;;
  *) echo "usage: $0 main|test|bench" >&2; exit 2 ;;
esac

declare -A binary=([redis-server]=redis-server [redis-tools]=redis-cli [chromium]=chromium [chromium-driver]=chromedriver [ffmpeg]=ffmpeg [openjdk-17-jre-headless]=java
  [webkit2gtk-driver]=WebKitWebDriver [xvfb]=Xvfb [firefox-esr]=firefox-esr)
# Installed with their recommended packages (fonts, GL and media libraries the browsers draw and play with): the way they were tested.
with_recommends=(webkit2gtk-driver xvfb firefox-esr)
# Whether a package is there: its binary on PATH, or for a Python library, Debian's python3 importing it
# (/usr/bin/python3 explicitly: a pyenv or venv python3 earlier on PATH does not see Debian's packages).
present() {
  case "$1" in
    python3-selenium) /usr/bin/python3 -c 'import selenium' >/dev/null 2>&1 ;;
    *) command -v "${binary[$1]}" >/dev/null 2>&1 ;;
  esac
}
missing=()
for pkg in "${need[@]}"; do
  present "$pkg" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${missing[*]} with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  lean=() full=()
  for pkg in "${missing[@]}"; do
    if [[ " ${with_recommends[*]} " == *" $pkg "* ]]; then full+=("$pkg"); else lean+=("$pkg"); fi
  done
  [ ${#lean[@]} -eq 0 ] || apt-get install -y -qq --no-install-recommends "${lean[@]}" >/dev/null
  [ ${#full[@]} -eq 0 ] || apt-get install -y -qq "${full[@]}" >/dev/null
else
  echo "coord needs these system packages: ${missing[*]} (Debian/Ubuntu: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
