#!/usr/bin/env bash
# Installs the Debian packages listed in scripts/packages.txt that are not installed yet (idempotent).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mapfile -t want < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/packages.txt")
missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#want[@]} packages present"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "setup: missing packages (${missing[*]}); run as root to install them" >&2
  exit 1
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# policy-rc.d keeps nginx's package scripts from starting a system-wide server on port 80;
# the testbed starts its own nginx instances inside namespaces.
prc=/usr/sbin/policy-rc.d
added_prc=0
if [ ! -e "$prc" ]; then printf '#!/bin/sh\nexit 101\n' > "$prc"; chmod +x "$prc"; added_prc=1; fi
trap '[ $added_prc -eq 1 ] && rm -f "$prc"' EXIT
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
