#!/usr/bin/env bash
# Formats the tree's C sources with .clang-format (clang-format 14), then puts the continuation
# lines of trailing block comments back under their first line (clang-format moves the first
# line and leaves the rest: scripts/format_trailing.py). --check: changes nothing, lists the
# files that are not formatted and exits 1 when there is one (the unit test `format`).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.c' '*.h')
else  # a source tarball: the same folders
  mapfile -t files < <(find bench cli examples include multidns multihttp policy scheduler shim tests \
                         -name '*.[ch]' | sort)
fi
if [ "${1:-}" != --check ]; then
  clang-format -i "${files[@]}"
  /usr/bin/python3 scripts/format_trailing.py "${files[@]}"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
for f in "${files[@]}"; do
  mkdir -p "$tmp/$(dirname "$f")"
  clang-format "$f" >"$tmp/$f"
done
(cd "$tmp" && /usr/bin/python3 "$top/scripts/format_trailing.py" "${files[@]}")
for f in "${files[@]}"; do
  cmp -s "$f" "$tmp/$f" || { echo "not formatted: $f (scripts/format.sh)"; bad=1; }
done
[ $bad = 0 ] && echo "format: ${#files[@]} files formatted with .clang-format"
exit $bad
