#!/bin/sh
# (Over 800 lines on purpose: every client command against one daemon and
# one seeded store; split, each part would start and seed its own.)
#
# The command-line client, every command, against a real tlblabd: its store
# seeded with finished jobs (tests/web/seed.py client: an A/B job with
# regressions, one whose patched build failed, one whose patched kernel
# panicked, one that failed with a spec failing on patched), and new jobs
# submitted here that really run: a suite of short mprotect runs on a local
# machine, a suite whose second spec fails, one that holds the machine until
# it is cancelled. A/B submissions go to a builder that cannot be reached
# (an SSH port nobody listens on), so they fail fast as the lab's problem.
# What is checked is what a user sees (output, exit status) and, through
# the daemon's own answers, that what the client printed or sent is what
# the daemon has: `tlblab report` prints GET .../report.txt byte for byte,
# and jobs carry their patch's subject.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
trap 'daemon_cleanup; [ -n "${WWW_PID:-}" ] && kill "$WWW_PID" 2>/dev/null; rm -rf "$TMP"' EXIT

TLBLAB=$BUILD/tlblab
CHECK="$PY $TOP/tests/tools/client-check.py"
if [ ! -x "$TLBLAB" ] || [ ! -x "$BUILD/tlblabd" ]; then
	fail "tlblab and tlblabd are built" "no $TLBLAB or $BUILD/tlblabd (make)"
	exit 0
fi

daemon_test 17000
OTHER=t0020-other-0123456789abcdef
ADMIN=t0020-admin-0123456789abcdef
DB=$TMP/data/tlblab.db
# a port nobody listens on: the unreachable builder and server
DEAD=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
TLBLAB_SERVER=$URL
TLBLAB_TOKEN=$TOKEN
USER=alice
export TLBLAB_SERVER TLBLAB_TOKEN USER

{
	# OTHER's and ADMIN's only where they are named; the URLs of --url
	# jobs are served, or refused, on loopback
	lab_yaml "$TMP/data" "tokens: [$TOKEN, $OTHER]" "admin_tokens: [$ADMIN]" "max_body: 16777216" \
		"fetch_allow: [127.0.0.0/8]"
	echo machines:
	lab_yaml_machine_dirs m1 "tags: [local, small]"
	lab_yaml_machine_dirs m2 "tags: [spare]"
	lab_yaml_builder_unreachable "$DEAD"
	echo suites:
	# 2 cases x (a warm-up and 2 iterations) x 0.3 s: longer than the
	# client's 1 s between polls, so submit --wait sees the stage running
	lab_yaml_mprotect_suite tlb "" "mode: [threads, processes]" "workers: 2" "duration: 0.3" "iterations: 2"
	cat <<EOC
  - name: broken
    workloads:
      - workload: mprotect
        workers: 2
        duration: 0.2
        iterations: 1
      - workload: exec
        command: ["false"]
        parser: none
        iterations: 1
        warmup: 0
EOC
	lab_yaml_hold_suite	# holds m1 until cancelled
	# the seed gives it points, a series and an alert; due once a year
	printf 'tracks:\n  - {name: nightly, tree: linux, branch: master, schedule: "0 3 1 1 *", suite: tlb, machines: [m1]}\n'
} >"$TMP/lab.yaml"

# the daemon makes the store, the seed fills it, the daemon serves it
daemon_seed "$TMP/lab.yaml" $PY "$TOP/tests/web/seed.py" "$DB" client
daemon_start "$TMP/lab.yaml" || { fail "tlblabd serves the seeded store" "see log"; exit 0; }
pass "tlblabd serves a store seeded with jobs 1 to 4"

# in_order FILE LINE...: each LINE occurs in FILE as a whole line, in order
in_order() {
	$PY - "$@" <<'PYEOF'
import sys
lines = open(sys.argv[1]).read().splitlines()
at = 0
for want in sys.argv[2:]:
    try:
        at = lines.index(want, at) + 1
    except ValueError:
        print("missing, or out of order: %r" % want)
        sys.exit(1)
PYEOF
}
# status_has NAME JOB LINE...: `tlblab status JOB` exits 0 and prints each
# LINE, an extended regular expression for a whole line (grep -Ex)
status_has() {
	_sh_name=$1 _sh_out=$TMP/status-$2.out
	"$TLBLAB" status "$2" >"$_sh_out" 2>&1
	_sh_st=$?
	shift 2
	_sh_missing=
	for _sh_line; do
		grep -Eqx -- "$_sh_line" "$_sh_out" || { _sh_missing=$_sh_line; break; }
	done
	if [ "$_sh_st" = 0 ] && [ -z "$_sh_missing" ]; then
		pass "$_sh_name"
	else
		fail "$_sh_name" "exit $_sh_st${_sh_missing:+, no line /$_sh_missing/}"
		sed 's/^/#   /' "$_sh_out"
	fi
}
# wait_failed NAME STATUS OUT JOB LINE...: a `submit --wait` that exited
# STATUS, printed OUT and named JOB failed as it should: exit 1, a job, each
# LINE whole and in order, the last one last, and no results
wait_failed() {
	_wf_name=$1 _wf_st=$2 _wf_out=$3 _wf_job=$4
	shift 4
	for _wf_last; do :; done
	if [ "$_wf_st" = 1 ] && [ -n "$_wf_job" ] && in_order "$_wf_out" "$@" >"$TMP/order" &&
		[ "$(tail -n 1 "$_wf_out")" = "$_wf_last" ] && ! grep -q 'measured' "$_wf_out"; then
		pass "$_wf_name"
	else
		fail "$_wf_name" "exit $_wf_st, $(cat "$TMP/order" 2>/dev/null)"
		sed 's/^/#   /' "$_wf_out"
	fi
}
# same_json A B: the two files hold equal JSON
same_json() {
	$PY -c 'import json, sys; sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' "$1" "$2"
}
# daemon_get PATH: the daemon's own answer to GET /api/v1PATH, into $TMP/daemon.json
daemon_get() {	# as the client reads it: with its token, URLs whole
	curl -fs -m 10 -H "Authorization: Bearer $TOKEN" "$URL/api/v1$1" >"$TMP/daemon.json"
}
njobs() {
	curl -fs -m 10 "$URL/api/v1/jobs?limit=1" | jq_py 'J["total"]'
}
job_of() {
	sed -n 's/^job \([0-9]*\) [a-z]*$/\1/p' "$1" | head -n 1
}
# sql 'SELECT ...' ARGS...: the first column of the first row, from the store
sql() {
	$PY - "$DB" "$@" <<'PYEOF'
import sqlite3, sys
row = sqlite3.connect(sys.argv[1]).execute(sys.argv[2], sys.argv[3:]).fetchone()
sys.stdout.write("" if row is None else str(row[0]))
PYEOF
}
# stored_patch_is JOB FILE: the store holds FILE's bytes as the job's patch
stored_patch_is() {
	$PY - "$DB" "$1" "$2" <<'PYEOF'
import sqlite3, sys
row = sqlite3.connect(sys.argv[1]).execute("SELECT patch FROM jobs WHERE id = ?", (sys.argv[2],)).fetchone()
sys.exit(row is None or row[0] != open(sys.argv[3], encoding="utf-8").read())
PYEOF
}

# --- submit -------------------------------------------------------------------

# m2 is in maintenance (the seed says so): a job for it fails at once, so
# what reached the daemon can be read back without it running anything
"$TLBLAB" submit --suite tlb --machines m2 --tags spare --submitter bob --boots 2 >"$TMP/sub.out" 2>&1
st=$?
sub=$(job_of "$TMP/sub.out")
if [ $st = 0 ] && [ -n "$sub" ] && grep -Eqx "job $sub (queued|running|failed)" "$TMP/sub.out"; then
	pass "submit prints the job id and its state"
else
	fail "submit prints the job id and its state" "exit $st: $(cat "$TMP/sub.out")"
fi
daemon_get "/jobs/$sub"
check "the daemon has the submitted suite, machines, tags, submitter and boots" pyjson "$TMP/daemon.json" \
	'(L[0]["job"]["suite"] == "tlb" and L[0]["job"]["machines"] == ["m2"] and L[0]["job"]["tags"] == ["spare"]
	 and L[0]["job"]["submitter"] == "bob" and L[0]["job"]["boots"] == 2 and L[0]["job"]["kind"] == "run")'

"$TLBLAB" submit --suite tlb --machines m2 >"$TMP/sub2.out" 2>&1
daemon_get "/jobs/$(job_of "$TMP/sub2.out")"
check "submit defaults the submitter to \$USER, sends no tags and leaves boots to the daemon" \
	pyjson "$TMP/daemon.json" '(L[0]["job"]["submitter"] == "alice" and L[0]["job"]["tags"] == []
	 and L[0]["job"]["boots"] == 1)'

# --- submit --wait -------------------------------------------------------------

