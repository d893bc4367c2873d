#!/usr/bin/env bash
# Builds the Debian packages libmhttp0, libmhttp-dev, mhttp (and their -dbgsym packages) from a built Release tree with debhelper: packaging/debs.sh BUILD_DIR OUT_DIR (or cmake --build BUILD_DIR --target deb).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: debs.sh BUILD_DIR OUT_DIR}" && pwd)
out=${2:?usage: debs.sh BUILD_DIR OUT_DIR}

# the packages ship what the Release tree built: no sanitizers, optimised, with -g for -dbgsym
type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt")
if [ "$type" != Release ]; then
  echo "debs.sh: $build is a $type tree; the packages come from a Release one (scripts/build.sh release)" >&2
  exit 1
fi
# the version is the project's; debian/changelog must have an entry for it
want=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
have=$(dpkg-parsechangelog -l "$here/debian/changelog" -S Version)
if [ "$want" != "$have" ]; then
  echo "debs.sh: packaging/debian/changelog's last entry is $have, the project is $want: add an entry" >&2
  exit 1
fi

# dpkg-buildpackage writes beside the source directory: a scratch one holding only debian/
work=$(mktemp -d)
[ -n "${MHTTP_DEBS_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
mkdir "$work/libmhttp"
cp -r "$here/debian" "$work/libmhttp/debian"
# the systemd units, system and user, where dh_installsystemd(user) --name=mhttpd look for them
cp "$here/systemd/mhttpd.service" "$work/libmhttp/debian/mhttp.mhttpd.service"
cp "$here/systemd/user/mhttpd.service" "$work/libmhttp/debian/mhttp.mhttpd.user.service"
# -b: binary packages only; -d: the build dependencies were met by the tree's own build
( cd "$work/libmhttp" && MHTTP_BUILD_DIR=$build dpkg-buildpackage -b -d -us -uc ) >"$work/build.log" 2>&1 ||
  { tail -30 "$work/build.log" >&2; echo "debs.sh: dpkg-buildpackage failed" >&2; exit 1; }
mkdir -p "$out"
cp "$work"/*.deb "$out"/
ls "$out"
