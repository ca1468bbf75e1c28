#!/bin/sh
# First render of the dashboard's job page for an A/B job with 500
# comparison rows (50 metrics x 10 thread counts, 5 boots per side), in
# Debian's chromium against a real tlblabd serving web/ and a real store:
# navigation start to the comparison table in the DOM, median of 10 loads
# with the HTTP cache off. Target: under 300 ms.
set -u
PORT_BASE=30000
. "$(dirname "$0")/lib.sh"
fill /usr/bin/python3 "$TOP/tests/web/seed.py" "$tmp/data/tlblab.db" bench 500
start
# the comparison is computed once and kept: the scheduler does it for a
# done A/B job without a verdict, as at the end of a real job
i=0
until curl -s "http://127.0.0.1:$port/api/v1/jobs/1" | /usr/bin/python3 -c \
	'import json,sys; sys.exit(json.load(sys.stdin)["job"]["verdict"] is None)' 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt 600 ] && { echo "bench: job 1 has no verdict after 60 s"; tail -n 5 "$DAEMON_LOG"; exit 1; }
	sleep 0.1
done
node "$TOP/tests/web/render.bench.mjs" "http://127.0.0.1:$port/jobs/1" 10