"$TLBLAB" submit --suite tlb --machines m1 --wait >"$TMP/wait.out" 2>&1
st=$?
run1=$(job_of "$TMP/wait.out")
if [ $st = 0 ] && [ -n "$run1" ] && in_order "$TMP/wait.out" \
	"job $run1: run on m1: running" "job $run1: run on m1: done" \
	"spec 0, case 0: mprotect on m1" "  params: mode=threads workers=2 duration=0.3" \
	"spec 0, case 1: mprotect on m1" "  params: mode=processes workers=2 duration=0.3" \
	"job $run1: done" >"$TMP/order" && [ "$(tail -n 1 "$TMP/wait.out")" = "job $run1: done" ]; then
	pass "submit --wait follows the job's stage to done, prints its results, exit 0"
else
	fail "submit --wait follows the job's stage to done, prints its results, exit 0" \
		"exit $st, $(cat "$TMP/order" 2>/dev/null)"
	sed 's/^/#   /' "$TMP/wait.out"
fi
if [ "$(grep -c ': running$' "$TMP/wait.out")" = 1 ]; then
	pass "submit --wait prints a stage's state once, not on every poll"
else
	fail "submit --wait prints a stage's state once, not on every poll" \
		"$(grep -c ': running$' "$TMP/wait.out") running lines for 1 stage"
fi
check "submit --wait's results hold 2 measured iterations of ops/s per case" \
	test "$(grep -Ec '^  mprotect\.ops_per_sec +[0-9.]+ +[0-9.]+ +[0-9.]+ +2 +ops/s$' "$TMP/wait.out")" = 2

"$TLBLAB" submit --suite tlb --machines m2 --wait >"$TMP/wfail.out" 2>&1
st=$?
id=$(job_of "$TMP/wfail.out")
why="infra: no healthy machine fits: m2 is maintenance"
wait_failed "submit --wait on a job the lab cannot run shows why, no results, exit 1" "$st" "$TMP/wfail.out" "$id" \
	"job $id: run: failed ($why)" "job $id: failed: $why"

"$TLBLAB" submit --suite broken --machines m1 --wait >"$TMP/wbroken.out" 2>&1
st=$?
broken=$(job_of "$TMP/wbroken.out")
if [ $st = 1 ] && [ -n "$broken" ] && grep -q "^job $broken: run on m1: failed (workload: " "$TMP/wbroken.out" &&
	grep -qx "spec 0, case 0: mprotect on m1" "$TMP/wbroken.out" &&
	tail -n 1 "$TMP/wbroken.out" | grep -Eq "^job $broken: failed: workload: .* \(a result of the kernel or workload under test, not a lab problem\)$"; then
	pass "submit --wait on a suite whose workload fails: the spec that ran, and whose failure it is, exit 1"
else
	fail "submit --wait on a suite whose workload fails: the spec that ran, and whose failure it is, exit 1" "exit $st"
	sed 's/^/#   /' "$TMP/wbroken.out"
fi

# the failed spec gets its own line where the daemon reports spec outcomes
"$TLBLAB" status "$broken" --json >"$TMP/broken.json"
if pyjson "$TMP/broken.json" 'any(s.get("specs") for s in L[0]["job"]["stages"])'; then
	check "submit --wait names the spec that failed, with its class and message" \
		grep -Eq "^job $broken:   spec 1 exec .*: failed \(workload\): .*false" "$TMP/wbroken.out"
else
	check "submit --wait prints no spec lines when the daemon reports no spec outcomes" \
		sh -c '! grep -q "^job [0-9]*:   spec " "$1"' sh "$TMP/wbroken.out"
fi

"$TLBLAB" submit --suite tlb --machines m1 --wait --json >"$TMP/wjson.out" 2>"$TMP/wjson.err"
st=$?
run2=$(sed -n 's/^job \([0-9]*\) [a-z]*$/\1/p' "$TMP/wjson.err" | head -n 1)
daemon_get "/jobs/$run2"
if [ $st = 0 ] && [ -n "$run2" ] && same_json "$TMP/wjson.out" "$TMP/daemon.json" &&
	pyjson "$TMP/wjson.out" 'L[0]["job"]["state"] == "done"' && grep -qx "job $run2: done" "$TMP/wjson.err"; then
	pass "submit --wait --json prints the daemon's finished job, progress on stderr"
else
	fail "submit --wait --json prints the daemon's finished job, progress on stderr" \
		"exit $st: $(head -c 300 "$TMP/wjson.out")"
fi

# --- the machine held, a timeout, cancel -----------------------------------------

"$TLBLAB" submit --suite hold --machines m1 --wait --timeout 2 >"$TMP/hold.out" 2>&1
st=$?
hold=$(job_of "$TMP/hold.out")
if [ $st = 1 ] && [ -n "$hold" ] &&
	grep -Eq "^tlblab: job $hold: still (queued|running) after 2 s; \`tlblab status $hold\` follows it$" "$TMP/hold.out"; then
	pass "submit --wait --timeout gives up on a job that does not finish, exit 1"
else
	fail "submit --wait --timeout gives up on a job that does not finish, exit 1" "exit $st: $(cat "$TMP/hold.out")"
fi
job_wait "$hold" running 30 >/dev/null
"$TLBLAB" machines >"$TMP/machines.out" 2>&1
st=$?
if [ $st = 0 ] &&
	grep -Eqx 'NAME +TRANSPORT +HOST +BOOT +HEALTH +LEASED_BY +KERNEL +TAGS' "$TMP/machines.out" &&
	grep -Eqx "m1 +local +- +none +good +$hold +[^ ]+ +local,small" "$TMP/machines.out" &&
	grep -Eqx 'm2 +local +- +none +maintenance \(disk replaced, waiting for a check\) +- +6\.1\.0-tlblab +spare' "$TMP/machines.out"; then
	pass "machines: transport, boot, health with its reason, the job holding a machine, tags"
else
	fail "machines: transport, boot, health with its reason, the job holding a machine, tags" "exit $st"
	sed 's/^/#   /' "$TMP/machines.out"
fi
"$TLBLAB" machines --json >"$TMP/machines.json"
daemon_get /machines
check "machines --json is the daemon's answer" same_json "$TMP/machines.json" "$TMP/daemon.json"

# m1 is held: the next job waits, and is cancelled at once
"$TLBLAB" submit --suite tlb --machines m1 >"$TMP/q.out" 2>&1
queued=$(job_of "$TMP/q.out")
check_fails "cancel without a token shows the daemon's 401" 1 \
	'^tlblab: HTTP 401 unauthorized: missing or invalid token \(TLBLAB_TOKEN is not set\)$' \
	env -u TLBLAB_TOKEN "$TLBLAB" cancel "$queued"
check_fails "cancel of another token's job shows the daemon's 403, and it stays queued" 1 \
	"^tlblab: HTTP 403 forbidden: job $queued was submitted by another token; cancel needs that token or an admin token\$" \
	env TLBLAB_TOKEN="$OTHER" "$TLBLAB" cancel "$queued"
check "the job of the refused cancel is still queued" test "$(job_wait "$queued" queued 1)" = queued
"$TLBLAB" cancel "$queued" >"$TMP/cancel.out" 2>&1
st=$?
if [ $st = 0 ] && [ "$(cat "$TMP/cancel.out")" = "job $queued: cancelled" ] &&
	[ "$(job_wait "$queued" cancelled 1)" = cancelled ]; then
	pass "cancel of a queued job: cancelled at once"
else
	fail "cancel of a queued job: cancelled at once" "exit $st: $(cat "$TMP/cancel.out")"
fi
"$TLBLAB" cancel "$hold" >"$TMP/cancel.out" 2>&1
st=$?
if [ $st = 0 ] && in_order "$TMP/cancel.out" "job $hold: running, cancel requested" \
	"(its running stage is being stopped; \`tlblab status $hold\` follows it)" >"$TMP/order"; then
	pass "cancel of a running job says the cancel is on its way"
else
	fail "cancel of a running job says the cancel is on its way" "exit $st: $(cat "$TMP/cancel.out")"
fi
check "the cancelled job ends cancelled" test "$(job_wait "$hold" cancelled 30)" = cancelled
check_fails "cancel of a finished job shows the daemon's 409, exit 1" 1 \
	"^tlblab: HTTP 409 conflict: job $hold already finished$" "$TLBLAB" cancel "$hold"
"$TLBLAB" status "$hold" >"$TMP/holds.out" 2>&1
check "status of the cancelled job" grep -qx "job $hold: cancelled (run)" "$TMP/holds.out"

# --- refusals: token, names, options ----------------------------------------------

check_fails "submit without a token shows the daemon's 401 and exits 1" 1 \
	'^tlblab: HTTP 401 unauthorized: missing or invalid token \(TLBLAB_TOKEN is not set\)$' \
	env -u TLBLAB_TOKEN "$TLBLAB" submit --suite tlb --machines m2
check_fails "submit with a wrong token shows the daemon's 401" 1 \
	'^tlblab: HTTP 401 unauthorized: missing or invalid token$' \
	env TLBLAB_TOKEN=wrong-token-wrong-token "$TLBLAB" submit --suite tlb --machines m2
check_fails "a validation error of the daemon is shown as the daemon words it" 1 \
	"^tlblab: HTTP 400 bad_request: suite: no suite 'nosuch' in the configuration$" \
	"$TLBLAB" submit --suite nosuch
