#!/bin/sh
# The command-line client, every command, against tests/tools/fake-api.py: a
# stand-in for tlblabd's API (daemon/api.h) that checks the bearer token,
# records each request it gets, and moves a submitted job one step further
# on each poll. What is checked is what a user sees: output, exit status,
# and what reached the server (or that nothing did).
. "$(dirname "$0")/../lib.sh"

TLBLAB=$BUILD/tlblab
if [ ! -x "$TLBLAB" ]; then
	fail "tlblab is built" "no $TLBLAB (make $BUILD/tlblab)"
	exit 0
fi

LOG=$TMP/requests.log
$PY "$TOP/tests/tools/fake-api.py" --port-file "$TMP/port" --log "$LOG" \
	--token s3cret >"$TMP/fake.err" 2>&1 &
FAKE=$!
trap 'kill $FAKE 2>/dev/null; rm -rf "$TMP"' EXIT
i=0
while [ ! -s "$TMP/port" ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
if [ ! -s "$TMP/port" ]; then
	fail "fake API server starts" "$(cat "$TMP/fake.err")"
	exit 0
fi
PORT=$(cat "$TMP/port")
TLBLAB_SERVER=http://127.0.0.1:$PORT
TLBLAB_TOKEN=s3cret
USER=alice
export TLBLAB_SERVER TLBLAB_TOKEN USER

nreq() { if [ -f "$LOG" ]; then wc -l <"$LOG"; else echo 0; fi; }
# last_req 'python expression over R, the last request recorded'
last_req() {
	tail -n 1 "$LOG" >"$TMP/last.json"
	pyjson "$TMP/last.json" "(lambda R: $1)(L[-1])"
}
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
is_json() { $PY -c 'import json, sys; json.load(open(sys.argv[1]))' "$1"; }

# --- submit ---------------------------------------------------------------

"$TLBLAB" submit --suite tlb --machines m1,m2 --tags qemu --submitter bob --boots 2 \
	>"$TMP/sub.out" 2>&1
st=$?
if [ $st = 0 ] && grep -Eqx 'job [0-9]+ queued' "$TMP/sub.out"; then
	pass "submit prints the job id"
else
	fail "submit prints the job id" "exit $st: $(cat "$TMP/sub.out")"
fi
check "submit POSTs the request body with the token" last_req \
	'R["method"] == "POST" and R["path"] == "/api/v1/jobs" and R["auth"] == "Bearer s3cret"
	 and R["body"] == {"suite": "tlb", "machines": ["m1", "m2"], "tags": ["qemu"],
			   "submitter": "bob", "boots": 2}'

"$TLBLAB" submit --suite tlb >/dev/null 2>&1
check "submit defaults the submitter to \$USER and sends no unset field" last_req \
	'R["body"] == {"suite": "tlb", "submitter": "alice"}'

# --- submit --wait ---------------------------------------------------------

"$TLBLAB" submit --suite tlb --machines m1,m2 --wait >"$TMP/wait.out" 2>&1
st=$?
id=$(sed -n 's/^job \([0-9]*\) queued$/\1/p' "$TMP/wait.out")
if [ $st = 0 ] && [ -n "$id" ] && in_order "$TMP/wait.out" \
	"job $id: run on m1: running" "job $id: run on m1: done" \
	"job $id: run on m2: running" "job $id: run on m2: done" >"$TMP/order" &&
	[ "$(tail -n 1 "$TMP/wait.out")" = "job $id: done" ]; then
	pass "submit --wait follows the stages of a job that ends done, exit 0"
else
	fail "submit --wait follows the stages of a job that ends done, exit 0" \
		"exit $st, $(cat "$TMP/order" 2>/dev/null)"
	sed 's/^/#   /' "$TMP/wait.out"
fi
if [ "$(grep -c ': running$' "$TMP/wait.out")" = 2 ]; then
	pass "submit --wait prints a stage's state once, not on every poll"
else
	fail "submit --wait prints a stage's state once, not on every poll" \
		"$(grep -c ': running$' "$TMP/wait.out") running lines for 2 stages"
fi
check "submit --wait ends with the results table" \
	grep -Eq '^  mprotect\.ops_per_sec +2000 +1000 +3000 +3 +ops/s$' "$TMP/wait.out"

"$TLBLAB" submit --suite fails --machines m1,m2 --wait >"$TMP/wfail.out" 2>&1
st=$?
id=$(sed -n 's/^job \([0-9]*\) queued$/\1/p' "$TMP/wfail.out")
if [ $st = 1 ] && [ -n "$id" ] && in_order "$TMP/wfail.out" \
	"job $id: run on m1: done" \
	"job $id: run on m2: failed (infra: ssh: connection refused)" >"$TMP/order" &&
	[ "$(tail -n 1 "$TMP/wfail.out")" = "job $id: failed: infra: ssh: connection refused" ]; then
	pass "submit --wait on a job that fails shows the failed stage and exits 1"
else
	fail "submit --wait on a job that fails shows the failed stage and exits 1" \
		"exit $st, $(cat "$TMP/order" 2>/dev/null)"
	sed 's/^/#   /' "$TMP/wfail.out"
fi

check_fails "submit --wait --timeout gives up on a job that does not finish" 1 \
	"job [0-9]+: still running after 2 s" \
	"$TLBLAB" submit --suite slow --wait --timeout 2

"$TLBLAB" submit --suite tlb --wait --json >"$TMP/wjson.out" 2>"$TMP/wjson.err"
st=$?
if [ $st = 0 ] && pyjson "$TMP/wjson.out" 'L[0]["job"]["state"] == "done"' &&
	grep -q ': done$' "$TMP/wjson.err"; then
	pass "submit --wait --json prints the finished job as JSON, progress on stderr"
else
	fail "submit --wait --json prints the finished job as JSON, progress on stderr" \
		"exit $st: $(head -c 300 "$TMP/wjson.out")"
fi

# --- refusals: token, names, options --------------------------------------

check_fails "submit without a token shows the server's 401 and exits 1" 1 \
	'^tlblab: HTTP 401 unauthorized: missing or invalid token' \
	env -u TLBLAB_TOKEN "$TLBLAB" submit --suite tlb
check_fails "submit with a wrong token shows the server's 401" 1 \
	'^tlblab: HTTP 401 unauthorized: missing or invalid token' \
	env TLBLAB_TOKEN=wrong "$TLBLAB" submit --suite tlb
check_fails "a server-side validation error is shown as the server words it" 1 \
	'^tlblab: HTTP 400 bad_request: suite: not a configured suite' \
	"$TLBLAB" submit --suite nosuch

n0=$(nreq)
check_fails "a machine name with ';' is refused locally, naming the option" 2 \
	"^tlblab: submit: --machines: invalid name 'm1;reboot'" \
	"$TLBLAB" submit --suite tlb --machines 'm1;reboot'
for bad in "--suite=../etc" "--suite=-rf" "--tags=a b" "--tags=qemu," "--submitter=.hidden" \
	"--machines=$(printf 'm%064d' 1)" "--boots=0" "--boots=2x" "--suite"; do
	check_fails "submit $bad is refused locally" 2 "^tlblab: submit: " \
		"$TLBLAB" submit --suite tlb "$bad"
done
check_fails "submit without --suite is refused" 2 "--suite is required" "$TLBLAB" submit
check_fails "an unknown option is refused" 2 "unknown option '--frob'" \
	"$TLBLAB" submit --suite tlb --frob
n1=$(nreq)
if [ "$n0" = "$n1" ]; then
	pass "refused submissions send no request"
else
	fail "refused submissions send no request" "the server got $((n1 - n0))"
fi
"$TLBLAB" submit --suite tlb --machines "$(printf 'm%063d' 1)" >/dev/null 2>&1
check "a 64-character name is sent" last_req 'len(R["body"]["machines"][0]) == 64'

# --- A/B submissions: --tree, --base and a patch ----------------------------

printf 'Subject: [PATCH] x86/mm: flush less\n\nFrom: Ren\303\251e\n---\ndiff --git a/arch/x86/mm/tlb.c b/arch/x86/mm/tlb.c\n@@ -1 +1 @@\n-\tint x;\n+\tint y; /* "q" \\ */\n' \
	>"$TMP/fix.patch"
"$TLBLAB" submit --suite tlb --tree linux --base v6.1 --patch "$TMP/fix.patch" --boots 2 \
	--machines m1 --tags qemu --submitter bob >"$TMP/ab.out" 2>&1
st=$?
check "submit --patch sends the file's content in \"patch\", with tree and base" last_req \
	'R["method"] == "POST" and R["path"] == "/api/v1/jobs" and R["body"] == {"suite": "tlb",
	 "tree": "linux", "base": "v6.1", "patch": open("'"$TMP/fix.patch"'", encoding="utf-8").read(),
	 "boots": 2, "machines": ["m1"], "tags": ["qemu"], "submitter": "bob"}
	 and "\u00e9" in R["body"]["patch"] and "\t" in R["body"]["patch"]'
