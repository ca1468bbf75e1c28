#!/bin/sh
# Every line the agent prints, in a run that measures (with a perf profile)
# and in one whose command fails, is valid against schemas/agent.schema.json,
# the contract the daemon validates agent output with. The schema itself must
# be a valid draft 2020-12 schema, and must reject lines that break it.
. "$(dirname "$0")/../lib.sh"

SCHEMA="$TOP/schemas/agent.schema.json"

# validate FILE: every line of FILE is one JSON object valid against the
# schema; prints the first few violations with their line numbers.
validate() {
	$PY - "$SCHEMA" "$1" <<'PYEOF'
import json, sys
from jsonschema import Draft202012Validator
v = Draft202012Validator(json.load(open(sys.argv[1])))
bad = 0
n = 0
for no, line in enumerate(open(sys.argv[2]), 1):
    n += 1
    try:
        obj = json.loads(line)
    except ValueError as e:
        print("line %d: not JSON: %s: %.200s" % (no, e, line))
        bad += 1
        continue
    for e in sorted(v.iter_errors(obj), key=lambda e: list(e.absolute_path)):
        print("line %d (%s): at /%s: %.300s" % (no, obj.get("type") if isinstance(obj, dict) else "?",
              "/".join(str(p) for p in e.absolute_path), e.message))
        bad += 1
if n == 0:
    print("no lines")
sys.exit(1 if bad or n == 0 else 0)
PYEOF
}

# agent_run NAME STATUS OUT ARG...: runs the agent with ARGs (stdout in
# $TMP/OUT.out, stderr in $TMP/OUT.err); checks "NAME exits STATUS" and
# "NAME: every line matches the schema"
agent_run() {
	_ar_name=$1 _ar_want=$2 _ar_out=$TMP/$3
	shift 3
	"$AGENT" "$@" >"$_ar_out.out" 2>"$_ar_out.err"
	check_status "$_ar_name exits $_ar_want" "$_ar_want" $? "$_ar_out.err"
	check "$_ar_name: every line matches the schema" validate "$_ar_out.out"
}

check "schema is a valid draft 2020-12 schema" $PY -c '
import json, sys
from jsonschema import Draft202012Validator
Draft202012Validator.check_schema(json.load(open(sys.argv[1])))' "$SCHEMA"

# ---- a measuring run, with a profile when perf can record here ----
profile=--profile
why_no_profile=
if [ "$(id -u)" != 0 ]; then
	profile= why_no_profile="not root"
elif ! command -v perf >/dev/null 2>&1; then
	profile= why_no_profile="perf not installed"
fi
# shellcheck disable=SC2086
agent_run "mprotect run" 0 mp run --workload mprotect --workers 2 --duration 0.5 --iterations 2 $profile
if pyjson "$TMP/mp.out" "L[0]['type'] == 'hello' and L[-1]['type'] == 'result' and len(by('result')) == 1 and len(by('iteration')) == 3 and len(by('sample')) >= 3 and not by('error')"; then
	pass "mprotect run: hello first, result last, 1 warm-up + 2 iterations, samples"
else
	fail "mprotect run: hello first, result last, 1 warm-up + 2 iterations, samples" \
		"types: $(cut -c1-20 "$TMP/mp.out" | tr '\n' ' ')"
fi
if [ -n "$profile" ]; then
	# measured iterations carry a profile whose symbols are bare names
	# (perf 6.x prints IPC columns after the symbol)
	if pyjson "$TMP/mp.out" "all('profile' in i and i['profile']['samples'] > 0 and i['profile']['symbols'] and i['profile']['folded'] and all('  ' not in s['symbol'] and not s['symbol'].endswith('-') for s in i['profile']['symbols']) for i in by('iteration') if not i['warmup']) and all('profile' not in i for i in by('iteration') if i['warmup'])"; then
		pass "mprotect run: measured iterations have a profile with clean symbols"
	else
		fail "mprotect run: measured iterations have a profile with clean symbols" \
			"$(grep -o '"profile":{"samples":[^]]*' "$TMP/mp.out" | cut -c1-300)"
	fi
else
	skip "mprotect run: measured iterations have a profile" "$why_no_profile"
fi