name64=$(printf 'm%063d' 1)
check_fails "a 64-character name is sent (and the daemon answers for it)" 1 \
	"^tlblab: HTTP 400 bad_request: machines\\[0\\]: no machine '$name64' in the configuration$" \
	"$TLBLAB" submit --suite tlb --machines "$name64"

# a refusal made before any request exits 2 even with the server down: the
# server is never asked
n0=$(njobs)
check_fails "a machine name with ';' is refused locally, naming the option" 2 \
	"^tlblab: submit: --machines: invalid name 'm1;reboot'" \
	env TLBLAB_SERVER="http://127.0.0.1:$DEAD" "$TLBLAB" submit --suite tlb --machines 'm1;reboot'
for bad in "--suite=../etc" "--suite=-rf" "--tags=a b" "--tags=qemu," "--submitter=.hidden" \
	"--machines=$(printf 'm%064d' 1)" "--boots=0" "--boots=2x" "--max-boots=101" "--suite"; do
	check_fails "submit $bad is refused locally" 2 "^tlblab: submit: " \
		env TLBLAB_SERVER="http://127.0.0.1:$DEAD" "$TLBLAB" submit --suite tlb "$bad"
done
# what a request leaves out the daemon takes from the lab's defaults:, and
# this lab has none: it refuses, naming the field
check_fails "submit without --suite: the daemon refuses, naming the field" 1 \
	"^tlblab: HTTP 400 bad_request: suite: missing \\(the name of a configured suite; the lab's defaults: names none\\)$" \
	"$TLBLAB" submit
check_fails "an unknown option is refused" 2 "unknown option '--frob'" "$TLBLAB" submit --suite tlb --frob
check_fails "--timeout without --wait is refused" 2 "--timeout only makes sense with --wait" \
	"$TLBLAB" submit --suite tlb --timeout 5
check "the refused submissions queued nothing" test "$(njobs)" = "$n0"

# --- A/B submissions: --tree, --base and a patch ------------------------------------

printf 'Subject: [PATCH] x86/mm: flush less\n\nFrom: Ren\303\251e\n---\ndiff --git a/arch/x86/mm/tlb.c b/arch/x86/mm/tlb.c\n--- a/arch/x86/mm/tlb.c\n+++ b/arch/x86/mm/tlb.c\n@@ -1 +1 @@\n-\tint x;\n+\tint y; /* "q" \\ */\n' \
	>"$TMP/fix.patch"
"$TLBLAB" submit --suite tlb --tree linux --base v6.1 --patch "$TMP/fix.patch" --boots 2 --max-boots 4 \
	--machines m1 --tags small --submitter bob >"$TMP/ab.out" 2>&1
st=$?
ab=$(job_of "$TMP/ab.out")
daemon_get "/jobs/$ab"
if [ $st = 0 ] && [ -n "$ab" ] && pyjson "$TMP/daemon.json" '(L[0]["job"]["kind"] == "ab" and
	L[0]["job"]["tree"] == "linux" and L[0]["job"]["base"] == "v6.1" and L[0]["job"]["patch_kind"] == "patch"
	and L[0]["job"]["boots"] == 2 and L[0]["job"]["max_boots"] == 4 and L[0]["job"]["machines"] == ["m1"] and L[0]["job"]["tags"] == ["small"]
	and L[0]["job"]["submitter"] == "bob")' && stored_patch_is "$ab" "$TMP/fix.patch"; then
	pass "submit --patch: an A/B job with tree, base and boots, the file stored as sent (UTF-8, tabs, quotes)"
else
	fail "submit --patch: an A/B job with tree, base and boots, the file stored as sent (UTF-8, tabs, quotes)" \
		"exit $st: $(cat "$TMP/ab.out")"
fi

# options after the branch's two values are still read
"$TLBLAB" submit --suite tlb --tree linux --branch git://git.example.org/linux.git tlb/fix-v2 \
	--base v6.1-rc3 --boots 2 >"$TMP/abb.out" 2>&1
abb=$(job_of "$TMP/abb.out")
"$TLBLAB" status "$abb" >"$TMP/abbs.out" 2>&1
check "submit --branch URL REF: status shows the branch as the job's source, and its base" sh -c '
	grep -Eqx "source +branch git://git\.example\.org/linux\.git tlb/fix-v2" "$1" &&
	grep -Eqx "base +v6\.1-rc3" "$1" && grep -Eq "^job $2: [a-z]+ \(ab\)$" "$1"' sh "$TMP/abbs.out" "$abb"

lore="http://127.0.0.1:$DEAD/all/20240501-tlb-v2-1-abc@example.org/raw"
"$TLBLAB" submit --suite tlb --tree linux --base 1f3a5c7d9e --url "$lore" >"$TMP/abu.out" 2>&1
daemon_get "/jobs/$(job_of "$TMP/abu.out")"
check "submit --url: the daemon has the URL and a hex commit id as base" pyjson "$TMP/daemon.json" \
	'(L[0]["job"]["patch_kind"] == "url" and L[0]["job"]["patch_url"] == "'"$lore"'" and
	 L[0]["job"]["base"] == "1f3a5c7d9e" and L[0]["job"]["patch_ref"] is None)'

$PY -c 'import sys; h = "--- a/x\n+++ b/x\n"; open(sys.argv[1], "w").write(h + "+" * ((4 << 20) - len(h) - 1) + "\n")' \
	"$TMP/4mib.patch"
"$TLBLAB" submit --suite tlb --tree linux --base v6.1 --patch "$TMP/4mib.patch" >"$TMP/ab4.out" 2>&1
check "a patch of exactly 4 MiB is stored whole" \
	test "$(sql 'SELECT length(patch) FROM jobs WHERE id = ?' "$(job_of "$TMP/ab4.out")")" = $((4 << 20))

printf 'this is not a patch\n' >"$TMP/notapatch.txt"
check_fails "a file without a diff is refused by the daemon, as it words it" 1 \
	"^tlblab: HTTP 400 bad_request: patch: no diff in it \\(no '\\+\\+\\+' line\\)$" \
	"$TLBLAB" submit --suite tlb --tree linux --base v6.1 --patch "$TMP/notapatch.txt"
# a series from git format-patch --cover-letter: a cover letter and 3 patches
mail() { # ID SUBJECT BODY
	printf 'From %s Mon Sep 17 00:00:00 2001\nFrom: Ren\303\251e <r@example.org>\nSubject: %s\n\n%s\n-- \n2.39.5\n\n' "$@"
}
hunk() { printf -- '---\ndiff --git a/mm/%s.c b/mm/%s.c\n--- a/mm/%s.c\n+++ b/mm/%s.c\n@@ -1 +1 @@\n-a\n+b\n' "$1" "$1" "$1" "$1"; }
{
	mail 0000000000000000000000000000000000000000 "[PATCH 0/3] mm: batch TLB flushes" "Why: fewer IPIs."
	mail 1111111111111111111111111111111111111111 "[PATCH 1/3] mm: one" "$(hunk one)"
	mail 2222222222222222222222222222222222222222 "[PATCH 2/3] mm: two" "$(hunk two)"
	mail 3333333333333333333333333333333333333333 "[PATCH 3/3] mm: three" "$(hunk three)"
} >"$TMP/series.mbox"
"$TLBLAB" submit --suite tlb --tree linux --base v6.1 --mbox "$TMP/series.mbox" >"$TMP/series.out" 2>&1
st=$?
daemon_get "/jobs/$(job_of "$TMP/series.out")"
if [ $st = 0 ] && pyjson "$TMP/daemon.json" '(L[0]["job"]["patch_subject"] == "mm: batch TLB flushes" and
	L[0]["job"]["patches"] == {"cover": "mm: batch TLB flushes", "patches": ["mm: one", "mm: two", "mm: three"]})'; then
	pass "submit --mbox: a series with a cover letter is named by it, its patches listed in order"
else
	fail "submit --mbox: a series with a cover letter is named by it, its patches listed in order" \
		"exit $st: $(cat "$TMP/series.out") $(head -c 600 "$TMP/daemon.json")"
fi
"$TLBLAB" status "$(job_of "$TMP/series.out")" >"$TMP/series-status.out" 2>&1
check "status lists the series: the cover letter, then each patch" in_order "$TMP/series-status.out" \
	"series     3 patches, after a cover letter" "  1/3      mm: one" "  2/3      mm: two" "  3/3      mm: three"
# per patch: a job per prefix of the series, each named by its patch
"$TLBLAB" submit --suite tlb --tree linux --base v6.1 --mbox "$TMP/series.mbox" --per-patch >"$TMP/pp.out" 2>&1
st=$?
check "submit --per-patch queues a job per prefix and lists them" $PY -c 'import sys; sys.exit(not (
	"a per-patch series: 3 A/B jobs, patches 1..k against the base (the last one is the whole series)\n  job " in open(sys.argv[1]).read() and
	[l.split(": ", 1)[1] for l in open(sys.argv[1]).read().splitlines() if l.startswith("  job ")] ==
	["[1/3] mm: one", "[2/3] mm: two", "[3/3] mm: three"]))' "$TMP/pp.out"
