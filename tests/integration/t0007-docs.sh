#!/bin/sh
# The docs a newcomer reads (issue 39): README.md is short (at most 150
# lines) and starts with the two commands; every relative link of README.md
# and docs/ (images too) names a file that exists, and a link to a heading
# (FILE.md#anchor) names a heading that FILE has, as GitHub makes its
# anchors; and each file of docs/measured/ is what its command writes: the
# header scripts/measured.sh gives it, then rows of its table's width.
. "$(dirname "$0")/../lib.sh"

n=$(wc -l <"$TOP/README.md")
[ "$n" -le 150 ] && pass "README.md has $n lines (at most 150)" ||
	fail "README.md is at most 150 lines" "it has $n"

# the first lines of its first code block
first=$(awk '/^```/ { if (open) exit; open = 1; next } open { sub(/ *#.*/, ""); print }' "$TOP/README.md" | head -n 2 | tr '\n' ,)
[ "$first" = "make demo,make test," ] && pass "README.md's first commands are make demo and make test" ||
	fail "README.md's first commands are make demo and make test" "its first code block starts: $first"

# links FILE...: each FILE's relative links that name no file, or a heading
# the file they name does not have, one per line
links() {
	$PY - "$TOP" "$@" <<'PYEOF'
import os, re, sys
top = sys.argv[1]

def lines_outside_code(path):
    fence = False
    for line in open(path, encoding="utf-8"):
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if not fence and not line.startswith("    "):
            yield re.sub(r"`[^`]*`", "", line)

def anchors(path):
    # GitHub's: the heading's text, lower case, without punctuation but
    # - and _, spaces as -; a repeated one gets -1, -2, ...
    seen, out = {}, set()
    for line in lines_outside_code(path):
        m = re.match(r"#{1,6} +(.*?) *#* *$", line)
        if not m:
            continue
        a = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
        k = seen.get(a, 0)
        seen[a] = k + 1
        out.add(a if k == 0 else "%s-%d" % (a, k))
    return out

for f in sys.argv[2:]:
    for line in lines_outside_code(f):
        for target in re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", line):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            rel = os.path.relpath(f, top)
            if not os.path.exists(dest):
                print("%s: %s: no such file" % (rel, target))
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                print("%s: %s: no such heading in %s" % (rel, target, os.path.relpath(dest, top)))
PYEOF
}

for f in "$TOP/README.md" "$TOP"/docs/*.md "$TOP"/docs/measured/*.md; do
	[ -f "$f" ] || continue
	name=${f#"$TOP"/}
	links "$f" >"$TMP/links.out" 2>&1
	if [ -s "$TMP/links.out" ]; then
		fail "every relative link of $name names a file and heading that exist" "$(head -n 5 "$TMP/links.out" | tr '\n' ';')"
	else
		pass "every relative link of $name names a file and heading that exist"
	fi
done

# the generated files: the header their command writes, then rows as wide
# as its table
. "$TOP/scripts/measured.sh"
for kind in make-test make-demo make-demo-track bench; do
	f=$TOP/docs/measured/$kind.md
	if ! [ -f "$f" ]; then
		fail "docs/measured/$kind.md is there" "no such file: $(measured_writer "$kind") writes it"
		continue
	fi
	measured_head "$kind" >"$TMP/head.md"
	head -n "$(wc -l <"$TMP/head.md")" "$f" >"$TMP/file-head.md"
	cols=$(tail -n 1 "$TMP/head.md" | awk -F'|' '{ print NF }')
	bad=$(tail -n +"$(($(wc -l <"$TMP/head.md") + 1))" "$f" |
		awk -F'|' -v n="$cols" '{ l = $0; gsub(/\\\|/, "", l); if (split(l, a, "|") != n) print NR ": " substr($0, 1, 60) }')
	if ! cmp -s "$TMP/head.md" "$TMP/file-head.md"; then
		fail "docs/measured/$kind.md starts with the header $(measured_writer "$kind") writes" \
			"$(diff "$TMP/head.md" "$TMP/file-head.md" | head -n 4 | tr '\n' ';')"
	elif [ -n "$bad" ]; then
		fail "docs/measured/$kind.md's rows are as wide as its table" "$(echo "$bad" | head -n 3 | tr '\n' ';')"
	else
		pass "docs/measured/$kind.md is its generator's header and $(($(wc -l <"$f") - $(wc -l <"$TMP/head.md"))) rows"
	fi
done
