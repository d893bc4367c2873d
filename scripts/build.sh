#!/usr/bin/env bash
# Configures and builds one build tree: scripts/build.sh debug|release|asan (default release).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kind=${1:-release}
case "$kind" in
  debug) type=Debug ;;
  release) type=Release ;;
  asan) type=Asan ;;
  *) echo "build: unknown build kind '$kind' (debug|release|asan)" >&2; exit 2 ;;
esac
dir="$top/build/$kind"
cmake -S "$top" -B "$dir" -DCMAKE_BUILD_TYPE="$type" >/dev/null
cmake --build "$dir" -j"$(nproc)" -- --no-print-directory