if [ $st = 0 ] && grep -Eqx 'job [0-9]+ queued' "$TMP/ab.out"; then
	pass "submit --patch prints the job id"
else
	fail "submit --patch prints the job id" "exit $st: $(cat "$TMP/ab.out")"
fi

# options after the branch's two values are still read
"$TLBLAB" submit --suite tlb --tree linux --branch git://git.example.org/linux.git tlb/fix-v2 \
	--base v6.1-rc3 --boots 2 >"$TMP/abb.out" 2>&1
abb=$(sed -n 's/^job \([0-9]*\) queued$/\1/p' "$TMP/abb.out")
check "submit --branch URL REF sends \"branch\": {url, ref}" last_req \
	'R["body"] == {"suite": "tlb", "tree": "linux", "base": "v6.1-rc3", "boots": 2,
	 "branch": {"url": "git://git.example.org/linux.git", "ref": "tlb/fix-v2"},
	 "submitter": "alice"}'

"$TLBLAB" submit --suite tlb --tree linux --base 1f3a5c7d9e --url \
	'https://lore.kernel.org/all/20240501-tlb-v2-1-abc@example.org/raw' >/dev/null 2>&1
check "submit --url sends \"url\", and a hex commit id is a base" last_req \
	'R["body"] == {"suite": "tlb", "tree": "linux", "base": "1f3a5c7d9e",
	 "url": "https://lore.kernel.org/all/20240501-tlb-v2-1-abc@example.org/raw",
	 "submitter": "alice"}'

