#!/usr/bin/env bash
# Install Debian's chromium for the browser-viewer test (idempotent).
# Runs `apt-get update` once and `apt-get install -y chromium` only when /usr/bin/chromium is
# missing; needs root (or sudo). Usage: bash tools/install_browser.sh
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  echo "[wbm browser] chromium present: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
  exit 0
fi
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo_cmd=(sudo)
  else
    echo "[wbm browser] error: installing chromium needs root (or sudo)" >&2
    exit 1
  fi
fi
echo "[wbm browser] installing chromium with apt-get"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update
"${sudo_cmd[@]}" apt-get install -y chromium
/usr/bin/chromium --version