# ---- a failing command ----
agent_run "failing exec" 1 ex run --workload exec --parser last-number -- sh -c 'echo partial output; exit 3'
if pyjson "$TMP/ex.out" "len(by('error')) == 1 and by('error')[0]['stage'] == 'workload' and 'exit status 3' in by('error')[0]['message'] and 'partial output' in by('error')[0]['message'] and by('error')[0]['params']['command'] == ['sh', '-c', 'echo partial output; exit 3'] and L[-1]['type'] == 'result' and L[-1]['status'] == 'failed'"; then
	pass "failing exec: an error line naming the exit status, then result failed"
else
	fail "failing exec: an error line naming the exit status, then result failed" \
		"$(grep -o '"type":"error".\{0,200\}' "$TMP/ex.out")"
fi

# ---- fault-write: its shape and rounds in the params ----
agent_run "fault-write run" 0 fw run --workload fault-write --vma one,per-round --workers 2 --rounds 100 \
	--duration 10 --iterations 1 --warmup 0
if pyjson "$TMP/fw.out" "[i['params']['vma'] for i in by('iteration')] == ['one', 'per-round'] and all(i['params']['rounds'] == 100 and i['info']['fault-write.total_sec']['direction'] == 'lower' for i in by('iteration'))"; then
	pass "fault-write run: params name the shape and rounds; total_sec is lower-is-better"
else
	fail "fault-write run: params name the shape and rounds; total_sec is lower-is-better" \
		"$(grep -o '"params":{[^}]*}' "$TMP/fw.out" | head -n 2)"
fi

# ---- hello alone, and an id echoed in the result ----
"$AGENT" hello >"$TMP/hello.out" 2>&1
check "hello command: its line matches the schema" validate "$TMP/hello.out"
echo '{"workload":"mprotect","duration":0.2,"iterations":1,"warmup":0,"id":"job-7","monitors":[]}' |
	agent_run "spec run with an id and no monitors" 0 id run --spec -
if pyjson "$TMP/id.out" "L[-1]['type'] == 'result' and L[-1]['id'] == 'job-7'"; then
	pass "spec run: the result echoes the id"
else
	fail "spec run: the result echoes the id" "$(tail -n 1 "$TMP/id.out" | cut -c1-300)"
fi

# ---- the schema can fail: lines that break the protocol are rejected ----
cat >"$TMP/bad.jsonl" <<'EOF'
{"type":"sample","t":1.0,"dt":1.0,"case":0,"iteration":0,"warmup":false,"window":true}
{"type":"sample","t":1.0,"dt":0,"case":0,"iteration":0,"warmup":false,"window":true,"values":{}}
{"type":"sample","t":1.0,"dt":1.0,"case":0,"iteration":0,"warmup":false,"window":true,"values":{"interrupts.TLB":"12"}}
{"type":"hello","protocol":1,"agent_version":"0.1.0","host":{"kernel_release":"6.1.0"}}
{"type":"iteration","case":0,"iteration":0,"warmup":false,"params":{"workload":"mprotect","mode":"threads"},"duration_s":1,"metrics":{"a":1},"info":{"a":{"unit":"ops/s","direction":"up"}},"unavailable":{}}
{"type":"iteration","case":-1,"iteration":0,"warmup":false,"params":{"workload":"mprotect","mode":"threads"},"duration_s":1,"metrics":{},"info":{},"unavailable":{}}
{"type":"result","status":"done","elapsed_s":1,"cases":[],"unavailable":{}}
{"type":"iteration","case":0,"iteration":0,"warmup":false,"params":{"workload":"fault-write","mode":"threads","vma":"two"},"duration_s":1,"metrics":{},"info":{},"unavailable":{}}
{"type":"error","message":"no stage"}
{"type":"shout"}
{"no":"type"}
EOF
if $PY - "$SCHEMA" "$TMP/bad.jsonl" >"$TMP/bad.log" 2>&1 <<'PYEOF'
import json, sys
from jsonschema import Draft202012Validator
v = Draft202012Validator(json.load(open(sys.argv[1])))
accepted = [l.strip() for l in open(sys.argv[2]) if v.is_valid(json.loads(l))]
for l in accepted:
    print("accepted:", l)
sys.exit(1 if accepted else 0)
PYEOF
then
	pass "schema rejects each of 11 malformed lines"
else
	fail "schema rejects each of 11 malformed lines" "$(head -c 600 "$TMP/bad.log")"
fi