$PY -c 'import sys; open(sys.argv[1], "w").write(("+" * 1023 + "\n") * 4096)' "$TMP/4mib.patch"
"$TLBLAB" submit --suite tlb --tree linux --base v6.1 --patch "$TMP/4mib.patch" >/dev/null 2>&1
check "a patch of exactly 4 MiB is sent whole" last_req 'len(R["body"]["patch"]) == 4 << 20'

# refusals: each names its option, and none reaches the server
$PY -c 'import sys; open(sys.argv[1], "w").write("+x\n" * (5 << 19))' "$TMP/5mib.patch"
printf 'diff --git a/x b/x\n\000\001\n' >"$TMP/binary.patch"
printf 'From: Ren\351e\ndiff --git a/x b/x\n' >"$TMP/latin1.patch"
: >"$TMP/empty.patch"
AB="--suite tlb --tree linux"
n0=$(nreq)
while IFS='|' read -r opt pat args; do
	# shellcheck disable=SC2086
	check_fails "submit $args is refused locally, naming $opt" 2 "^tlblab: submit: .*$pat" \
		"$TLBLAB" submit $args
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
--branch|--branch: 'ssh://x\.org/l\.git' is not an http://, https:// or git:// URL|$AB --base v6.1 --branch ssh://x.org/l.git main
--url|--url: 'file:///etc/passwd' is not an http:// or https:// URL|$AB --base v6.1 --url file:///etc/passwd
--url|--url: 'git://x\.org/p' is not an http:// or https:// URL|$AB --base v6.1 --url git://x.org/p
--url|--url: 'https://x\.org/p"' is not|$AB --base v6.1 --url https://x.org/p"
--url|--url: 'https://x\.org/\\$\(id\)'x' is not|$AB --base v6.1 --url https://x.org/\$(id)'x
--patch|--patch and --url: give only one of --patch, --branch and --url|$AB --base v6.1 --patch $TMP/fix.patch --url https://x.org/p
--url|--url and --branch: give only one|$AB --base v6.1 --url https://x.org/p --branch https://x.org/l.git main
--tree|--tree needs --base|$AB --patch $TMP/fix.patch
--base|--base needs --tree|--suite tlb --base v6.1 --url https://x.org/p
--tree|--tree needs one of --patch, --branch or --url|$AB --base v6.1
--patch|--patch needs --tree and --base|--suite tlb --patch $TMP/fix.patch
--tree|--tree: invalid name 'a;b'|--suite tlb --tree a;b --base v6.1 --url https://x.org/p
--patch|--patch: '.*/5mib\.patch' is larger than 4 MiB|$AB --base v6.1 --patch $TMP/5mib.patch
--patch|--patch: cannot read '.*/nosuch\.patch': No such file|$AB --base v6.1 --patch $TMP/nosuch.patch
--patch|--patch: '.*' is not a regular file|$AB --base v6.1 --patch $TMP
--patch|--patch: '.*/empty\.patch' is empty|$AB --base v6.1 --patch $TMP/empty.patch
--patch|--patch: '.*/binary\.patch' is not text|$AB --base v6.1 --patch $TMP/binary.patch
--patch|--patch: '.*/latin1\.patch' is not UTF-8 text|$AB --base v6.1 --patch $TMP/latin1.patch
--boots|--boots: '101' is not a number from 1 to 100|$AB --base v6.1 --url https://x.org/p --boots 101
END_OF_CASES
long=https://x.org/$($PY -c 'print("a" * 2034)')
# shellcheck disable=SC2086
check_fails "a URL of more than 2048 characters is refused locally" 2 \
	"^tlblab: submit: --url: 'https://x\.org/a+\.\.\.' is not" \
	"$TLBLAB" submit $AB --base v6.1 --url "${long}a"
