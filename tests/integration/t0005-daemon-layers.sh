#!/bin/sh
# The daemon's folders are layers (docs/design.md, "The daemon's folders"):
# a file may include a header of its own folder or of a folder below its
# own, never one above it nor a sibling's on the same layer. The order is
# read from the line of docs/design.md that starts "layers:", so that the
# document and the check cannot disagree; a folder of daemon/ that the line
# does not place fails too. tlblabd.c, at the root, may include any.
. "$(dirname "$0")/../lib.sh"

# violations DAEMON_DIR DESIGN_MD: prints "FILE includes HEADER (FOLDER,
# above or beside FOLDER)" for each include that breaks the order, "FOLDER
# is not placed" for each folder the order leaves out, then "# checked N
# includes of M files"; false when the order cannot be read.
violations() {
	"$PY" - "$1" "$2" <<'PYEOF'
import os, re, sys
daemon, design = sys.argv[1], sys.argv[2]
line = next((l for l in open(design) if l.startswith("layers:")), None)
if line is None:
    print("no line starting 'layers:' in " + design)
    sys.exit(1)
rank = {}
for i, layer in enumerate(line[len("layers:"):].split(">")):
    for folder in layer.split():
        rank[folder] = i
folders = sorted(d for d in os.listdir(daemon) if os.path.isdir(os.path.join(daemon, d)))
where = {}
for d in folders:
    if d not in rank:
        print(d + " is not placed")
    for f in os.listdir(os.path.join(daemon, d)):
        where[f] = d
n = m = 0
for d in folders:
    for f in sorted(os.listdir(os.path.join(daemon, d))):
        if not f.endswith((".c", ".h")):
            continue
        m += 1
        for inc in re.findall(r'^#include "([^"]+)"', open(os.path.join(daemon, d, f)).read(), re.M):
            g = where.get(os.path.basename(inc))
            if g is None:
                continue
            n += 1
            if g != d and (d not in rank or g not in rank or rank[g] <= rank[d]):
                print("%s/%s includes %s (%s, above or beside %s)" % (d, f, inc, g, d))
print("# checked %d includes of %d files" % (n, m))
PYEOF
}

# the check itself can fail: a store file that includes the API's header,
# and a folder the order does not name
mkdir -p "$TMP/d/api" "$TMP/d/store" "$TMP/d/extra"
printf 'layers: api > store\n' >"$TMP/design.md"
printf '#include "store.h"\n' >"$TMP/d/api/api.c"
printf '#include "api.h"\n#include "store_int.h"\n' >"$TMP/d/store/store.c"
: >"$TMP/d/api/api.h"
: >"$TMP/d/store/store.h"
: >"$TMP/d/store/store_int.h"
: >"$TMP/d/extra/x.c"
got=$(violations "$TMP/d" "$TMP/design.md" | grep -v '^#' | tr '\n' '|')
want='extra is not placed|store/store.c includes api.h (api, above or beside store)|'
if [ "$got" = "$want" ]; then
	pass "a lower folder's include of a higher one is found, and a folder left out of the order"
else
	fail "a lower folder's include of a higher one is found, and a folder left out of the order" "got: $got"
fi

if ! violations "$TOP/daemon" "$TOP/docs/design.md" >"$TMP/bad.out"; then
	fail "the order of the daemon's folders in docs/design.md" "$(cat "$TMP/bad.out")"
	exit 0
fi
summary=$(grep '^#' "$TMP/bad.out")
echo "$summary"
bad=0
while read -r what; do
	case $what in '#'*) continue ;; esac
	bad=$((bad + 1))
	fail "$what" "move the helper down, or the file to the folder it belongs to"
done <"$TMP/bad.out"
case $summary in
"# checked 0 includes"*) fail "includes between the daemon's folders" "$summary" ;;
*) [ "$bad" -eq 0 ] && pass "no folder of daemon/ includes one above it (${summary#\# })" ;;
esac

# The binaries' folders are layers too (docs/design.md, "Three binaries"):
# lib/ (its catalog/ included) is every binary's and includes only itself;
# agents/, client/ and daemon/ include themselves and lib/, never each
# other: what the daemon knows of the agent's workloads and monitors, the
# spec parser included, is lib/catalog/'s. tops TOP: prints "FILE includes
# HEADER (FOLDER)" for each include another folder may not make, then
# "# checked N includes".
tops() {
	"$PY" - "$1" <<'PYEOF'
import os, re, sys
top = sys.argv[1]
may = {"lib": {"lib"}, "agents": {"agents", "lib"}, "client": {"client", "lib"},
       "daemon": {"daemon", "lib"}}
where = {}
for root in may:
    for d, _, fs in os.walk(os.path.join(top, root)):
        for f in fs:
            if f.endswith((".c", ".h")):
                where.setdefault(f, set()).add(root)
n = 0
for root in sorted(may):
    for d, _, fs in sorted(os.walk(os.path.join(top, root))):
        for f in sorted(fs):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(d, f)
            for inc in re.findall(r'^#include "([^"]+)"', open(path).read(), re.M):
                owners = where.get(os.path.basename(inc))
                if not owners:
                    continue
                n += 1
                if not owners & may[root]:
                    print("%s includes %s (%s)" % (os.path.relpath(path, top), inc, ", ".join(sorted(owners))))
print("# checked %d includes" % n)
PYEOF
}

# the check can fail: lib/ (its catalog too) reaching into the daemon or
# the agent, the agent into the client, the daemon into the agent
mkdir -p "$TMP/t/lib/catalog" "$TMP/t/daemon/store" "$TMP/t/daemon/config" "$TMP/t/agents/monitors" "$TMP/t/client"
printf '#include "store.h"\n' >"$TMP/t/lib/util.c"
printf '#include "monitor.h"\n#include "util.h"\n' >"$TMP/t/lib/catalog/spec.c"
printf '#include "client.h"\n#include "util.h"\n' >"$TMP/t/agents/agent.c"
printf '#include "spec.h"\n#include "monitors/monitor.h"\n' >"$TMP/t/daemon/config/config_suites.c"
: >"$TMP/t/daemon/store/store.h"
: >"$TMP/t/client/client.h"
: >"$TMP/t/agents/monitors/monitor.h"
: >"$TMP/t/lib/catalog/spec.h"
got=$(tops "$TMP/t" | grep -v '^#' | tr '\n' '|')
want='agents/agent.c includes client.h (client)|daemon/config/config_suites.c includes monitors/monitor.h (agents)|lib/util.c includes store.h (daemon)|lib/catalog/spec.c includes monitor.h (agents)|'
if [ "$got" = "$want" ]; then
	pass "an include of lib/ into the daemon or the agent, of the agent into the client, or of the daemon into the agent is found"
else
	fail "an include of lib/ into the daemon or the agent, of the agent into the client, or of the daemon into the agent is found" "got: $got"
fi
tops "$TOP" >"$TMP/tops.out"
summary=$(grep '^#' "$TMP/tops.out")
if grep -qv '^#' "$TMP/tops.out"; then
	fail "lib/, agents/, client/ and daemon/ include only what their layer may" "$(grep -v '^#' "$TMP/tops.out" | head -n 5 | tr '\n' ' ')"
else
	case $summary in
	"# checked 0 includes") fail "includes between the binaries' folders" "$summary" ;;
	*) pass "lib/, agents/, client/ and daemon/ include only what their layer may (${summary#\# })" ;;
	esac
fi
exit 0