check "submit --per-patch exits 0" test "$st" = 0
pp_last=$(sed -n 's/^  job \([0-9]*\): \[3\/3\].*/\1/p' "$TMP/pp.out")
"$TLBLAB" compare "${pp_last:-0}" --per-patch >"$TMP/pp-compare.out" 2>&1
check "compare --per-patch lists the series' jobs before any is done" grep -q "no rows yet: no job of the series is done" \
	"$TMP/pp-compare.out"
check "compare --per-patch names the series" grep -q "^per-patch series: mm: batch TLB flushes (3 patches; job k applies patches 1..k on the base)$" \
	"$TMP/pp-compare.out"
check_fails "compare --per-patch of a job that is not one of a series says so" 1 \
	"^tlblab: HTTP 409 conflict: job [0-9]* is not one of a per-patch series" \
	"$TLBLAB" compare "$(job_of "$TMP/series.out")" --per-patch
{
	mail 1111111111111111111111111111111111111111 "[PATCH] mm: one" "$(hunk one)"
} >"$TMP/one.mbox"
check_fails "--per-patch of one patch is refused by the daemon" 1 \
	"^tlblab: HTTP 400 bad_request: per_patch: needs an mbox of 2 or more patches \\(this one has 1\\)$" \
	"$TLBLAB" submit --suite tlb --tree linux --base v6.1 --mbox "$TMP/one.mbox" --per-patch
mail 0000000000000000000000000000000000000000 "[PATCH 0/1] mm: words" "only words" >"$TMP/cover.mbox"
check_fails "an mbox of a cover letter alone is refused by the daemon, as it words it" 1 \
	"^tlblab: HTTP 400 bad_request: patch: the mbox holds no patch: its one mail \\('mm: words'\\) has no diff$" \
	"$TLBLAB" submit --suite tlb --tree linux --base v6.1 --mbox "$TMP/cover.mbox"
{
	mail 1111111111111111111111111111111111111111 "[PATCH 1/2] mm: one" "$(hunk one)"
	mail 2222222222222222222222222222222222222222 "[PATCH 2/2] fw: blob" \
		"$(printf -- '---\ndiff --git a/fw.bin b/fw.bin\nGIT binary patch\nliteral 4\nLcmZ?d00001\n')"
} >"$TMP/binary.mbox"
check_fails "a series with a binary patch is refused by the daemon, naming the patch" 1 \
	"^tlblab: HTTP 400 bad_request: patch: patch 2 of 2 \\('fw: blob'\\) is a binary diff" \
	"$TLBLAB" submit --suite tlb --tree linux --base v6.1 --mbox "$TMP/binary.mbox"
check_fails "a patch without --tree, on a lab without defaults:, is refused by the daemon" 1 \
	"^tlblab: HTTP 400 bad_request: tree: missing \\(the kernel tree to build; the lab's defaults: names none\\)$" \
	"$TLBLAB" submit --suite tlb --patch "$TMP/fix.patch"
check_fails "--tree without --base, on a lab without defaults:, is refused by the daemon" 1 \
	"^tlblab: HTTP 400 bad_request: base: missing \\(the ref of tree linux to build; the lab's defaults: names none for it\\)$" \
	"$TLBLAB" submit --suite tlb --tree linux --patch "$TMP/fix.patch"

# refusals: each names its option, and none reaches the server
$PY -c 'import sys; open(sys.argv[1], "w").write("+x\n" * (5 << 19))' "$TMP/5mib.patch"
printf 'diff --git a/x b/x\n\000\001\n' >"$TMP/binary.patch"
printf 'From: Ren\351e\ndiff --git a/x b/x\n' >"$TMP/latin1.patch"
: >"$TMP/empty.patch"
printf 'diff --git a/x b/x\n--- a/x\n+++ b/x\n' >"$TMP/notmail.patch"
$PY -c 'import sys; open(sys.argv[1], "w").write("From: a\n" + "+x\n" * ((10 << 20) // 3))' "$TMP/10mb.mbox"
AB="--suite tlb --tree linux"
n0=$(njobs)
while IFS='|' read -r opt pat args; do
	# shellcheck disable=SC2086
	check_fails "submit $args is refused locally, naming $opt" 2 "^tlblab: submit: .*$pat" \
		env TLBLAB_SERVER="http://127.0.0.1:$DEAD" "$TLBLAB" submit $args