n1=$(nreq)
if [ "$n0" = "$n1" ]; then
	pass "refused A/B submissions send no request"
else
	fail "refused A/B submissions send no request" "the server got $((n1 - n0))"
fi
# shellcheck disable=SC2086
"$TLBLAB" submit $AB --base v6.1 --url "$long" >/dev/null 2>&1
check "a URL of 2048 characters is sent" last_req 'len(R["body"]["url"]) == 2048'

# --wait over an A/B job: builds, then boots and runs of each side
# shellcheck disable=SC2086
"$TLBLAB" submit $AB --base v6.1 --url https://lore.kernel.org/r/x/raw --wait >"$TMP/abw.out" 2>&1
st=$?
ab=$(sed -n 's/^job \([0-9]*\) queued$/\1/p' "$TMP/abw.out")
if [ $st = 0 ] && [ -n "$ab" ] && in_order "$TMP/abw.out" \
	"job $ab: build base on builder local: running" "job $ab: build base on builder local: done" \
	"job $ab: build patched on builder local: running" "job $ab: build patched on builder local: done" \
	"job $ab: boot base #1 on m1: running" "job $ab: boot base #1 on m1: done" \
	"job $ab: run base #1 on m1: running" "job $ab: run base #1 on m1: done" \
	"job $ab: boot patched #1 on m1: running" "job $ab: boot patched #1 on m1: done" \
	"job $ab: run patched #1 on m1: running" "job $ab: run patched #1 on m1: done" \
	"job $ab: done" >"$TMP/order" &&
	[ "$(tail -n 1 "$TMP/abw.out")" = "job $ab: done" ]; then
	pass "submit --wait over an A/B job shows its build, boot and run stages, exit 0"
else
	fail "submit --wait over an A/B job shows its build, boot and run stages, exit 0" \
		"exit $st, $(cat "$TMP/order" 2>/dev/null)"
	sed 's/^/#   /' "$TMP/abw.out"
fi
grep -E '^spec |ops_per_sec' "$TMP/abw.out" | sed 's/  */ /g' >"$TMP/abres"
cat >"$TMP/abres.want" <<END_OF_RESULTS
spec 0, case 0: mprotect on m1 (base)
 mprotect.ops_per_sec 1150 1000 1300 4 ops/s
spec 0, case 0: mprotect on m1 (patched)
 mprotect.ops_per_sec 2150 2000 2300 4 ops/s
END_OF_RESULTS
if cmp -s "$TMP/abres" "$TMP/abres.want"; then
	pass "an A/B job's results are grouped by side, base first, boots pooled"
else
	fail "an A/B job's results are grouped by side, base first, boots pooled" \
		"$(tr '\n' '|' <"$TMP/abres")"
fi

# a patch that does not apply: the job's result, not a lab failure
printf 'this is not a patch\n' >"$TMP/notapatch.txt"
# shellcheck disable=SC2086
"$TLBLAB" submit $AB --base v6.1 --patch "$TMP/notapatch.txt" --wait >"$TMP/abf.out" 2>&1
st=$?
abf=$(sed -n 's/^job \([0-9]*\) queued$/\1/p' "$TMP/abf.out")
msg="the patch does not apply: error: patch failed: arch/x86/mm/tlb.c:42"
if [ $st = 1 ] && [ -n "$abf" ] && in_order "$TMP/abf.out" \
	"job $abf: build base on builder local: done" \
	"job $abf: build patched on builder local: failed (patch: $msg)" >"$TMP/order" &&
	[ "$(tail -n 1 "$TMP/abf.out")" = \
	  "job $abf: failed: patch: $msg (a result of the patch, not a lab problem)" ] &&
	! grep -q '^spec ' "$TMP/abf.out"; then
	pass "an A/B job whose patch does not apply exits 1, saying it is the patch's result"
