#!/bin/sh
# Long pieces (issue 39): no C function of the tree is over 150 lines, and a
# C file over 800 lines says why in its first lines, with "(Over 800 lines"
# and its reason, so that a file grows long on purpose, not by drift. A
# function is counted from its head (a line at column 0 ending in ")" whose
# next line is "{") to the "}" at column 0 that closes it, as the tree's
# style writes them (docs/design.md, STYLE).
. "$(dirname "$0")/../lib.sh"

cd "$TOP" || exit 1
git ls-files '*.c' '*.h' >"$TMP/files"
[ -s "$TMP/files" ] || { fail "the tree's C files are listed" "git ls-files found none"; exit 0; }
$PY - "$TMP/files" >"$TMP/out" <<'PYEOF'
import re, sys
head = re.compile(r"^[A-Za-z_].*\)\s*$")
nfiles = nfuncs = 0
for path in open(sys.argv[1]).read().split():
    lines = open(path, errors="replace").read().split("\n")
    nfiles += 1
    if len(lines) > 800 and not any("(Over 800 lines" in l for l in lines[:15]):
        print("file %s: %d lines, and its first 15 lines do not say why" % (path, len(lines)))
    start = None
    for i, line in enumerate(lines):
        if start is None and line == "{" and i and head.match(lines[i - 1]):
            start = i - 1
        elif start is not None and line == "}":
            nfuncs += 1
            if i - start + 1 > 150:
                print("function %s:%d: %s is %d lines" % (path, start + 1, lines[start][:60], i - start + 1))
            start = None
print("checked %d files, %d functions" % (nfiles, nfuncs))
PYEOF
tail -n 1 "$TMP/out" | grep -q '^checked [1-9]' ||
	{ fail "the C files are read" "$(tail -n 3 "$TMP/out")"; exit 0; }
long=$(grep -c '^function ' "$TMP/out")
files=$(grep -c '^file ' "$TMP/out")
[ "$long" = 0 ] && pass "no function over 150 lines ($(tail -n 1 "$TMP/out"))" ||
	fail "no function over 150 lines" "$(grep '^function ' "$TMP/out")"
[ "$files" = 0 ] && pass "every file over 800 lines says why in its first lines" ||
	fail "every file over 800 lines says why in its first lines" "$(grep '^file ' "$TMP/out")"
