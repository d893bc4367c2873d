#!/bin/bash
# Every public function of include/mhttp.h is named on the NAME line (what mandb indexes) and in the SYNOPSIS of a man/mhttp_*.3 page, no page names a function the header lacks, each page formats without a groff or mandoc warning, and packaging/debian/libmhttp0.symbols lists every function.
src=${1:?usage: test_man_api.sh SOURCE_DIR}
fail=0
bad() { echo "FAIL: $*"; fail=1; }

funcs=$(sed -n 's/^MHTTP_API .*[ *]\(mhttp_[a-z0-9_]*\)(.*/\1/p' "$src/include/mhttp.h" | sort -u)
nfuncs=$(wc -w <<<"$funcs")
[ "$nfuncs" -ge 20 ] || { echo "FAIL: only $nfuncs MHTTP_API functions found in mhttp.h"; exit 1; }

# name -> page, from each page's NAME line ("a, b, c \- what they do")
declare -A page_of
for f in "$src"/man/mhttp_*.3; do
  line=$(sed -n '/^\.SH NAME/{n;p;q}' "$f")
  case $line in *' \- '*) ;; *) bad "$f: no 'names \\- description' line after .SH NAME"; continue ;; esac
  for n in $(sed 's/ \\- .*//; s/,/ /g' <<<"$line"); do
    page_of[$n]=$f
    synopsis=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$f")
    grep -q "[ *]$n(" <<<"$synopsis" || bad "$f: $n is on its NAME line but not in its SYNOPSIS"
    grep -qx "$n" <<<"$funcs" || bad "$f names $n, which mhttp.h does not declare"
  done
  w=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$f" 2>&1) && [ -z "$w" ] || bad "groff: $f: $w"
  w=$(mandoc -T lint -W warning "$f" 2>&1) && [ -z "$w" ] || bad "mandoc: $w"
done
for n in $funcs; do
  [ -n "${page_of[$n]:-}" ] || bad "$n (mhttp.h) has no man page: add it to a man/mhttp_*.3 NAME line and SYNOPSIS"
  grep -q "^ $n@Base " "$src/packaging/debian/libmhttp0.symbols" ||
    bad "$n (mhttp.h) is not in packaging/debian/libmhttp0.symbols: add ' $n@Base VERSION' (the version that adds it)"
done
echo "$nfuncs functions of mhttp.h, ${#page_of[@]} names on $(ls "$src"/man/mhttp_*.3 | wc -l) pages"
exit "$fail"