else
	fail "an A/B job whose patch does not apply exits 1, saying it is the patch's result" \
		"exit $st, $(cat "$TMP/order" 2>/dev/null)"
	sed 's/^/#   /' "$TMP/abf.out"
fi

"$TLBLAB" status "$abf" >"$TMP/abfs.out" 2>&1
st=$?
if [ $st = 0 ] && grep -qx "job $abf: failed (ab)" "$TMP/abfs.out" &&
	grep -Eqx 'tree +linux' "$TMP/abfs.out" && grep -Eqx 'base +v6\.1' "$TMP/abfs.out" &&
	grep -Eqx 'source +patch' "$TMP/abfs.out" &&
	grep -Eqx "error +patch: $msg \\(stage [0-9]+: build patched on builder local\\)" "$TMP/abfs.out" &&
	grep -Eqx ' +a result of the patch, not a lab problem' "$TMP/abfs.out" &&
	grep -Eqx 'SEQ +KIND +SIDE +BOOT +MACHINE +STATE +ATTEMPT +STARTED +DURATION +BUILD +ERROR' "$TMP/abfs.out" &&
	grep -Eqx " +1 +build +base +- +builder local +done +1 .* base-$abf +-" "$TMP/abfs.out" &&
	grep -Eqx " +2 +build +patched +- +builder local +failed +1 .* - +patch: $msg" "$TMP/abfs.out"; then
	pass "status of a failed A/B job shows tree, base, sides, build ids and whose failure it is"
else
	fail "status of a failed A/B job shows tree, base, sides, build ids and whose failure it is" "exit $st"
	sed 's/^/#   /' "$TMP/abfs.out"
fi

# every GET of a job moves the fake one step: finish the --branch job
i=0
while [ $i -lt 30 ]; do
	"$TLBLAB" status "$abb" --json >/dev/null 2>&1
	i=$((i + 1))
done
"$TLBLAB" status "$abb" >"$TMP/abbs.out" 2>&1
st=$?
if [ $st = 0 ] && grep -qx "job $abb: done (ab)" "$TMP/abbs.out" &&
	grep -Eqx 'source +branch git://git\.example\.org/linux\.git tlb/fix-v2' "$TMP/abbs.out" &&
	grep -Eqx " +7 +boot +base +#2 +m1 +done +1 .* base-$abb +-" "$TMP/abbs.out" &&
	grep -Eqx " +10 +run +patched +#2 +m1 +done +1 .* patched-$abb +-" "$TMP/abbs.out"; then
	pass "status numbers an A/B job's boots per side from #1"
else
	fail "status numbers an A/B job's boots per side from #1" "exit $st"
	sed 's/^/#   /' "$TMP/abbs.out"
fi

# --- an unreachable server ---------------------------------------------------

DEAD=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
for cmd in "submit --suite tlb" "jobs" "status 1" "machines" "results 1" "compare 1" "cancel 2"; do
	# shellcheck disable=SC2086
	check_fails "$cmd against a server that is down exits 3 naming the URL" 3 \
		"^tlblab: .*http://127\.0\.0\.1:$DEAD/api/v1/" \
		env TLBLAB_SERVER="http://127.0.0.1:$DEAD" "$TLBLAB" $cmd
done
check "--server overrides \$TLBLAB_SERVER" \
	env TLBLAB_SERVER="http://127.0.0.1:$DEAD" "$TLBLAB" --server "$TLBLAB_SERVER" machines
check_fails "a --server that is not an http URL is refused" 2 "--server: 'ftp://x'" \
	"$TLBLAB" jobs --server ftp://x

# --- status, jobs, machines, results, cancel ---------------------------------

