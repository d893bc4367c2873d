"""Puts the continuation lines of trailing block comments under their first line's text.

clang-format 14 (.clang-format) moves the first line of a comment that follows code and leaves
its continuation lines where they were; the tree's rule is that they start under the text of
the first line (its `/*` column + 3). Used by scripts/format.sh on the files it names.
"""
import re
import sys

TRAIL = re.compile(r'^(\s*\S.*?)(/\*(?:(?!\*/).)*)$')  # code, then a comment left open


def continuation_end(lines, i, col):
    """Re-indents the lines after lines[i] up to the comment's end; returns the last index."""
    j = i + 1
    while j < len(lines):
        s = lines[j]
        if not s.strip() or s.lstrip().startswith(('*', '/*', '#')) or len(s) - len(s.lstrip()) < 2:
            return j - 1
        lines[j] = ' ' * col + s.lstrip()
        if '*/' in s:
            return j
        j += 1
    return j - 1


def fix(path):
    lines = open(path).read().split('\n')
    before = list(lines)
    i = 0
    while i < len(lines):
        m = TRAIL.match(lines[i])
        code = m.group(1) if m else ''
        if m and not code.lstrip().startswith(('/*', '*', '//')) and '"' not in m.group(2):
            i = continuation_end(lines, i, len(code) + 3)
        i += 1
    if lines != before:
        open(path, 'w').write('\n'.join(lines))


for p in sys.argv[1:]:
    fix(p)
