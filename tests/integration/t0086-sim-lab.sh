#!/bin/sh
# The simulated lab end to end (tests/sim/, docs/scale.md): the real
# daemon's scheduler, store and API, with boot method and transport sim
# linked in (build/tlblabd-sim), on 4 machines and 1 builder. Six A/B jobs
# of 2 boots a side go through build, boot and run, the agent's recorded
# run replayed, and each ends done with a verdict and its runs; no machine
# was leased by two jobs' stages at once (from the stages' times: a boot
# and its run hold the machine from the boot's start to the run's end).
# The production tlblabd refuses the same lab: it does not carry sim.
# Stage times are the real ones scaled by 0.01 (fractions of a second).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
trap 'daemon_cleanup; rm -rf "$TMP"' EXIT
daemon_test 14000
. "$TOP/tests/sim/sim.sh"
TLBLAB_SIM_LOG=$TMP/sim.log
export TLBLAB_SIM_LOG

sim_lab_yaml "$TMP/data" 4 1 "tokens: [$TOKEN]" "workers: 8" >"$TMP/lab.yaml"

if out=$("$BUILD/tlblabd" -n -c "$TMP/lab.yaml" 2>&1); then
	fail "tlblabd (production) refuses boot and transport sim" "it took the lab: $out"
else
	case $out in
	*"boot: must be "*"transport: must be "*)
		pass "tlblabd (production) refuses boot and transport sim: they are the tests' daemon's only" ;;
	*) fail "tlblabd (production) refuses boot and transport sim" "another error: $out" ;;
	esac
fi

daemon_start "$TMP/lab.yaml" || { fail "tlblabd-sim starts on the simulated lab" "see log"; exit 0; }
pass "tlblabd-sim starts on a lab of 4 simulated machines and 1 builder"

ids=
for n in 1 2 3 4 5 6; do
	id=$(api POST /jobs "$(sim_ab_body "$n" "boots: 2")" "$TOKEN" | jq_py 'J["job"]["id"]')
	ids="$ids $id"
done
t0=$(date +%s)
left=
for id in $ids; do
	st=$(job_wait "$id" "done failed cancelled" 60)
	[ "$st" = done ] || left="$left $id:$st"
done
if [ -z "$left" ]; then
	pass "six A/B jobs end done in $(($(date +%s) - t0)) s"
else
	fail "six A/B jobs end done" "not done:$left; $(tail -n 5 "$DAEMON_LOG")"
fi

for id in $ids; do
	api GET "/jobs/$id" "" >"$TMP/job-$id.json"
	api GET "/jobs/$id/runs" "" >"$TMP/runs-$id.json"
done
# the jobs' verdicts, runs, and the machines' leases from their stages
$PY - "$TMP" $ids >"$TMP/check.out" <<'PYEOF'
import json, sys
tmp, ids = sys.argv[1], sys.argv[2:]
verdicts, runs, leases = [], [], {}
for i in ids:
    job = json.load(open("%s/job-%s.json" % (tmp, i)))["job"]
    verdicts.append(job.get("verdict"))
    runs.append(len(json.load(open("%s/runs-%s.json" % (tmp, i)))["runs"]))
    stages = sorted(job["stages"], key=lambda s: s["seq"])
    for s, nxt in zip(stages, stages[1:]):
        if s["kind"] == "boot" and nxt["kind"] == "run" and s["machine"] == nxt["machine"] and \
                s["started"] is not None and nxt["finished"] is not None:
            leases.setdefault(s["machine"], []).append((s["started"], nxt["finished"], i))
overlaps = 0
for m, ls in leases.items():
    ls.sort()
    for a, b in zip(ls, ls[1:]):
        if b[0] < a[1] and a[2] != b[2]:
            overlaps += 1
# the most leases held at once, over all machines: the check above means
# something only when jobs ran side by side
events = sorted([(a, 1) for ls in leases.values() for a, _, _ in ls] +
                [(b, -1) for ls in leases.values() for _, b, _ in ls], key=lambda e: (e[0], e[1]))
held = most = 0
for _, d in events:
    held += d
    most = max(most, held)
print("verdicts", " ".join(str(v) for v in verdicts))
print("runs", " ".join(str(r) for r in runs))
print("machines", len(leases), "leases", sum(len(l) for l in leases.values()), "overlaps", overlaps,
      "at_once", most)
PYEOF
# six verdicts, each one of the verdict's words
verdicts=$(awk '$1 == "verdicts" { $1 = ""; print }' "$TMP/check.out")
n=$(echo "$verdicts" | tr ' ' '\n' | grep -cxE 'regression|improvement|changed|inconclusive|same|unavailable')
[ "$n" = 6 ] && pass "every job has a verdict:$verdicts" ||
	fail "every job has a verdict" "verdicts:${verdicts:- none} ($(tail -n 2 "$TMP/check.out"))"
# 4 run stages a job, each the recorded run's 8 iterations
runs=$(awk '$1 == "runs" { $1 = ""; print }' "$TMP/check.out")
n=$(echo "$runs" | tr ' ' '\n' | grep -cx 32)
[ "$n" = 6 ] && pass "every job has the replayed runs (32 iterations each)" ||
	fail "every job has the replayed runs (32 iterations each)" "runs:${runs:- none}"
set -- $(awk '$1 == "machines" { print $2, $4, $6, $8 }' "$TMP/check.out")
if [ "${2:-0}" = 24 ] && [ "${3:-1}" = 0 ] && [ "${4:-0}" -ge 2 ]; then
	pass "24 boots on $1 machines, up to $4 at once, none leased by two jobs at once"
else
	fail "24 boots, none leased twice, some side by side" \
		"machines ${1:-?}, leases ${2:-?}, overlaps ${3:-?}, at once ${4:-?}"
fi
# the simulation did the work the stages took (one line per build, boot, run)
n=$(awk '{ n[$3]++ } END { printf "%d %d %d", n["build"] + n["build_cached"], n["boot"], n["run"] }' "$TMP/sim.log")
[ "$n" = "12 24 24" ] && pass "the simulation logged 12 builds, 24 boots and 24 runs" ||
	fail "the simulation logged 12 builds, 24 boots and 24 runs" "it logged $n"
daemon_stop
exit 0
