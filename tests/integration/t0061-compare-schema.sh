#!/bin/sh
# daemon/compare's output against schemas/comparison.schema.json (JSON
# Schema 2020-12, python3-jsonschema): a small driver runs compare_sides on
# synthetic A/B documents shaped like the API's runs, metrics and profiles
# (a thread sweep, TLB counters, per-CPU counters, a failed run, an
# unavailable counter, a side with fewer boots).
. "$(dirname "$0")/../lib.sh"

build_tool "the compare driver" "$TMP/driver" tests/tools/compare-cli.c $(cd "$TOP" && echo daemon/analysis/compare*.c daemon/analysis/class_*.c) \
	daemon/analysis/verdict.c daemon/analysis/stats.c daemon/analysis/stats_bm.c lib/jsonget.c lib/strbuf.c lib/util.c \
	-iquote lib/catalog lib/catalog/workload_catalog.c -ljansson -lm || exit 1
py_has jsonschema jsonschema python3-jsonschema || exit 1

# two inputs: one A/B job (a single document, side filters) and two jobs
$PY - "$TMP" <<'PYEOF' || fail "the checks of line 14 ran to their end" "python exited $?"
import json, random, sys
tmp = sys.argv[1]
rnd = random.Random(61)
rid = [0]

def doc():
    return {"runs": [], "metrics": [], "profiles": [], "provenance": {"kernel": "6.1.0"}}

def side(d, name, boots, scale, tlb, fail_one=False):
    for b in range(boots):
        for case, w in enumerate((1, 2, 4)):
            for it in range(3):
                rid[0] += 1
                r = {"id": rid[0], "stage": 100 + b, "machine": "m1", "side": name, "spec": 0,
                     "case": case, "iteration": it, "warmup": it == 0, "workload": "mprotect",
                     "params": {"mode": "threads", "workers": w}, "duration_s": 2.0,
                     "build_id": name + "-1", "boot_id": "%s-%d" % (name, b)}
                if fail_one and b == 0 and case == 0 and it == 2:
                    r["error"] = "workload: killed by SIGKILL"
                d["runs"].append(r)
                n = lambda x: x * (1 + rnd.gauss(0, 0.01))
                ms = [("mprotect.ops_per_sec", n(1e5 * w * scale), "ops/s", "higher"),
                      ("tlb.shootdowns_per_kop", n(tlb), "shootdowns/kop", "lower"),
                      ("interrupts.TLB.per_sec", n(tlb * 100 * w), "count/s", "lower"),
                      ("interrupts.TLB.peak_per_sec", n(tlb * 150 * w), "count/s", "lower"),
                      ("interrupts.TLB.cpu0", n(tlb * 50), "count", "lower"),
                      ("procstat.busy_pct", n(90), "%", "neutral")]
                if name == "base":
                    ms.append(("vmstat.nr_tlb_remote_flush", n(1000), "count", "lower"))
                for m, v, u, dr in ms:
                    d["metrics"].append({"run": rid[0], "name": m, "value": v, "unit": u, "direction": dr})
                if it == 1:
                    d["profiles"].append({"run": rid[0], "profile": {"symbols": [
                        {"symbol": "flush_tlb_func", "self": 20 * scale, "children": 25, "kernel": True},
                        {"symbol": "do_mprotect_pkey", "self": 5, "children": 30, "kernel": True}]}})

ab = doc()
side(ab, "base", 8, 1.0, 10)
side(ab, "patched", 8, 0.9, 1, fail_one=True)
json.dump({"base": ab, "patched": ab, "base_side": "base", "patched_side": "patched"},
          open(tmp + "/ab.json", "w"))
a, b = doc(), doc()
side(a, "base", 5, 1.0, 10)
side(b, "patched", 3, 1.0, 10)
b["unavailable"] = {"vmstat.nr_tlb_remote_flush": "vmstat lacks nr_tlb_* (DEBUG_TLBFLUSH is off)"}
b["failed"] = [{"stage": 7, "class": "boot", "reason": "boot 4: kernel panic"}]
json.dump({"base": a, "patched": b}, open(tmp + "/two.json", "w"))
PYEOF

for f in ab two; do
	if "$TMP/driver" <"$TMP/$f.json" >"$TMP/$f.out" 2>"$TMP/$f.err"; then
		pass "compare_sides on the $f input"
	else
		fail "compare_sides on the $f input" "$(tail -n 5 "$TMP/$f.err")"
	fi
done

# validate FILE: every line is a valid comparison
validate() {
	$PY - "$TOP/schemas/comparison.schema.json" "$1" <<'PYEOF'
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
Draft202012Validator.check_schema(schema)
v = Draft202012Validator(schema)
bad = 0
for line in open(sys.argv[2]):
    for e in v.iter_errors(json.loads(line)):
        print("%s: %s" % ("/".join(map(str, e.absolute_path)), e.message[:200]))
        bad += 1
sys.exit(1 if bad else 0)
PYEOF
}
# pj FILE EXPR: pyjson with EXPR free to span lines
pj() { pyjson "$1" "($2)"; }

