#!/bin/sh
# First render of the dashboard's job page for an A/B job with 500
# comparison rows (50 metrics x 10 thread counts, 5 boots per side), in
# Debian's chromium against a real tlblabd serving web/ and a real store:
# navigation start to the comparison table in the DOM, median of 10 loads
# with the HTTP cache off. Target: under 300 ms.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$TOP/$BUILD" ;; esac
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
port=$((30000 + $$ % 5000))
cat >"$tmp/lab.yaml" <<EOC
lab:
  data_dir: $tmp/data
  listen: 127.0.0.1:$port
  tokens: [bench-token-0123456789]
machines:
  - name: m1
    transport: local
builders:
  - name: b1
    transport: local
trees:
  - name: linux
    url: /nonexistent
    builder: b1
suites:
  - name: tlb
    workloads:
      - workload: mprotect
EOC
start() {
	"$BUILD/tlblabd" -c "$tmp/lab.yaml" -w "$TOP/web" >>"$tmp/daemon.log" 2>&1 &
	pid=$!
	i=0
	until curl -fs "http://127.0.0.1:$port/api/v1/health" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -gt 100 ] && { echo "bench: the daemon did not start"; cat "$tmp/daemon.log"; exit 1; }
		sleep 0.1
	done
}
start
kill "$pid"; wait "$pid" 2>/dev/null; pid=
/usr/bin/python3 "$TOP/tests/web/seed.py" "$tmp/data/tlblab.db" bench 500 || exit 1
start
# the comparison is computed once and kept: the scheduler does it for a
# done A/B job without a verdict, as at the end of a real job
i=0
until curl -s "http://127.0.0.1:$port/api/v1/jobs/1" | /usr/bin/python3 -c \
	'import json,sys; sys.exit(json.load(sys.stdin)["job"]["verdict"] is None)' 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt 600 ] && { echo "bench: job 1 has no verdict after 60 s"; tail -n 5 "$tmp/daemon.log"; exit 1; }
	sleep 0.1
done
node "$TOP/tests/web/render.bench.mjs" "http://127.0.0.1:$port/jobs/1" 10