done <<END_OF_CASES
--base|--base: 'a\.\.b' is not a git ref|$AB --base a..b --url https://x.org/p
--base|--base: '-x' is not a git ref|$AB --base -x --url https://x.org/p
--base|--base: 'v6\.1\.lock' is not a git ref|$AB --base v6.1.lock --url https://x.org/p
--base|--base: 'v6\.1/' is not a git ref|$AB --base v6.1/ --url https://x.org/p
--base|--base: 'HEAD@\{1\}' is not a git ref|$AB --base HEAD@{1} --url https://x.org/p
--base|--base: 'v6~1' is not a git ref|$AB --base v6~1 --url https://x.org/p
--branch|--branch: '-x' is not a git ref|$AB --base v6.1 --branch https://x.org/l.git -x
--branch|--branch: 'a\.\.b' is not a git ref|$AB --base v6.1 --branch https://x.org/l.git a..b
--branch|--branch needs two values: URL REF|$AB --base v6.1 --branch https://x.org/l.git
--branch|--branch: 'ssh://x\.org/l\.git' is not an https:// or git:// URL|$AB --base v6.1 --branch ssh://x.org/l.git main
--url|--url: 'file:///etc/passwd' is not an http:// or https:// URL|$AB --base v6.1 --url file:///etc/passwd
--url|--url: 'git://x\.org/p' is not an http:// or https:// URL|$AB --base v6.1 --url git://x.org/p
--url|--url: 'https://x\.org/p"' is not|$AB --base v6.1 --url https://x.org/p"
--url|--url: 'https://x\.org/\\$\(id\)'x' is not|$AB --base v6.1 --url https://x.org/\$(id)'x
--patch|--patch and --url: give only one of --patch, --mbox, --branch and --url|$AB --base v6.1 --patch $TMP/fix.patch --url https://x.org/p
--url|--url and --branch: give only one|$AB --base v6.1 --url https://x.org/p --branch https://x.org/l.git main
--max-boots|--max-boots is for A/B jobs \(with a patch\)|$AB --base v6.1 --max-boots 3
--tree|--tree: invalid name 'a;b'|--suite tlb --tree a;b --base v6.1 --url https://x.org/p
--patch|--patch: '.*/5mib\.patch' is larger than 4 MiB|$AB --base v6.1 --patch $TMP/5mib.patch
--patch|--patch: cannot read '.*/nosuch\.patch': No such file|$AB --base v6.1 --patch $TMP/nosuch.patch
--patch|--patch: '.*' is not a regular file|$AB --base v6.1 --patch $TMP
--patch|--patch: '.*/empty\.patch' is empty|$AB --base v6.1 --patch $TMP/empty.patch
--mbox|--mbox: '.*/empty\.patch' is empty|$AB --base v6.1 --mbox $TMP/empty.patch
--per-patch|--per-patch measures each prefix of a series: it needs --mbox FILE|$AB --base v6.1 --patch $TMP/fix.patch --per-patch
--mbox|--mbox: '.*/notmail\.patch' is not an mbox \(git format-patch and b4 write one|$AB --base v6.1 --mbox $TMP/notmail.patch
--mbox|--mbox: '.*/10mb\.mbox' is larger than 4 MiB|$AB --base v6.1 --mbox $TMP/10mb.mbox
--mbox|--mbox and --patch: give only one of --patch, --mbox, --branch and --url|$AB --base v6.1 --mbox $TMP/fix.patch --patch $TMP/fix.patch
--patch|--patch: '.*/binary\.patch' is not text|$AB --base v6.1 --patch $TMP/binary.patch
--patch|--patch: '.*/latin1\.patch' is not UTF-8 text|$AB --base v6.1 --patch $TMP/latin1.patch
--boots|--boots: '101' is not a number from 1 to 100|$AB --base v6.1 --url https://x.org/p --boots 101
--max-boots|--max-boots is for A/B jobs|--suite tlb --max-boots 9
--max-boots|--max-boots 3 is below --boots 5|$AB --base v6.1 --url https://x.org/p --boots 5 --max-boots 3
END_OF_CASES
long=https://x.org/$($PY -c 'print("a" * 2034)')
# shellcheck disable=SC2086
check_fails "a URL of more than 2048 characters is refused locally" 2 \
	"^tlblab: submit: --url: 'https://x\.org/a+\.\.\.' is not" \
	env TLBLAB_SERVER="http://127.0.0.1:$DEAD" "$TLBLAB" submit $AB --base v6.1 --url "${long}a"
check "the refused A/B submissions queued nothing" test "$(njobs)" = "$n0"
# shellcheck disable=SC2086
"$TLBLAB" submit $AB --base v6.1 --url "$long" >"$TMP/ab2048.out" 2>&1
daemon_get "/jobs/$(job_of "$TMP/ab2048.out")"
check "a URL of 2048 characters is sent whole" pyjson "$TMP/daemon.json" 'len(L[0]["job"]["patch_url"]) == 2048'

# --wait over an A/B job whose builder cannot be reached: the lab's
# failure after its retries, every later stage cancelled in one line
# shellcheck disable=SC2086
"$TLBLAB" submit $AB --base v6.1 --url "$lore" --boots 1 --wait >"$TMP/abw.out" 2>&1
st=$?
abw=$(job_of "$TMP/abw.out")
why="infra: build: cannot reach builder b1: ssh nobody@127.0.0.1:$DEAD: cannot connect: Connection refused"
wait_failed "submit --wait over an A/B job: the build's last attempt, the cancelled rest, a lab failure, exit 1" \
	"$st" "$TMP/abw.out" "$abw" \
	"job $abw: build base on builder b1 (attempt 3): failed ($why)" \
	"job $abw: build patched and 4 more stages: cancelled (an earlier stage did not finish)" \
	"job $abw: failed: $why"

# --- status -------------------------------------------------------------------------

status_has "status: the job and a table of its stages, attempts counted from 1" "$run1" \
	"job $run1: done \\(run\\)" 'suite +tlb' 'machines +m1' 'submitter +alice' \
	'SEQ +KIND +SIDE +MACHINE +STATE +ATTEMPT +STARTED +DURATION +ERROR' \
	' +0 +run +- +m1 +done +1 +[0-9-]+ [0-9:]+ +[0-9]+s +-'

msg="make exited 2: arch/x86/mm/tlb.c:912: 'info_batch' undeclared"
status_has "status of a failed A/B job: tree, base, source, the failed stage by name and seq, whose failure it is" 2 \
	'job 2: failed \(ab\)' 'tree +linux' 'base +v6\.1-debian' 'source +patch' \
	"error      build: $msg \\(build patched, seq 1\\)" ' +a result of the patch, not a lab problem' \
	'SEQ +KIND +SIDE +BOOT +MACHINE +STATE +ATTEMPT +STARTED +DURATION +BUILD +ERROR' \
	" +0 +build +base +- +- +done +1 .* b0{39}2 +-" " +1 +build +patched +- +- +failed +1 .* - +build: $msg"
status_has "status of a job whose patched kernel panicked names the boot" 3 \
	'error      boot: kernel panic at boot: Fatal exception in interrupt \(boot patched #1 on m1, seq 3\)'
status_has "status of a done A/B job: its verdict, boots numbered per side from #1" 1 \
	'verdict +regression' ' +6 +boot +base +#2 +m1 +done +1 .*' ' +21 +run +patched +#5 +m1 +done +1 .*'

# spec outcomes: where the store keeps them, status shows each failed spec
# the daemon reports; a daemon without them gets the view without
"$TLBLAB" status 4 >"$TMP/s4.out" 2>&1
"$TLBLAB" status 4 --json >"$TMP/s4.json"
if [ "$(sql "SELECT count(*) FROM pragma_table_info('stages') WHERE name = 'specs'")" = 1 ]; then
	if pyjson "$TMP/s4.json" 'sum(len(s["specs"]) for s in L[0]["job"]["stages"]) == 10' &&
		grep -Eqx 'specs +10 ran, 2 failed \(over 5 run stages\)' "$TMP/s4.out" &&
		in_order "$TMP/s4.out" "specs of the run stages" \
		"  seq 3 run base #1 on m1: 2 ran (0 mprotect, 1 mremap)" \
		"  seq 5 run patched #1 on m1: 2 ran, 1 failed" \
		"    spec 1 mremap workers=2: failed (workload): agent killed by signal 11 (SIGSEGV) in mremap; console: BUG: unable to handle page fault for address: ffff888000000008" \
		"  seq 11 run patched #3 on m1 (repeats seq 5): 2 ran, 1 failed" >"$TMP/order"; then
		pass "status shows per run stage which specs ran, which failed and why, and the repeated boot"
	else
		fail "status shows per run stage which specs ran, which failed and why, and the repeated boot" \
			"$(cat "$TMP/order" 2>/dev/null)"
		sed 's/^/#   /' "$TMP/s4.out"
	fi
else
	if grep -qx "job 4: failed (ab)" "$TMP/s4.out" && ! grep -q '^specs' "$TMP/s4.out" &&
		grep -qx "error      workload: spec 1 (mremap) failed on patched, again on a repeated boot (run patched #3 on m1, seq 11)" "$TMP/s4.out"; then
		pass "status of a daemon without spec outcomes: the job, its error and stages, no spec lines"
	else
		fail "status of a daemon without spec outcomes: the job, its error and stages, no spec lines" ""
		sed 's/^/#   /' "$TMP/s4.out"
	fi
fi

daemon_get "/jobs/$run1"
"$TLBLAB" status "$run1" --json >"$TMP/status.json"
check "status --json is the daemon's job, stages included" same_json "$TMP/status.json" "$TMP/daemon.json"
check_fails "status of an unknown job shows the daemon's 404 and exits 1" 1 \
	'^tlblab: HTTP 404 not_found: no job 999$' "$TLBLAB" status 999
check_fails "status needs a job id" 2 "which job" "$TLBLAB" status
check_fails "status refuses a job id that is not a number" 2 "'12x' is not a job id" "$TLBLAB" status 12x

# --- jobs ---------------------------------------------------------------------------

"$TLBLAB" jobs --state "done" --suite tlb --submitter alice --limit 5 --offset 0 >"$TMP/jobs.out" 2>&1
st=$?
daemon_get "/jobs?state=done&suite=tlb&submitter=alice&limit=5&offset=0"
want=$(jq_py '" ".join(str(j["id"]) for j in J["jobs"])' <"$TMP/daemon.json")
got=$(awk 'NR > 1 && $1 ~ /^[0-9]+$/ { printf "%s%s", sep, $1; sep = " " }' "$TMP/jobs.out")
if [ $st = 0 ] && grep -Eq '^ID +STATE +SUITE +SUBMITTER +MACHINES +STAGE +CREATED +DURATION +VERDICT +ERROR$' "$TMP/jobs.out" &&
	[ -n "$want" ] && [ "$got" = "$want" ] &&
	[ "$(awk 'NR > 1 && $1 ~ /^[0-9]+$/ && ($2 != "done" || $3 != "tlb" || $4 != "alice")' "$TMP/jobs.out")" = "" ] &&
	grep -Eq '^ +1 +done +tlb +alice +m1 +run .* regression +-$' "$TMP/jobs.out"; then
	pass "jobs lists the jobs the daemon selects for the filters, with their verdicts"
else
	fail "jobs lists the jobs the daemon selects for the filters, with their verdicts" "exit $st, ids '$got', daemon '$want'"
	sed 's/^/#   /' "$TMP/jobs.out"
fi
"$TLBLAB" jobs --submitter bob --json >"$TMP/jobs.json"
daemon_get "/jobs?submitter=bob"
check "jobs --json is the daemon's answer for the same filter" same_json "$TMP/jobs.json" "$TMP/daemon.json"
check "jobs --submitter selects" pyjson "$TMP/jobs.json" \
	'L[0]["total"] >= 3 and all(j["submitter"] == "bob" for j in L[0]["jobs"])'
"$TLBLAB" jobs --limit 2 >"$TMP/jobs2.out"
check "jobs --limit says how to page through the rest" \
	grep -qx "(jobs 1-2 of $(njobs); --offset pages)" "$TMP/jobs2.out"
"$TLBLAB" jobs --verdict regression >"$TMP/jobsv.out" 2>&1
daemon_get "/jobs?verdict=regression"
want=$(jq_py '" ".join(str(j["id"]) for j in J["jobs"])' <"$TMP/daemon.json")
check "jobs --verdict lists the daemon's jobs of that verdict (the seeded regressions: job 1, and job 6 of the per-patch pair)" test \
	"$(awk 'NR > 1 && $1 ~ /^[0-9]+$/ { printf "%s%s", sep, $1; sep = " " }' "$TMP/jobsv.out")" = "$want" -a "$want" = "6 1"
"$TLBLAB" jobs --tree linux --state failed --json >"$TMP/jobst.json"
daemon_get "/jobs?tree=linux&state=failed"
check "jobs --tree is sent as the daemon's tree filter" same_json "$TMP/jobst.json" "$TMP/daemon.json"
check "jobs --tree selects the A/B jobs of that tree" pyjson "$TMP/jobst.json" \
	'(L[0]["total"] >= 3 and all(j["tree"] == "linux" and j["kind"] == "ab" for j in L[0]["jobs"]))'
check_fails "jobs --state refuses an unknown state" 2 "--state: 'finished' is not one of" \
	"$TLBLAB" jobs --state finished
check_fails "jobs --verdict refuses an unknown verdict" 2 \
	"--verdict: 'worse' is not one of regression, improvement, changed, inconclusive, same, unavailable" \
	"$TLBLAB" jobs --verdict worse
check_fails "jobs --limit is bounded" 2 "--limit: '501' is not a number from 1 to 500" \
	"$TLBLAB" jobs --limit 501

# --- results ------------------------------------------------------------------------

for j in 1 "$run1" 4; do
	"$TLBLAB" results "$j" >"$TMP/results.out" 2>&1
	st=$?
	"$TLBLAB" results "$j" --json >"$TMP/results.json"
	if [ $st = 0 ] && $CHECK results "$TMP/results.out" "$TMP/results.json" >"$TMP/why" 2>&1; then
		pass "results $j: median, min, max and n of each metric per block, as the daemon's runs give them"
	else
		fail "results $j: median, min, max and n of each metric per block, as the daemon's runs give them" "exit $st"
		sed 's/^/#   /' "$TMP/why" | head -n 10
	fi
done
"$TLBLAB" results 1 >"$TMP/r1.out"
check "an A/B job's results: base blocks first, then patched, boots pooled" in_order "$TMP/r1.out" \
	"spec 0, case 0: mprotect on m1 (base)" "  params: mode=threads workers=1 size=64K" \
	"spec 0, case 2: mprotect on m1 (base)" "spec 0, case 0: mprotect on m1 (patched)" \
	"spec 0, case 2: mprotect on m1 (patched)"
"$TLBLAB" results "$run1" >"$TMP/rr.out"
"$TLBLAB" results --all "$run1" >"$TMP/rall.out"
"$TLBLAB" results "$run1" --json >"$TMP/rr.json"
if grep -q 'per-CPU metrics hidden; --all shows them' "$TMP/rr.out" && ! grep -q '\.cpu' "$TMP/rr.out" &&
	grep -Eq '^  interrupts\.(TLB|CAL)\.cpu[0-9]+ ' "$TMP/rall.out" &&
	$CHECK results "$TMP/rall.out" "$TMP/rr.json" --all >"$TMP/why" 2>&1; then
	pass "results hides per-CPU metrics and says so; --all shows them"
else
	fail "results hides per-CPU metrics and says so; --all shows them" "$(head -n 5 "$TMP/why")"
fi
daemon_get "/jobs/$run1/runs"
mv "$TMP/daemon.json" "$TMP/runs.json"
daemon_get "/jobs/$run1/metrics"
check "results --json holds the daemon's runs and metrics" $PY -c '
import json, sys
got = json.load(open(sys.argv[1]))
sys.exit(got != {"runs": json.load(open(sys.argv[2]))["runs"], "metrics": json.load(open(sys.argv[3]))["metrics"]})' \
	"$TMP/rr.json" "$TMP/runs.json" "$TMP/daemon.json"
check_fails "results of an unknown job shows the daemon's 404" 1 '^tlblab: HTTP 404 not_found: no job 999$' \
	"$TLBLAB" results 999

# --- compare ------------------------------------------------------------------------

"$TLBLAB" compare 1 >"$TMP/cmp.out" 2>&1
st=$?
"$TLBLAB" compare 1 --json >"$TMP/cmp.json"
if [ $st = 0 ] && head -n 1 "$TMP/cmp.out" | grep -q '^summary: ' &&
	$CHECK compare "$TMP/cmp.out" "$TMP/cmp.json" >"$TMP/why" 2>&1; then
	pass "compare: the daemon's summary, its rows (same rows folded), sweeps, boots and notes"
else
	fail "compare: the daemon's summary, its rows (same rows folded), sweeps, boots and notes" "exit $st"
	sed 's/^/#   /' "$TMP/why" | head -n 10
	sed 's/^/#   /' "$TMP/cmp.out" | head -n 10
fi
"$TLBLAB" compare --all 1 >"$TMP/cmpall.out" 2>&1
check "compare --all shows every row" $CHECK compare "$TMP/cmpall.out" "$TMP/cmp.json" --all
# the seed: ops/s falls 15% at 2 and 4 workers, not at 1
check "compare: the headline regressions, largest first, with p/adjusted p and CI" test "$(grep -E \
	'^  regression +mprotect\.ops_per_sec \(mode=threads workers=[0-9] size=64K\) +-1[0-9]\.[0-9]% +p=[0-9.e-]+/[0-9.e-]+ +CI \[-[0-9.]+, -[0-9.]+\]$' \
	"$TMP/cmp.out" | sed 's/.*(mode=threads \(workers=[0-9]\).*/\1/' | tr '\n' ' ')" = "workers=2 workers=4 "
check "compare: the thread sweep of ops/s" in_order "$TMP/cmp.out" \
	"thread sweep: mprotect.ops_per_sec (mode=threads size=64K), ops/s, higher is better" \
	"  WORKERS       BASE    PATCHED  %CHANGE  VERDICT"
check "compare: the TLB block and the profile diff, flush_tlb_func first" sh -c '
	grep -q "^TLB shootdowns (medians over boots" "$1" &&
	grep -Eq "^  mprotect mode=threads size=64K workers=2 +shootdowns/kop .* regression$" "$1" &&
	grep -A 2 "^profile diff (average self % over 24 base and 24 patched profiles)$" "$1" | tail -n 1 |
		grep -Eq "^  flush_tlb_func +[0-9.]+ +[0-9.]+ +\+[0-9.]+$"' sh "$TMP/cmp.out"
check "compare: provenance names the job and each side's build" in_order "$TMP/cmp.out" "provenance" \
	"  base     job 1: build b00000000000 (6.1.0-tlblab, commit a1b2c3d4e5a1, config cfg-b0000000, gcc (Debian 12.2.0-14) 12.2.0); 8 boots on m1" \
	"  patched  job 1: build p00000000000 (6.1.0-tlblab+, commit f6e5d4c3b2f6, config cfg-p0000000, gcc (Debian 12.2.0-14) 12.2.0); 8 boots on m1"
daemon_get /jobs/1
check "compare ends with the job's verdict, the daemon's" test \
	"$(tail -n 1 "$TMP/cmp.out")" = "verdict: $(jq_py 'J["job"]["verdict"]' <"$TMP/daemon.json")"
check "compare's last line is verdict: regression" test "$(tail -n 1 "$TMP/cmp.out")" = "verdict: regression"
daemon_get /jobs/1/comparison
check "compare --json is the daemon's answer" same_json "$TMP/cmp.json" "$TMP/daemon.json"

# a failed A/B job is compared on what ran on both sides, without a verdict
"$TLBLAB" compare 4 >"$TMP/cmp4.out" 2>&1
st=$?
"$TLBLAB" compare 4 --json >"$TMP/cmp4.json"
if [ $st = 0 ] && in_order "$TMP/cmp4.out" \
	"job 4: failed: workload: spec 1 (mremap) failed on patched, again on a repeated boot (a result of the patch, not a lab problem)" \
	"(the rows compare what ran on both sides before the job ended)" >"$TMP/order" &&
	$CHECK compare "$TMP/cmp4.out" "$TMP/cmp4.json" >"$TMP/why" 2>&1 &&
	grep -Eq '^mprotect +mode=threads workers=2 +mprotect\.ops_per_sec ' "$TMP/cmp4.out" &&
	[ "$(tail -n 1 "$TMP/cmp4.out")" = "verdict: none (the job failed)" ]; then
	pass "compare of a failed A/B job: says so, compares the specs that ran on both sides, no verdict"
else
	fail "compare of a failed A/B job: says so, compares the specs that ran on both sides, no verdict" \
		"exit $st $(cat "$TMP/order" "$TMP/why" 2>/dev/null | head -n 5)"
	sed 's/^/#   /' "$TMP/cmp4.out" | head -n 10
fi
check_fails "compare of an A/B job that failed before anything ran: nothing to compare, exit 1" 1 \
	"^tlblab: job 2: nothing to compare: no spec ran on both sides before the job ended \\(failed: build: make exited 2: .*\\); \`tlblab status 2\` shows its stages$" \
	"$TLBLAB" compare 2
check_fails "compare of a run job: the daemon's 409, and the command for two jobs" 1 \
	"^tlblab: HTTP 409 conflict: job $run1 is not an A/B job; .* \\(two jobs: tlblab compare --base A --patched B\\)$" \
	"$TLBLAB" compare "$run1"

"$TLBLAB" compare --base "$run1" --patched "$run2" >"$TMP/cmp2.out" 2>&1
st=$?
curl -fs -m 10 "$URL/api/v1/compare?base=$run1&patched=$run2" >"$TMP/cmp2.json"
if [ $st = 0 ] && $CHECK compare "$TMP/cmp2.out" "$TMP/cmp2.json" >"$TMP/why" 2>&1 &&
	grep -Eqx "  base     job $run1; 1 boot on m1" "$TMP/cmp2.out" &&
	grep -Eqx "  patched  job $run2; 1 boot on m1" "$TMP/cmp2.out" &&
	[ "$(tail -n 1 "$TMP/cmp2.out")" = "verdict: $(jq_py 'J["comparison"]["verdict"]' <"$TMP/cmp2.json")" ]; then
	pass "compare --base A --patched B: the daemon's comparison of two jobs, each job's provenance, its verdict"
else
	fail "compare --base A --patched B: the daemon's comparison of two jobs, each job's provenance, its verdict" "exit $st"
	sed 's/^/#   /' "$TMP/why" "$TMP/cmp2.out" | head -n 12
fi
check_fails "compare of two jobs of different suites shows the daemon's 409" 1 \
	"^tlblab: HTTP 409 conflict: jobs $run1 and $broken ran different suites \\(tlb, broken\\)$" \
	"$TLBLAB" compare --base "$run1" --patched "$broken"
check_fails "compare of a job the daemon does not know shows the 404" 1 \
	'^tlblab: HTTP 404 not_found: no job 999$' "$TLBLAB" compare --base 1 --patched 999
check_fails "compare --base without --patched is a usage error" 2 "--base and --patched go together" \
	env TLBLAB_SERVER="http://127.0.0.1:$DEAD" "$TLBLAB" compare --base 1
check_fails "compare with both a job and --base/--patched is a usage error" 2 "not both" \
	env TLBLAB_SERVER="http://127.0.0.1:$DEAD" "$TLBLAB" compare --base 1 --patched 2 3
check_fails "compare of a job id that is not a number is a usage error" 2 "'x1' is not a job id" \
	env TLBLAB_SERVER="http://127.0.0.1:$DEAD" "$TLBLAB" compare --base x1 --patched 2

# --- report -------------------------------------------------------------------------

# width REPORT: every line at most 72 characters (not bytes: a subject may be UTF-8)
width_ok() {
	$PY -c 'import sys; L = open(sys.argv[1], encoding="utf-8").read().splitlines()
bad = [l for l in L if len(l) > 72]
print("\n".join("%d: %s" % (len(l), l) for l in bad)); sys.exit(1 if bad or not L else 0)' "$1"
}
"$TLBLAB" report 1 >"$TMP/rep1.out" 2>"$TMP/rep1.err"
st=$?
curl -fs -m 10 -D "$TMP/rep1.head" "$URL/api/v1/jobs/1/report.txt" >"$TMP/rep1.txt"
daemon_get /jobs/1
subject=$(jq_py 'J["job"]["patch_subject"] or ""' <"$TMP/daemon.json")
verdict=$(jq_py 'J["job"]["verdict"] or ""' <"$TMP/daemon.json")
if [ $st = 0 ] && [ -s "$TMP/rep1.txt" ] && cmp -s "$TMP/rep1.out" "$TMP/rep1.txt" && [ ! -s "$TMP/rep1.err" ] &&
	grep -qi '^content-type: text/plain; charset=utf-8' "$TMP/rep1.head"; then
	pass "report: the same text as GET /jobs/ID/report.txt, which is text/plain"
else
	fail "report: the same text as GET /jobs/ID/report.txt, which is text/plain" "exit $st"
	diff "$TMP/rep1.out" "$TMP/rep1.txt" | sed 's/^/#   /' | head -n 10
fi
check "report: every line at most 72 columns" width_ok "$TMP/rep1.out"
if [ -n "$subject" ] && [ -n "$verdict" ] && grep -qx "  patch:     $subject" "$TMP/rep1.out" &&
	grep -q "^  verdict:   $verdict; headline: " "$TMP/rep1.out" &&
	grep -qx "  base:      v6.1-debian of tree linux, commit a1b2c3d4e5a1" "$TMP/rep1.out"; then
	pass "report: the daemon's patch subject, base and verdict of the job"
else
	fail "report: the daemon's patch subject, base and verdict of the job" "subject '$subject', verdict '$verdict'"
	sed 's/^/#   /' "$TMP/rep1.out" | head -n 14
fi
# the opening says what the daemon's comparison says: its largest headline
# change, or how many headline rows it could not call
check "report: opens with the comparison's verdict in words" $PY - "$TMP/cmp.json" "$TMP/rep1.out" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))["comparison"]
text = open(sys.argv[2]).read()
opening = " ".join(text.split("\n\n")[1].split())
head = [r for r in c["rows"] if r["headline"]]
v = c["verdict"]
if v in ("regression", "improvement"):
    top = max((r for r in head if r["verdict"] == v), key=lambda r: abs(r["change_pct"]))
    want = "tlblab noticed a %+.1f%% %s of %s (" % (top["change_pct"], v, top["metric"])
