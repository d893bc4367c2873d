#!/bin/bash
# The fault matrix, part 2 (demo): validators, replicas, connection habits, credentials, redirects, a 1 TiB claim, POSTs and cut links; curl, wget and python http.client without and with the shim.
# Rows and verdicts: faults_lib.sh; the faults: bench/testbed/README.md ("The fault matrix");
# the table of outcomes: tests/README.md. One row by hand: FAULT_ROWS=cdn-slow bash THIS.
source "$(dirname "$0")/lib.sh"
mh_in_testbed demo
source "$HERE/faults_lib.sh"

U=http://fault.test/$FX_F
# -- validators and replicas
fx_row weak "$U?f=weak"
fx_row changing-nv "$U?f=changing-nv" clients="curl wget" kind=version plain=any
fx_row cdn-longer "http://cdn-longer.test/$FX_F" stats=longer.test
fx_row cdn-slow "http://cdn-slow.test/$FX_F" stats=trickle.test

# -- connection habits (python: the second object on the same, or a re-opened, connection)
for f in close http10 kalimit kareset close206 nopipe; do
  fx_row "$f" "$U?f=$f"
done

# -- credentials: the engine's extra ranges must carry the program's headers
fx_row auth-basic "$U?f=auth-basic" auth=1 curl="-u user:pass" wget="--user=user --password=pass" \
  py="-u user:pass"
fx_row auth-cookie "$U?f=auth-cookie" auth=1 curl="-b fault=yes" wget="--header=Cookie:fault=yes" py="-H Cookie:fault=yes"

# -- redirects (same name, another name)
fx_row redir301 "$U?f=redir301" clients="curl wget" curl=-L
fx_row redir302x "$U?f=redir302x" clients="curl wget" curl=-L

# -- Content-Length 1 TiB, FIN after the file's 4 MiB: every run fails; the shim the same way
fx_row huge "http://fault.test/files/4194304.bin?f=huge" clients="curl wget" expect=none plain=any

# -- POST is never duplicated (the answer is the file; post-reset: RST after 64 KiB)
fx_row post "$U" clients="curl wget" curl="--data-binary @$WORK/post.bin" wget="--post-file=$WORK/post.bin" post=1
fx_row post-reset "$U?f=post-reset" clients="curl wget" curl="--data-binary @$WORK/post.bin" \
  wget="--post-file=$WORK/post.bin" post=1 expect=none plain=any

# -- lte0 (not the program's path) cut at the start, in the middle and at the tail of 4 MiB
for w in start middle tail; do
  fx_row "cut-$w" "http://a.test/files/4194304.bin" clients="curl wget" cut=$w stats= \
    expect="$TESTBED_FILES_DIR/files/4194304.bin"
done
fx_finish