"$TLBLAB" status "$id" >"$TMP/status.out" 2>&1
st=$?
if [ $st = 0 ] && grep -q "^job $id: failed (run)$" "$TMP/status.out" &&
	grep -Eq '^error +infra: ssh: connection refused \(stage [0-9]+: run on m2\)$' "$TMP/status.out" &&
	grep -Eq '^SEQ +KIND +SIDE +MACHINE +STATE +ATTEMPT +STARTED +DURATION +ERROR$' "$TMP/status.out" &&
	grep -Eq '^ +1 +run +- +m1 +done +1 +[0-9-]+ [0-9:]+ +10s +-$' "$TMP/status.out" &&
	grep -Eq '^ +2 +run +- +m2 +failed +1 .* +infra: ssh: connection refused$' "$TMP/status.out"; then
	pass "status shows the job and a table of its stages"
else
	fail "status shows the job and a table of its stages" "exit $st"
	sed 's/^/#   /' "$TMP/status.out"
fi
check_fails "status of an unknown job shows the server's 404 and exits 1" 1 \
	'^tlblab: HTTP 404 not_found: no job 999$' "$TLBLAB" status 999
check_fails "an answer that is not JSON is reported with its status" 1 \
	'^tlblab: HTTP 502: <html>' "$TLBLAB" status 666
check_fails "status needs a job id" 2 "which job" "$TLBLAB" status
check_fails "status refuses a job id that is not a number" 2 "'12x' is not a job id" \
	"$TLBLAB" status 12x

"$TLBLAB" jobs --state "done" --suite tlb --submitter alice --limit 5 --offset 0 \
	>"$TMP/jobs.out" 2>&1
st=$?
if [ $st = 0 ] && grep -Eq '^ID +STATE +SUITE +SUBMITTER' "$TMP/jobs.out" &&
	grep -Eq '^ *1 +done +tlb +alice +m1 ' "$TMP/jobs.out" &&
	! grep -Eq ' (running|failed) ' "$TMP/jobs.out"; then
	pass "jobs lists the jobs the filters select"
else
	fail "jobs lists the jobs the filters select" "exit $st"
	sed 's/^/#   /' "$TMP/jobs.out"
fi
check "jobs sends the filters as query parameters" last_req \
	'R["path"] == "/api/v1/jobs" and R["query"] == {"state": ["done"], "suite": ["tlb"],
	 "submitter": ["alice"], "limit": ["5"], "offset": ["0"]}'
check_fails "jobs --state refuses an unknown state" 2 "--state: 'finished' is not one of" \
	"$TLBLAB" jobs --state finished
check_fails "jobs --limit is bounded" 2 "--limit: '501' is not a number from 1 to 500" \
	"$TLBLAB" jobs --limit 501

"$TLBLAB" machines >"$TMP/machines.out" 2>&1
st=$?
if [ $st = 0 ] &&
	grep -Eq '^NAME +TRANSPORT +HOST +BOOT +HEALTH +LEASED_BY +KERNEL +TAGS$' "$TMP/machines.out" &&
	grep -Eq '^m1 +local +- +qemu +good +12 +6\.1\.0-tlblab +qemu,small$' "$TMP/machines.out" &&
	grep -Eq '^m2 +ssh +127\.0\.0\.2 +kexec +bad \(ssh: connection refused\) +- +- +real$' "$TMP/machines.out"; then
	pass "machines shows a table of the lab's machines"
else
	fail "machines shows a table of the lab's machines" "exit $st"
	sed 's/^/#   /' "$TMP/machines.out"
fi

"$TLBLAB" results 1 >"$TMP/results.out" 2>&1
st=$?
if [ $st = 0 ] &&
	in_order "$TMP/results.out" "spec 0, case 0: mprotect on m1" "  params: mode=threads workers=2" \
		"spec 0, case 1: mprotect on m1" "  params: mode=processes workers=2" >"$TMP/order" &&
	grep -Eq '^  mprotect\.ops_per_sec +2000 +1000 +3000 +3 +ops/s$' "$TMP/results.out" &&
	grep -Eq '^  mprotect\.ops_per_sec +600 +500 +700 +3 +ops/s$' "$TMP/results.out"; then
	pass "results shows median, min, max and n of each metric per case"
else
	fail "results shows median, min, max and n of each metric per case" \
		"exit $st $(cat "$TMP/order" 2>/dev/null)"
	sed 's/^/#   /' "$TMP/results.out"
fi
if ! grep -q 'cpu0' "$TMP/results.out" && grep -q '2 per-CPU metrics hidden' "$TMP/results.out"; then
	pass "results hides per-CPU metrics and says so"
else
	fail "results hides per-CPU metrics and says so" "$(grep -i cpu "$TMP/results.out")"