elif v == "inconclusive":
    n = sum(r["verdict"] == v for r in head)
    want = "tlblab could neither call a change nor rule one out in %d headline metric%s on:" % (n, "" if n == 1 else "s")
elif v == "same":
    want = "tlblab found the headline metric"
else:
    want = "tlblab could compare none of the headline metrics on:"
if not opening.startswith(want):
    sys.exit("verdict %s: the opening is %r, not %r..." % (v, opening, want))
PYEOF
check "report: a headline table (with p_adj when the comparison adjusts p) under its heading" sh -c '
	grep -A 8 "^headline metrics\$" "$1" | grep -Eqx " +base +patched +%change +p( +p_adj)? +verdict" &&
	{ ! grep -q "\"p_adj\"" "$2" || grep -Eqx " +base +patched +%change +p +p_adj +verdict" "$1"; }' \
	sh "$TMP/rep1.out" "$TMP/cmp.json"
check "report: the TLB counters, profile and the commands to reproduce, in that order" in_order \
	"$TMP/rep1.out" "headline metrics" "TLB shootdowns" "profile" "to reproduce" \
	"  tlblab submit --suite tlb --tree linux --base v6.1-debian \\" "  tlblab compare 1"

# a patch submitted here: its subject from the mail, in the job, status and report
job_wait "$ab" "failed done cancelled" 60 >/dev/null
daemon_get "/jobs/$ab"
"$TLBLAB" status "$ab" >"$TMP/abs.out" 2>&1
"$TLBLAB" report "$ab" >"$TMP/abr.out" 2>&1
st=$?
if pyjson "$TMP/daemon.json" 'L[0]["job"]["patch_subject"] == "x86/mm: flush less"' &&
	grep -Eqx 'patch +x86/mm: flush less' "$TMP/abs.out" && [ $st = 0 ] &&
	grep -qx "  patch:     x86/mm: flush less" "$TMP/abr.out" && width_ok "$TMP/abr.out" >/dev/null &&
	grep -q "^tlblab job $ab failed: infra: " "$TMP/abr.out" && grep -qx "  verdict:   none (the job failed)" "$TMP/abr.out"; then
	pass "a submitted patch's subject ([PATCH] taken off) is the job's, and status and report show it"
