#!/bin/sh
# The dashboard end to end: a real store filled with known jobs
# (tests/web/seed.py: a finished A/B job with regressions, improvements, a
# thread sweep, per-second TLB samples and profiles, and no verdict yet; a
# failed build; a kernel panic at boot; a machine in maintenance), a running
# and a queued job submitted through the API, tlblabd serving web/ on
# loopback, and Debian's chromium driven by playwright-core
# (tests/web/dashboard.test.mjs).
# Screenshots go to $BUILD/artifacts/web/.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
trap 'daemon_cleanup; rm -rf "$TMP"' EXIT

daemon_test 20000
ART=$BUILD/artifacts/web

if ! command -v node >/dev/null 2>&1 || [ ! -x /usr/bin/chromium ] || [ ! -f "$TOP/web/node_modules/uplot/dist/uPlot.esm.js" ] ||
	[ ! -f "$TOP/web/node_modules/playwright-core/index.mjs" ]; then
	fail "the dashboard test has node, chromium and web/node_modules" "run: sh scripts/deps.sh test"
	exit 0
fi

{
	# the dashboard's token triages alerts: an admin token (lab.admin_tokens)
	lab_yaml "$TMP/data" "admin_tokens: [$TOKEN]"
	echo machines:
	lab_yaml_machine m1 "tags: [local]"
	lab_yaml_machine m2
	lab_yaml_builder
	echo suites:
	lab_yaml_mprotect_suite tlb "" "workers: 2" "duration: 0.5"
	# holds a machine: the job that runs it stays running, the next one queued
	lab_yaml_hold_suite
	# a track the seed gives points, series and an alert; due once a year
	printf 'tracks:\n  - {name: nightly, tree: linux, branch: master, schedule: "0 3 1 1 *", suite: tlb, machines: [m1]}\n'
} >"$TMP/lab.yaml"

# the daemon makes the store, then the seed fills it
daemon_start "$TMP/lab.yaml" || { fail "tlblabd starts" "see log"; exit 0; }
daemon_stop
check "the store is seeded with the dashboard's jobs" $PY "$TOP/tests/web/seed.py" "$TMP/data/tlblab.db" dashboard
# -w: the web/ of this tree, whichever build directory the binary is in
DAEMON_WEB="$TOP/web"
DAEMON_ARGS="-w $DAEMON_WEB" daemon_start "$TMP/lab.yaml" ||
	{ fail "tlblabd serves web/" "did not start: $(tail -n 5 "$DAEMON_LOG")"; exit 0; }

# a running job holds m1, the next one waits for it
held=
for who in dave erin; do
	held="$held $(api POST /jobs "{\"suite\":\"hold\",\"machines\":[\"m1\"],\"submitter\":\"$who\"}" "$TOKEN" |
		jq_py 'J["job"]["id"]')"
done
set -- $held
state=$(job_wait "${1:-0}" running 30)
[ "$state" = running ] && [ "$(job_wait "${2:-0}" queued 5)" = queued ] &&
	pass "a running job ($1) and a queued one ($2) from the API" || fail "running and queued jobs" "job ${1:-?} is $state"

# the seeded A/B jobs are done without a verdict, as ones from before
# comparisons were kept: the scheduler computes them in the background (a
# job a second, newest first), and nobody here asks for their comparison;
# job 1 and job 6 (the per-patch series' whole) are regressions, job 5 (its
# first patch) is not
end=$(($(date +%s) + 20))
while :; do
	ids=$(curl -s -m 5 "$URL/api/v1/jobs?verdict=regression" | jq_py '" ".join(str(j["id"]) for j in J["jobs"])' 2>/dev/null)
	[ "$ids" = "6 1" ] || [ "$(date +%s)" -ge $end ] && break
	sleep 0.3
done
[ "$ids" = "6 1" ] && pass "jobs 1 and 6 get their verdict (regression) in the background: GET /jobs?verdict=regression lists them" ||
	fail "the verdicts are backfilled" "GET /jobs?verdict=regression lists [${ids}] after 20 s"

# the dashboard's files come from tlblabd, with the types a browser needs
ctype() { curl -s -o /dev/null -w '%{http_code} %{content_type}' "$URL$1"; }
t=$(ctype /jobs/1)
case "$t" in "200 text/html"*) pass "/jobs/1 is the dashboard page ($t)" ;; *) fail "/jobs/1 is the dashboard page" "$t" ;; esac
t=$(ctype /js/app.js)
case "$t" in "200 text/javascript"*) pass "the app's modules are served as JavaScript" ;; *) fail "app.js type" "$t" ;; esac
t=$(ctype /node_modules/uplot/dist/uPlot.esm.js)
case "$t" in "200 text/javascript"*) pass "uPlot is served from web/node_modules" ;; *) fail "uPlot served" "$t" ;; esac
# a second load revalidates: the Last-Modified of the first, sent back as
# If-Modified-Since, is a 304 without a body; another date gets the file
lm=$(curl -s -D - -o /dev/null "$URL/js/app.js" | sed -n 's/^[Ll]ast-[Mm]odified: *//p' | tr -d '\r')
t=$(curl -s -o "$TMP/static.body" -w '%{http_code} %{size_download}' -H "If-Modified-Since: $lm" "$URL/js/app.js")
t2=$(curl -s -o /dev/null -w '%{http_code}' -H 'If-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT' "$URL/js/app.js")
[ -n "$lm" ] && [ "$t" = "304 0" ] && [ "$t2" = 200 ] &&
	pass "app.js again with If-Modified-Since: $lm is a 304" ||
	fail "a static file is a 304 when unchanged" "Last-Modified '$lm'; with it: $t; with an older date: $t2"

mkdir -p "$ART"
rm -f "$ART"/*.png
TLBLAB_URL=$URL TLBLAB_TOKEN=$TOKEN ARTIFACTS=$ART node "$TOP/tests/web/dashboard.test.mjs" 2>&1
st=$?
n=$(ls "$ART"/*.png 2>/dev/null | wc -l)
[ "$n" -ge 8 ] && pass "$n screenshots in $ART" || fail "screenshots" "$n in $ART"
if [ $st != 0 ]; then
	echo "# dashboard.test.mjs exited $st; the daemon log ends:"
	tail -n 15 "$DAEMON_LOG" | sed 's/^/#   /'
fi
exit 0