check "the schema is valid 2020-12 and the A/B comparison follows it" validate "$TMP/ab.out"
check "the comparison of two jobs (fewer boots, unavailable, failed) follows it" validate "$TMP/two.out"

check "A/B (8 boots a side): the 10% drop is a regression at every thread count, sweep in workers order" \
	pj "$TMP/ab.out" '[r["workers"] for r in L[0]["sweeps"][0]["rows"]] == [1, 2, 4] and
	 all(r["verdict"] == "regression" for r in L[0]["sweeps"][0]["rows"]) and
	 len(L[0]["summary"]["regressions"]) == 3 and "regression" in L[0]["summary"]["text"]'
check "A/B: shootdowns/kop and the TLB interrupt rate sit beside each headline case" \
	pj "$TMP/ab.out" 'len(L[0]["tlb"]) == 3 and
	 all(t["shootdowns_per_kop"]["verdict"] == "improvement" for t in L[0]["tlb"]) and
	 L[0]["tlb"][0]["counters"][0]["name"] == "interrupts.TLB"'
check "A/B: per-CPU metrics are not rows; the neutral busy_pct is never a regression" \
	pj "$TMP/ab.out" 'not [r for r in L[0]["rows"] if ".cpu" in r["metric"]] and
	 L[0]["per_cpu_excluded"] == ["interrupts.TLB.cpu0"] and
	 all(r["verdict"] not in ("regression", "improvement") for r in L[0]["rows"]
	     if r["metric"] == "procstat.busy_pct")'
check "A/B: the failed run is reported and its boot still counts from the others" \
	pj "$TMP/ab.out" 'L[0]["failed"][0]["side"] == "patched" and "SIGKILL" in L[0]["failed"][0]["reason"]
	 and L[0]["provenance"]["boots"] == {"base": 8, "patched": 8}'
check "A/B: the profile diff puts flush_tlb_func first" \
	pj "$TMP/ab.out" 'L[0]["profile_diff"]["symbols"][0]["symbol"] == "flush_tlb_func" and
	 abs(L[0]["profile_diff"]["symbols"][0]["delta"] + 2) < 1e-9'
check "two jobs: 5 vs 3 boots is noted, no rank-tested row can be significant, context rows are not tested" \
	pj "$TMP/two.out" 'any("base has 5 boots, patched 3" in n for n in L[0]["notes"]) and
	 all(r["verdict"] in ("same", "inconclusive", "unavailable", "context") for r in L[0]["rows"]
	     if r.get("p_method") != "welch") and
	 all((r["verdict"] == "context") == (r["class"] == "context") for r in L[0]["rows"]
	     if r["verdict"] != "unavailable") and
	 all(r["p"] is None for r in L[0]["rows"] if r["class"] == "context")'
check "two jobs: a counter the patched kernel lacks is unavailable, with the reason" \
	pj "$TMP/two.out" '[r["reason"] for r in L[0]["rows"] if r["metric"] == "vmstat.nr_tlb_remote_flush"]
	 == 3 * ["unavailable on patched: vmstat lacks nr_tlb_* (DEBUG_TLBFLUSH is off)"] and
	 L[0]["failed"][0]["reason"] == "boot 4: kernel panic"'

# the classes come from their files (daemon/analysis/class_*.c): the rules
# list each, and every row's class is one of them; docs/statistics.md's
# table of classes is the one the registry prints
check "the rules list the classes with their legends, a tested one with its margins and their keys" \
	pj "$TMP/ab.out" '[c["name"] for c in L[0]["rules"]["classes"]] == ["work", "wait", "time", "context"] and
	 all(c["legend"] and (c["margins"] is None) == (not c["tested"]) for c in L[0]["rules"]["classes"]) and
	 L[0]["rules"]["classes"][0]["margins"]["keys"]["min_change"] == "min_change_work" and
	 L[0]["rules"]["classes"][0]["margins"]["min_change"] == L[0]["rules"]["min_change_work"] and
	 {r["class"] for r in L[0]["rows"]} <= {c["name"] for c in L[0]["rules"]["classes"]}'
"$TMP/driver" --classes >"$TMP/classes.md"
sed -n '/^<!-- classes:/,/^<!-- \/classes -->/p' "$TOP/docs/statistics.md" | sed '1d;$d' >"$TMP/doc-classes.md"
if [ -s "$TMP/classes.md" ] && cmp -s "$TMP/classes.md" "$TMP/doc-classes.md"; then
	pass "docs/statistics.md's table of classes is the one the class files register"
else
	fail "docs/statistics.md's table of classes is the one the class files register" \
		"$(diff "$TMP/doc-classes.md" "$TMP/classes.md" | head -n 6 | tr '\n' '|')"
fi