else
	fail "a submitted patch's subject ([PATCH] taken off) is the job's, and status and report show it" "exit $st"
	sed 's/^/#   /' "$TMP/abr.out" | head -n 12
fi
"$TLBLAB" status "$abb" >"$TMP/abbs.out" 2>&1
check "a branch job is called by its branch" \
	grep -Eqx 'patch +branch tlb/fix-v2 of git://git\.example\.org/linux\.git' "$TMP/abbs.out"
daemon_get "/jobs/$(job_of "$TMP/ab2048.out")"
check "a job named by a long URL: its subject is cut at 200 bytes" pyjson "$TMP/daemon.json" \
	'(len(L[0]["job"]["patch_subject"]) == 200 and L[0]["job"]["patch_subject"].endswith("...")
	 and L[0]["job"]["patch_url"].startswith(L[0]["job"]["patch_subject"][:-3]))'

check_fails "report of a run job: the daemon's 409, and where to look" 1 \
	"^tlblab: HTTP 409 conflict: job $run1 is not an A/B job: a report compares a base and a patched kernel \\(\`tlblab status $run1\` shows the job\\)$" \
	"$TLBLAB" report "$run1"
check_fails "report of an unknown job shows the daemon's 404" 1 '^tlblab: HTTP 404 not_found: no job 999$' \
	"$TLBLAB" report 999
check_fails "report needs a job id" 2 "which job" "$TLBLAB" report
check_fails "report takes no --json" 2 "unknown option '--json'" "$TLBLAB" report --json 1

# --- submit --json -------------------------------------------------------------------

"$TLBLAB" submit --suite tlb --machines m2 --json >"$TMP/subj.out" 2>&1
check "submit --json prints the daemon's new job" pyjson "$TMP/subj.out" \
	'L[0]["job"]["suite"] == "tlb" and L[0]["job"]["machines"] == ["m2"] and L[0]["job"]["id"] > 4'

# --- servers that are not there, or not tlblabd ---------------------------------------

for cmd in "submit --suite tlb" "jobs" "status 1" "machines" "results 1" "compare 1" "report 1" "cancel 2"; do
	# shellcheck disable=SC2086
	check_fails "$cmd against a server that is down exits 3 naming the URL" 3 \
		"^tlblab: cannot reach tlblabd at http://127\.0\.0\.1:$DEAD/api/v1/" \
		env TLBLAB_SERVER="http://127.0.0.1:$DEAD" "$TLBLAB" $cmd
done
check "--server overrides \$TLBLAB_SERVER" \
	env TLBLAB_SERVER="http://127.0.0.1:$DEAD" "$TLBLAB" --server "$URL" machines
check_fails "a --server that is not an http URL is refused" 2 "--server: 'ftp://x'" \
	"$TLBLAB" jobs --server ftp://x