fi
check "results --all shows per-CPU metrics" \
	sh -c '"$1" results --all 1 | grep -Eq "^  interrupts\.TLB\.cpu1 +900 +750 +1050 +3 +count$"' \
	sh "$TLBLAB"

"$TLBLAB" cancel 2 >"$TMP/cancel.out" 2>&1
st=$?
if [ $st = 0 ] && grep -qx 'job 2: cancelled' "$TMP/cancel.out" &&
	last_req 'R["method"] == "POST" and R["path"] == "/api/v1/jobs/2/cancel"
		  and R["auth"] == "Bearer s3cret"'; then
	pass "cancel POSTs to the job's cancel endpoint with the token"
else
	fail "cancel POSTs to the job's cancel endpoint with the token" \
		"exit $st: $(cat "$TMP/cancel.out")"
fi
check_fails "cancel of a finished job shows the server's 409 and exits 1" 1 \
	'^tlblab: HTTP 409 conflict: job 2 already cancelled$' "$TLBLAB" cancel 2

# --- compare -------------------------------------------------------------------

"$TLBLAB" compare 1 >"$TMP/cmp.out" 2>&1
st=$?
if [ $st = 0 ] && [ "$(head -n 1 "$TMP/cmp.out")" = "summary: mprotect.ops_per_sec (mode=processes workers=2) -8.3% regression; mprotect.ops_per_sec (mode=threads workers=2) +12.5% improvement; 1 same, 1 inconclusive" ] &&
	grep -Eq '^  regression +mprotect\.ops_per_sec \(mode=processes workers=2\) +-8\.3% +p=0\.0079 +CI \[-10\.2, -6\.1\]$' "$TMP/cmp.out"; then
	pass "compare starts with the headline summary, regressions first"
else
	fail "compare starts with the headline summary, regressions first" "exit $st"
	sed 's/^/#   /' "$TMP/cmp.out"
fi
check "compare asks for the job's comparison" last_req \
	'R["method"] == "GET" and R["path"] == "/api/v1/jobs/1/comparison"'
check "compare rows: workload, params, metric, base, patched, %change, p, CI, verdict" \
	grep -Eq '^mprotect +mode=processes workers=2 +mprotect\.ops_per_sec +400000 +366800 +-8\.3% +0\.0079 +\[-10\.2, -6\.1\] +regression$' \
	"$TMP/cmp.out"
check "compare shows the spread of a side when it is above 2%" \
	grep -Eq '^mprotect +mode=threads workers=4 +mprotect\.ops_per_sec +1200000 ±3\.4% +1218000 ±3\.0% +\+1\.5% +0\.55 +\[-3\.2, \+6\.0\] +inconclusive$' \
	"$TMP/cmp.out"
check "compare says why a row is unavailable" \
	grep -q 'vmstat\.nr_tlb_remote_flush .* unavailable (unavailable on patched: vmstat lacks nr_tlb_\* (DEBUG_TLBFLUSH is off))$' \
	"$TMP/cmp.out"
if ! grep -Eq 'workers=1 +mprotect\.ops_per_sec' "$TMP/cmp.out" &&
	! grep -q 'nr_tlb_local_flush_one' "$TMP/cmp.out" &&
	grep -qx '(2 rows folded: same, or counters that moved less than 5%; --all shows them)' "$TMP/cmp.out"; then
	pass "compare folds rows that are the same and small counter moves, and says so"
else
	fail "compare folds rows that are the same and small counter moves, and says so" \
		"$(grep -E 'workers=1|local_flush_one|folded' "$TMP/cmp.out")"
fi
check "compare --all shows the folded rows" sh -c '"$1" compare --all 1 >"$2" &&
	grep -Eq "^mprotect +mode=threads workers=1 +mprotect\.ops_per_sec +500000 +498000 +-0\.4% .* same$" "$2" &&
	grep -q "nr_tlb_local_flush_one" "$2" && ! grep -q folded "$2"' sh "$TLBLAB" "$TMP/cmpall.out"
if in_order "$TMP/cmp.out" \
	"thread sweep: mprotect.ops_per_sec (mode=threads), ops/s, higher is better" \
	"  WORKERS     BASE  PATCHED  %CHANGE  VERDICT" \
	"        1   500000   498000    -0.4%  same" \
	"        2   800000   900000   +12.5%  improvement" \
	"        4  1200000  1218000    +1.5%  inconclusive" >"$TMP/order"; then
	pass "compare prints the thread sweep as a table, one row per worker count"
else
	fail "compare prints the thread sweep as a table, one row per worker count" "$(cat "$TMP/order")"