# a web server that is not tlblabd: an HTML page where JSON was expected
mkdir -p "$TMP/www/api/v1/jobs"
echo '<html><body>not tlblabd</body></html>' >"$TMP/www/api/v1/jobs/1"
$PY -u -m http.server --bind 127.0.0.1 --directory "$TMP/www" 0 >"$TMP/www.out" 2>&1 &
WWW_PID=$!
i=0
until grep -q 'port [0-9]' "$TMP/www.out" 2>/dev/null || [ $i -ge 100 ]; do
	i=$((i + 1))
	sleep 0.1
done
WWW=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$TMP/www.out" | head -n 1)
check_fails "an answer that is not JSON is reported as such" 1 \
	"^tlblab: GET http://127\.0\.0\.1:$WWW/api/v1/jobs/1: the answer is not a JSON object: " \
	"$TLBLAB" --server "http://127.0.0.1:$WWW" status 1
check_fails "an error page that is not JSON is reported with its status" 1 \
	'^tlblab: HTTP 404: <!DOCTYPE HTML>' "$TLBLAB" --server "http://127.0.0.1:$WWW" status 2

# --- nightly tracking ------------------------------------------------------------------

"$TLBLAB" tracks >"$TMP/tracks.out" 2>&1
check "tracks: the seeded track's branch, schedule, head, points, open alert and last result" grep -Eq \
	'^nightly +master +0 3 1 1 \* +.* 000000000000 +14 +1 +unchanged: measured already$' "$TMP/tracks.out"
"$TLBLAB" tracks --json >"$TMP/tracks.json"
daemon_get /tracks
check "tracks --json is the daemon's answer" same_json "$TMP/tracks.json" "$TMP/daemon.json"
"$TLBLAB" series nightly >"$TMP/series.out" 2>&1
check "series TRACK lists the series with its points and change points" grep -Eq \
	'^ *1 +m1 +mprotect +workers=2 +mprotect\.ops_per_sec +14 +1$' "$TMP/series.out"
"$TLBLAB" series --id 1 >"$TMP/series1.out" 2>&1
# (the daemon searched the seeded series at start: its own p replaced the seed's)
check "series --id: every point, then the change point with its p, status and alert" sh -c '
	[ "$(grep -c "mm: change" "$1")" = 14 ] &&
	grep -Eq "^change point at 000000000000: 1001 -> 851 \(-15\.0%, p [0-9.e-]+\), regression, confirmed, alert 1$" "$1"' \
	sh "$TMP/series1.out"
"$TLBLAB" alerts >"$TMP/alerts.out" 2>&1
check "alerts lists the alert: kind, state, commit, subject" grep -Eq \
	'^ *1 +nightly +regression +new +000000000000 +1 +mm: change 8$' "$TMP/alerts.out"
# an alert is the lab's: a user token's triage is refused, an admin's taken
check_fails "alerts ID --state with a user token: the daemon's 403" 1 \
	"HTTP 403 forbidden: alert 1 is the lab's .*setting its state needs an admin token" \
	"$TLBLAB" alerts 1 --state acknowledged --by alice
TLBLAB_TOKEN=$ADMIN "$TLBLAB" alerts 1 --state acknowledged --by alice >"$TMP/ack.out" 2>&1
daemon_get /alerts/1
check "alerts ID --state triages it through the API, by whom" sh -c '
	grep -q "^state: acknowledged by alice$" "$1" && grep -q "\"state_by\": *\"alice\"" "$2"' \
	sh "$TMP/ack.out" "$TMP/daemon.json"
check_fails "alerts --state needs an ID" 2 "--state needs an alert ID" "$TLBLAB" alerts --state fixed
check_fails "alerts ID --state with a word the API refuses: its 400" 1 "HTTP 400.*state: must be new" \
	env TLBLAB_TOKEN="$ADMIN" "$TLBLAB" alerts 1 --state sideways
check_fails "series of a track that is not configured: the 404" 1 "HTTP 404.*no track 'nope'" \
	"$TLBLAB" series nope
# a run asked for: the builder cannot be reached, and the track says so
check "tracks run NAME asks the daemon" sh -c '"$1" tracks run nightly | grep -q "^track nightly: asked to run now"' \
	sh "$TLBLAB"
tracks_result() {
	"$TLBLAB" tracks --json | $PY -c 'import json, sys; print(json.load(sys.stdin)["tracks"][0]["last_result"])' |
		grep -q "cannot resolve master: cannot reach builder"
}
check "the run's result is kept with the track: the builder could not be reached" wait_until 30 tracks_result
check_fails "tracks run of a track that is not configured: the 404" 1 "HTTP 404.*no track 'nope'" \
	"$TLBLAB" tracks run nope
check "deliveries: none without webhooks" sh -c '"$1" deliveries | grep -qx "no deliveries"' sh "$TLBLAB"

# --- bisections ------------------------------------------------------------------------

"$TLBLAB" bisections >"$TMP/bisections.out" 2>&1
check "bisections lists the seeded one: state, range, metric, steps, first bad" grep -Eq \
	'^ *1 +done +linux +000000000000\.\.000000000000 +mprotect\.ops_per_sec +2 +0 +first bad commit 7b0000000000' \
	"$TMP/bisections.out"
"$TLBLAB" bisect 1 >"$TMP/bisect1.out" 2>&1
daemon_get /bisections/1/report.txt
check "bisect ID prints the daemon's report as it is" cmp "$TMP/bisect1.out" "$TMP/daemon.json"
check "the report names the first bad commit, its subject and author, and each step's two verdicts" sh -c '
	grep -q "first bad commit: 7b00000000000000000000000000000000000000" "$1" &&
	grep -q "subject:          mm: flush every CPU" "$1" && grep -q "author:           A U Thor" "$1" &&
	grep -q "good -> bad:      regression -15.0% (p 0.0004)" "$1" &&
	grep -Eq "vs good: regression -15.1% \(p 0.004\); vs bad: same \+0.1% \(p 0.8\)" "$1" &&
	grep -q "tlblab submit --tree linux --base 7a00000000000000000000000000000000000000 --patch first-bad.patch" "$1"' \
	sh "$TMP/bisect1.out"
"$TLBLAB" bisect 1 --json >"$TMP/bisect1.json"
daemon_get /bisections/1
check "bisect ID --json is the daemon's answer" same_json "$TMP/bisect1.json" "$TMP/daemon.json"
check_fails "bisect ID --cancel of the lab's bisection with a user token: the 403" 1 \
	"HTTP 403 forbidden: bisection 1 is the lab's .*cancel needs an admin token" "$TLBLAB" bisect 1 --cancel
check_fails "bisect ID --cancel of one that ended: the 409" 1 "HTTP 409.*bisection 1 has ended" \
	env TLBLAB_TOKEN="$ADMIN" "$TLBLAB" bisect 1 --cancel
check_fails "bisect without --metric is a usage error" 2 "--suite and --metric are required" \
	"$TLBLAB" bisect linux v6.0 v6.1 --suite tlb
check_fails "bisect with a ref git refuses is a usage error" 2 "GOOD and BAD must be git refs" \
	"$TLBLAB" bisect linux 'v6.0~1' v6.1 --suite tlb --metric mprotect.ops_per_sec
check_fails "bisect of a suite the lab has not: the daemon's 400 names the field" 1 "HTTP 400.*suite: must name a configured suite" \
	"$TLBLAB" bisect linux v6.0 v6.1 --suite nope --metric mprotect.ops_per_sec
check_fails "bisect without a token: the 401" 1 "HTTP 401" \
	env TLBLAB_TOKEN= "$TLBLAB" bisect linux v6.0 v6.1 --suite tlb --metric mprotect.ops_per_sec
out=$("$TLBLAB" bisect linux v6.0 v6.1 --suite tlb --metric mprotect.ops_per_sec --boots 3 2>&1)
# the tracker may have found the builder unreachable (below) before the
# client reads the new bisection back: running or already failed
check "bisect TREE GOOD BAD starts one" sh -c 'printf "%s\n" "$1" | grep -Eq "^bisection 2: (running|failed), v6.0..v6.1 in mprotect.ops_per_sec on m1"' \
	sh "$out"
bisection_failed() {
	"$TLBLAB" bisect 2 --json | $PY -c 'import json, sys; b = json.load(sys.stdin); sys.exit(not (b["state"] == "failed" and "no commits to bisect between v6.0 and v6.1: cannot reach builder" in b["result"]))'
}
check "a bisection whose builder cannot be reached fails, saying so" wait_until 30 bisection_failed

# --- help and version ------------------------------------------------------------------

check "--help lists the commands" sh -c '"$1" --help | grep -q "^  results "' sh "$TLBLAB"
for cmd in submit status jobs cancel machines results compare report tracks series alerts deliveries bisect bisections; do
	check "$cmd --help shows its usage" \
		sh -c '"$1" "$2" --help | grep -q "^usage: tlblab $2"' sh "$TLBLAB" "$cmd"
done
check "version prints the version" sh -c '"$1" version | grep -Eqx "tlblab [0-9]+\.[0-9]+\.[0-9]+"' \
	sh "$TLBLAB"
check_fails "an unknown command is a usage error" 2 "unknown command 'frobnicate'" "$TLBLAB" frobnicate
check_fails "no command is a usage error" 2 "^usage: tlblab" "$TLBLAB"
exit 0