fi
check "compare's TLB block: shootdowns/kop and per-second average and peak per side" \
	sh -c 'grep -Eq "^  mprotect mode=threads workers=2 +shootdowns/kop +12\.5 +- +15\.6 +- +\+24\.8% +regression$" "$1" &&
	grep -Eq " interrupts\.TLB/s +10000 +12000 +14000 +17500 +- +regression$" "$1"' sh "$TMP/cmp.out"
check "compare's profile diff, the largest change first" in_order "$TMP/cmp.out" \
	"  flush_tlb_func                   8.00          14.50  +6.50" \
	"  native_flush_tlb_one_user        3.00           1.00  -2.00"
check "compare ends with provenance, failed runs and notes" in_order "$TMP/cmp.out" \
	"provenance" \
	"  base     job=1 kernel=6.1.0-tlblab build=base-1; 5 boots on m1; builds base-1" \
	"failed (not averaged in):" "  patched run 77: workload: mprotect: killed by SIGKILL" \
	"notes:"

"$TLBLAB" compare --base 1 --patched 2 >"$TMP/cmp2.out" 2>&1
check "compare --base A --patched B asks for /compare with both ids" last_req \
	'R["path"] == "/api/v1/compare" and R["query"] == {"base": ["1"], "patched": ["2"]}'
check "compare --base A --patched B prints both jobs' provenance" \
	grep -q '^  patched  job=2 ' "$TMP/cmp2.out"
"$TLBLAB" compare 1 --json >"$TMP/cmp.json" 2>&1
check "compare --json is the server's comparison as sent" pyjson "$TMP/cmp.json" \
	'len(L[0]["rows"]) == 10 and L[0]["summary"]["regressions"][0]["change_pct"] == -8.3'
n=$(nreq)
check_fails "compare --base without --patched is a usage error" 2 "--base and --patched go together" \
	"$TLBLAB" compare --base 1
check_fails "compare with both a job and --base/--patched is a usage error" 2 "not both" \
	"$TLBLAB" compare --base 1 --patched 2 3
check_fails "compare of a job id that is not a number is a usage error" 2 "'x1' is not a job id" \
	"$TLBLAB" compare --base x1 --patched 2
check "compare's usage errors send nothing" test "$(nreq)" = "$n"
check_fails "compare of a job the server does not know shows the 404" 1 \
	'^tlblab: HTTP 404 not_found: no job 99$' "$TLBLAB" compare --base 1 --patched 99

# --- --json ------------------------------------------------------------------

for cmd in "jobs" "status 1" "machines" "results 1" "submit --suite tlb"; do
	# shellcheck disable=SC2086
	"$TLBLAB" $cmd --json >"$TMP/json.out" 2>"$TMP/json.err"
	st=$?
	if [ $st = 0 ] && is_json "$TMP/json.out" 2>"$TMP/json.why"; then
		pass "$cmd --json prints parseable JSON"
	else
		fail "$cmd --json prints parseable JSON" \
			"exit $st: $(cat "$TMP/json.why" "$TMP/json.err") $(head -c 200 "$TMP/json.out")"
	fi
done
"$TLBLAB" status 1 --json >"$TMP/status.json"
check "status --json is the server's job, stages included" pyjson "$TMP/status.json" \
	'L[0]["job"]["id"] == 1 and L[0]["job"]["stages"][0]["machine"] == "m1"'
"$TLBLAB" results 1 --json >"$TMP/results.json"
check "results --json holds the runs and the metrics" pyjson "$TMP/results.json" \
	'len(L[0]["runs"]) == 8 and len(L[0]["metrics"]) == 24'

# --- help and version --------------------------------------------------------

check "--help lists the commands" sh -c '"$1" --help | grep -q "^  results "' sh "$TLBLAB"
for cmd in submit status jobs cancel machines results compare; do
	check "$cmd --help shows its usage" \
		sh -c '"$1" "$2" --help | grep -q "^usage: tlblab $2"' sh "$TLBLAB" "$cmd"
done
check "version prints the version" sh -c '"$1" version | grep -Eqx "tlblab [0-9]+\.[0-9]+\.[0-9]+"' \
	sh "$TLBLAB"
check_fails "an unknown command is a usage error" 2 "unknown command 'frobnicate'" \
	"$TLBLAB" frobnicate
check_fails "no command is a usage error" 2 "^usage: tlblab" "$TLBLAB"
exit 0
