#!/bin/sh
# Cancel and fetch (issue 12, section 3) through a real tlblabd with a fake
# lab: a builder whose build.sh (tlblabd -k) is a stand-in that builds in a
# blink or hangs, except for branch jobs, which it hands to the real
# kernels/build/build.sh over a tiny git tree; a QEMU machine whose "qemu" starts
# and never boots. A cancel stops a build, a boot and a git fetch from a
# port that never answers, promptly, as cancelled, never retried; branch
# URLs are one set in the API and build.sh, and build.sh's fetch follows no
# redirect; a patch or branch URL on loopback is refused unless
# lab.fetch_allow allows it, at submit and again when its build starts; a
# fetched patch is built as the bytes it came as (Latin-1 too), one with a
# NUL byte is refused; a failed fetch is the submitter's (class patch), not
# infra retried. t0083 runs it again on a PostgreSQL store (lab_yaml).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
trap 'daemon_cleanup; stop_helpers; rm -rf "$TMP"' EXIT

daemon_test 26000
CANCEL_BOUND=10				# seconds from the cancel to "cancelled"
HELPERS=

stop_helpers() {
	for p in $HELPERS; do kill "$p" 2>/dev/null; done
	[ -f "$TMP/vm/q1/qemu.pid" ] && kill "$(cat "$TMP/vm/q1/qemu.pid")" 2>/dev/null
	[ -f "$TMP/fake-build.pid" ] && kill "$(cat "$TMP/fake-build.pid")" 2>/dev/null
	return 0
}

# wait_for DESCRIPTION SECONDS COMMAND...: wait_until (tests/lib.sh) that
# says what it waited for when the time runs out
wait_for() {
	_what=$1
	shift
	wait_until "$@" || { echo "# timed out waiting for $_what"; return 1; }
}

# ---- the fake lab ----------------------------------------------------------

mkdir -p "$TMP/vm" "$TMP/builder"
kernels_stub "$TMP/kernels"
# build.sh: --fetch goes to the real script; otherwise $TMP/build-mode says
# "ok" (a bzImage at once) or "slow" (prints, then hangs, silent)
cat >"$TMP/kernels/build/build.sh" <<EOF
#!/bin/sh
for a in "\$@"; do
	if [ "\$a" = --fetch ]; then
		TLBLAB_FETCH_TIMEOUT=\$(cat "$TMP/fetch-timeout") TLBLAB_MIN_FREE_MB=1 exec sh "$TOP/kernels/build/build.sh" "\$@"
	fi
done
out= patch=
while [ \$# -gt 0 ]; do
	case \$1 in --out) out=\$2; shift ;; --patch) patch=\$2; shift ;; esac
	shift
done
[ -n "\$patch" ] && cp "\$patch" "$TMP/got-patch"
if [ "\$(cat "$TMP/build-mode")" = slow ]; then
	echo "fake build: compiling"
	echo \$\$ >"$TMP/fake-build.pid"
	exec sleep 300
fi
id=\$(printf '%s' "\$patch\$(date +%s%N)" | sha256sum | cut -c1-64)
$(fake_build_done)
EOF
# qemu: runs (in the daemon's sandbox, which keeps its pid), never prints
cat >"$TMP/fake-qemu" <<'EOF'
#!/bin/sh
exec sleep 300
EOF
chmod +x "$TMP/kernels/build/build.sh" "$TMP/fake-qemu"
echo ok >"$TMP/build-mode"
echo 600 >"$TMP/fetch-timeout"
: >"$TMP/initrd" >"$TMP/key" >"$TMP/known_hosts"

# a tiny "kernel tree": only what build.sh needs before it fetches
git init -q "$TMP/tree" && git -C "$TMP/tree" -c user.name=t -c user.email=t@t commit -q --allow-empty -m base &&
	git -C "$TMP/tree" tag v1 || { fail "a git tree" "git failed"; exit 0; }

lab() { # [FETCH_ALLOW]
	lab_yaml "$TMP/data" "tokens: [$TOKEN]" "stage_timeout: 300" "quiet_host: false" ${1:+"fetch_allow: [$1]"}
	cat <<EOC
machines:
  - name: q1
    transport: local
    boot: qemu
    cpus: 1
    workdir: $TMP/vm
    qemu:
      binary: $TMP/fake-qemu
      accel: tcg
      pin_vcpus: off
      initrd: $TMP/initrd
      ssh_port: 10099
      identity: $TMP/key
      known_hosts: $TMP/known_hosts
builders:
  - name: local
    transport: local
    jobs: 1
    workdir: $TMP/builder
trees:
  - name: t
    url: $TMP/tree
    builder: local
suites:
  - name: quick
    timeout: 300
    workloads:
      - workload: mprotect
        duration: 0.2
        iterations: 1
EOC
}
# the branches of sections 3 and 4 are served on loopback
lab 127.0.0.0/8 >"$TMP/lab.yaml"
# reload [FETCH_ALLOW]: the lab again, and a SIGHUP that it takes
reload() {
	_n=$(grep -c "SIGHUP: configuration reloaded" "$DAEMON_LOG")
	lab "$@" >"$TMP/lab.yaml"
	kill -HUP "$DAEMON_PID"
	wait_for "the reload" 10 sh -c "[ \$(grep -c 'SIGHUP: configuration reloaded' '$DAEMON_LOG') -gt $_n ]"
}
daemon_start_k() { "$BUILD/tlblabd" -c "$1" -k "$TMP/kernels" >>"$DAEMON_LOG" 2>&1 & DAEMON_PID=$!; 
	wait_for "tlblabd" 10 curl -fs -m 1 "http://127.0.0.1:$DAEMON_PORT/api/v1/health"; }
daemon_start_k "$TMP/lab.yaml" || { fail "tlblabd starts" "$(tail -n 5 "$DAEMON_LOG")"; exit 0; }
pass "tlblabd starts with a fake builder and a fake QEMU machine"

PATCH_JSON=$($PY -c 'import json; print(json.dumps("--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+x\n"))')
submit() { # JSON-FRAGMENT (patch, branch or url): prints the job id
	api POST /jobs "{\"suite\":\"quick\",\"tree\":\"t\",\"base\":\"v1\",\"boots\":1,$1}" "$TOKEN" |
		jq_py 'J["job"]["id"]'
}
stage() { # JOB INDEX FIELD (as the submitter reads it: URLs whole)
	api GET "/jobs/$1" '' "$TOKEN" | jq_py "J['job']['stages'][$2]['$3']"
}
stage_is() { [ "$(stage "$1" "$2" state)" = "$3" ]; }
# patch_fails FRAGMENT NAME SHORT GREP_ARG...: the job of FRAGMENT (as for
# submit) fails in its first stage as the submitter's: class patch, attempt
# 0 (not retried as infra), a message grep GREP_ARG... matches; passes
# "NAME: MESSAGE", else fails SHORT. Sets id.
patch_fails() {
	_pf_name=$2 _pf_short=$3
	id=$(submit "$1")
	shift 3
	_pf_st=$(job_wait "$id" "failed done cancelled" 60)
	_pf_cls=$(stage "$id" 1 error_class) _pf_att=$(stage "$id" 1 attempt) _pf_msg=$(stage "$id" 1 error_message)
	if [ "$_pf_st/$_pf_cls/$_pf_att" = failed/patch/0 ] && printf '%s\n' "$_pf_msg" | grep -q "$@"; then
		pass "$_pf_name: $_pf_msg"
	else
		fail "$_pf_short" "$_pf_st/$_pf_cls/attempt $_pf_att: $_pf_msg"
	fi
}
# cancel_within NAME JOB: cancels JOB, passes when it is cancelled within
# CANCEL_BOUND seconds; leaves the seconds it took in $took
cancel_within() {
	_t0=$(date +%s)
	api POST "/jobs/$2/cancel" '' "$TOKEN" >/dev/null
	_st=$(job_wait "$2" "cancelled done failed" $((CANCEL_BOUND + 20)))
	took=$(($(date +%s) - _t0))
	if [ "$_st" = cancelled ] && [ "$took" -le $CANCEL_BOUND ]; then
		pass "$1 (cancelled in ${took} s)"
	else
		fail "$1" "state $_st after $took s: $(api GET "/jobs/$2" | head -c 600)"
	fi
}
# not_retried NAME JOB INDEX: the stage ended cancelled on its first attempt
not_retried() {
	_s=$(stage "$2" "$3" state) _a=$(stage "$2" "$3" attempt) _c=$(stage "$2" "$3" error_class)
	[ "$_s/$_c/$_a" = cancelled/cancelled/0 ] && ! grep -q "will retry" "$DAEMON_LOG" &&
		pass "$1" || fail "$1" "stage $_s, class $_c, attempt $_a; $(grep 'will retry' "$DAEMON_LOG" | head -n 2)"
}

# ---- 1. cancel during a build -------------------------------------------------

echo slow >"$TMP/build-mode"
rm -f "$TMP/fake-build.pid"
id=$(submit "\"patch\":$PATCH_JSON")
if wait_for "the slow build" 30 test -s "$TMP/fake-build.pid"; then
	bpid=$(cat "$TMP/fake-build.pid")
	cancel_within "a job cancelled during its build ends cancelled" "$id"
	not_retried "the cancelled build stage is cancelled, not failed or retried" "$id" 0
	! kill -0 "$bpid" 2>/dev/null && pass "the cancelled build's processes are gone" ||
		fail "build processes" "pid $bpid still runs"
else
	fail "a slow build starts" "$(api GET "/jobs/$id" | head -c 400)"
	api POST "/jobs/$id/cancel" '' "$TOKEN" >/dev/null
fi
job_wait "$id" "cancelled done failed" 30 >/dev/null

# ---- 2. cancel during a boot ---------------------------------------------------

echo ok >"$TMP/build-mode"
id=$(submit "\"patch\":$PATCH_JSON")
if wait_for "the boot" 60 stage_is "$id" 2 running && wait_for "qemu" 30 test -s "$TMP/vm/q1/qemu.pid"; then
	vpid=$(cat "$TMP/vm/q1/qemu.pid")
	cancel_within "a job cancelled during a boot ends cancelled" "$id"
	not_retried "the cancelled boot stage is cancelled, not failed or retried" "$id" 2
	wait_for "the VM to go" 10 sh -c "! kill -0 $vpid" && pass "the cancelled boot's VM is stopped" ||
		fail "VM stopped" "pid $vpid still runs"
else
	fail "a boot starts" "$(api GET "/jobs/$id" | head -c 600)"
fi

# ---- 3. a git:// fetch from a port that never answers -------------------------

# accepts, counts connections, never answers
$PY -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1])); __import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
conns = []
end = time.time() + 600
while time.time() < end:
    c, _ = s.accept(); conns.append(c)
    open(sys.argv[2], "a").write("connection\n")
' "$TMP/silent.port" "$TMP/silent.log" &
HELPERS="$HELPERS $!"
wait_for "the silent listener" 10 test -s "$TMP/silent.port"
SILENT=$(cat "$TMP/silent.port")
: >"$TMP/silent.log"
id=$(submit "\"branch\":{\"url\":\"git://127.0.0.1:$SILENT/linux.git\",\"ref\":\"tlb-fix\"}")
if wait_for "the fetch" 60 sh -c "grep -q connection '$TMP/silent.log'"; then
	cancel_within "a job cancelled during a git:// fetch from a silent port ends cancelled" "$id"
	not_retried "the cancelled fetch is not queued again" "$id" 1
	[ "$(grep -c connection "$TMP/silent.log")" = 1 ] && pass "the silent port saw one fetch, not a retry" ||
		fail "one fetch" "$(grep -c connection "$TMP/silent.log") connections"
else
	fail "the branch fetch starts" "$(api GET "/jobs/$id" | head -c 600); $(api GET "/jobs/$id/stages/$(stage "$id" 1 id)/log" | tail -n 5)"
fi

# the same fetch left alone: bounded by TLBLAB_FETCH_TIMEOUT, the submitter's
echo 2 >"$TMP/fetch-timeout"
patch_fails "\"branch\":{\"url\":\"git://127.0.0.1:$SILENT/linux.git\",\"ref\":\"tlb-fix\"}" \
	"a git fetch that never answers fails after its timeout, class patch, not retried" \
	"a silent fetch times out as the submitter's" "did not finish within 2 s"
echo 600 >"$TMP/fetch-timeout"

# a branch that does not exist: class patch with git's message
patch_fails "\"branch\":{\"url\":\"git://127.0.0.1:1/nothing.git\",\"ref\":\"main\"}" \
	"a branch that cannot be fetched is class patch, not infra retried" "an unfetchable branch" \
	"cannot fetch main from git://127.0.0.1:1/nothing.git"

# a pack over TLBLAB_FETCH_MAX_KB: build.sh stops it at the limit, says so
# (class ref), and leaves no partial pack; under the limit the same fetch works
GITD_PORT=$((DAEMON_PORT + 3000))
git init -q "$TMP/bigsrc" && head -c 524288 /dev/urandom >"$TMP/bigsrc/blob" &&
	git -C "$TMP/bigsrc" add blob && git -C "$TMP/bigsrc" -c user.name=t -c user.email=t@t commit -qm big &&
	mkdir -p "$TMP/gitd" && git clone -q --bare "$TMP/bigsrc" "$TMP/gitd/big.git" ||
	{ fail "a 512 KB repository" "git failed"; exit 0; }
git daemon --export-all --base-path="$TMP/gitd" --listen=127.0.0.1 --port="$GITD_PORT" --reuseaddr \
	>"$TMP/gitd.log" 2>&1 &
HELPERS="$HELPERS $!"
BIG=git://127.0.0.1:$GITD_PORT/big.git
if wait_for "git daemon" 10 git ls-remote "$BIG"; then
	TLBLAB_MIN_FREE_MB=1 TLBLAB_FETCH_MAX_KB=64 sh "$TOP/kernels/build/build.sh" --tree "$TMP/tree" --work "$TMP/wbig" \
		--ref v1 --config-base tinyconfig --out "$TMP/obig" --fetch "$BIG" --fetch-ref master >"$TMP/big.out" 2>&1
	rc=$?
	left=$(find "$TMP/wbig/src/.git/objects/pack" -name 'tmp_pack_*' | wc -l)
	if [ $rc = 13 ] && grep -q "TLBLAB class ref" "$TMP/big.out" &&
		grep -q "TLBLAB message git fetch of master from $BIG: the pack is larger than 64 KB" "$TMP/big.out" &&
		[ "$left" = 0 ]; then
		pass "a 512 KB pack with TLBLAB_FETCH_MAX_KB=64 is refused as the submitter's, no partial pack left"
	else
		fail "a pack over the bound" "exit $rc, $left partial packs: $(grep TLBLAB "$TMP/big.out" | head -n 3)"
	fi
	TLBLAB_MIN_FREE_MB=1 sh "$TOP/kernels/build/build.sh" --tree "$TMP/tree" --work "$TMP/wbig" \
		--ref v1 --config-base tinyconfig --out "$TMP/obig" --fetch "$BIG" --fetch-ref master >"$TMP/big.out" 2>&1
	grep -q "master at $BIG is $(git -C "$TMP/bigsrc" rev-parse HEAD)" "$TMP/big.out" &&
		pass "the same pack under the default bound is fetched" ||
		fail "the same pack under the default bound" "$(grep -E 'TLBLAB (class|message)' "$TMP/big.out")"
else
	fail "git daemon on 127.0.0.1:$GITD_PORT" "did not answer: $(tail -n 2 "$TMP/gitd.log")"
fi

# a branch that moved (an HTTP redirect): build.sh's fetch does not follow
# it, so a host the lab checked cannot send git on to one it did not; the
# same repository at its own URL is fetched (a TLS server of the test's,
# dumb HTTP, with redirects of /moved.git to /real.git)
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/tls.key" -out "$TMP/tls.crt" -subj /CN=127.0.0.1 \
	-days 1 >/dev/null 2>&1 && mkdir -p "$TMP/https" && git clone -q --bare "$TMP/bigsrc" "$TMP/https/real.git" &&
	git -C "$TMP/https/real.git" update-server-info || { fail "a repository served over TLS" "openssl or git failed"; exit 0; }
$PY - "$TMP/https" "$TMP/https.port" "$TMP/https.log" "$TMP/tls.crt" "$TMP/tls.key" <<'PYEOF' >/dev/null 2>&1 &
import http.server, os, ssl, sys
root, port_file, log, crt, key = sys.argv[1:6]
class H(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"	# closes TLS as git's TLS expects
    def __init__(self, *a, **k):
        super().__init__(*a, directory=root, **k)
    def do_GET(self):
        open(log, "a").write(self.path + "\n")
        if self.path.startswith("/moved.git/"):
            self.send_response(301)
            self.send_header("Location", "/real.git/" + self.path[len("/moved.git/"):])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        super().do_GET()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(crt, key)
s.socket = ctx.wrap_socket(s.socket, server_side=True)
open(port_file + ".tmp", "w").write(str(s.server_address[1])); os.rename(port_file + ".tmp", port_file)
s.serve_forever()
PYEOF
HELPERS="$HELPERS $!"
if wait_for "the TLS server" 10 test -s "$TMP/https.port"; then
	MOVED=https://127.0.0.1:$(cat "$TMP/https.port")/moved.git REAL=https://127.0.0.1:$(cat "$TMP/https.port")/real.git
	GIT_SSL_NO_VERIFY=true TLBLAB_MIN_FREE_MB=1 sh "$TOP/kernels/build/build.sh" --tree "$TMP/tree" --work "$TMP/wmoved" \
		--ref v1 --config-base tinyconfig --out "$TMP/omoved" --fetch "$MOVED" --fetch-ref master >"$TMP/moved.out" 2>&1
	rc=$?
	if [ $rc = 13 ] && grep -q "TLBLAB class ref" "$TMP/moved.out" &&
		grep -q "TLBLAB message cannot fetch master from $MOVED" "$TMP/moved.out" && ! grep -q '^/real.git' "$TMP/https.log"; then
		pass "a branch URL that redirects is not followed: class ref, and git asked nothing of where it pointed"
	else
		fail "a redirect not followed" "exit $rc: $(grep -E 'TLBLAB (class|message)' "$TMP/moved.out"); asked: $(tr '\n' ' ' <"$TMP/https.log")"
	fi
	GIT_SSL_NO_VERIFY=true TLBLAB_MIN_FREE_MB=1 sh "$TOP/kernels/build/build.sh" --tree "$TMP/tree" --work "$TMP/wmoved" \
		--ref v1 --config-base tinyconfig --out "$TMP/omoved" --fetch "$REAL" --fetch-ref master >"$TMP/real.out" 2>&1
	grep -q "master at $REAL is $(git -C "$TMP/bigsrc" rev-parse HEAD)" "$TMP/real.out" &&
		pass "the same repository at its own URL is fetched" ||
		fail "the repository at its own URL" "$(grep -E 'TLBLAB (class|message)' "$TMP/real.out")"
else
	fail "a TLS server on 127.0.0.1" "it did not start"
fi

# ---- 4. branch URLs: one set in the API and build.sh --------------------------

mkdir -p "$TMP/cwd/http:/evil.example" "$TMP/cwd/https:/x"
bad=0 good=0
while read -r want url; do
	case $want in ok | bad) ;; *) continue ;; esac
	(cd "$TMP/cwd" && sh "$TOP/kernels/build/build.sh" --tree "$TMP/no-such-tree" --work "$TMP/w" --ref v1 \
		--config-base tinyconfig --out "$TMP/o" --fetch "$url" --fetch-ref main) >"$TMP/bs.out" 2>&1
	rc=$?
	if [ "$want" = bad ]; then
		if [ $rc = 13 ] && grep -q "is neither an https:// or git:// URL" "$TMP/bs.out"; then
			bad=$((bad + 1))
		else
			fail "build.sh refuses '$url'" "exit $rc: $(tail -n 2 "$TMP/bs.out")"
		fi
		api POST /jobs "{\"suite\":\"quick\",\"tree\":\"t\",\"base\":\"v1\",\"branch\":{\"url\":\"$url\",\"ref\":\"main\"}}" "$TOKEN" >/dev/null
		[ "$HTTP_STATUS" = 400 ] || fail "the API refuses '$url'" "HTTP $HTTP_STATUS"
	else
		# past the URL check, build.sh stops at the missing tree
		if [ $rc = 1 ] && grep -q -- "--tree .* is not a directory" "$TMP/bs.out"; then
			good=$((good + 1))
		else
			fail "build.sh takes '$url'" "exit $rc: $(tail -n 2 "$TMP/bs.out")"
		fi
	fi
done <"$TOP/tests/fixtures/branch-urls.txt"
[ $bad -gt 5 ] && [ $good -gt 3 ] &&
	pass "build.sh and the API agree on tests/fixtures/branch-urls.txt ($good taken, $bad refused; test_util holds url_valid to it)" ||
	fail "branch URL agreement" "$good taken, $bad refused"
body=$(api POST /jobs "{\"suite\":\"quick\",\"tree\":\"t\",\"base\":\"v1\",\"branch\":{\"url\":\"http://evil.example/x\",\"ref\":\"main\"}}" "$TOKEN")
[ "$(api_status)" = 400 ] && echo "$body" | grep -q "https:// or git://" &&
	pass "an http:// branch URL is refused by the API (400), and build.sh does not read it as a local path" ||
	fail "http:// branch" "$(api_status) $body"

# ---- 5. patch and branch URLs: loopback refused unless lab.fetch_allow -------

mkdir -p "$TMP/www"
printf -- '--- a/y\n+++ b/y\n@@ -0,0 +1 @@\n+served\n' >"$TMP/www/fix.patch"
$PY -c '
import http.server, os, sys, functools
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
s = http.server.HTTPServer(("127.0.0.1", 0), h)
open(sys.argv[2] + ".tmp", "w").write(str(s.server_address[1])); os.rename(sys.argv[2] + ".tmp", sys.argv[2])
s.timeout = 600; s.serve_forever()
' "$TMP/www" "$TMP/www.port" >/dev/null 2>&1 &
HELPERS="$HELPERS $!"
wait_for "the patch server" 10 test -s "$TMP/www.port"
WWW=$(cat "$TMP/www.port")

# without fetch_allow: refused when submitted, naming the field and the host
reload
rm -f "$TMP/got-patch"
refused() { # NAME JSON-FRAGMENT MESSAGE-START: 400, the message, no job stored
	_n0=$(api GET "/jobs?limit=1" | jq_py 'J["total"]')
	_body=$(api POST /jobs "{\"suite\":\"quick\",\"tree\":\"t\",\"base\":\"v1\",\"boots\":1,$2}" "$TOKEN")
	_st=$(api_status)
	_msg=$(echo "$_body" | jq_py 'J["error"]["message"]')
	_n1=$(api GET "/jobs?limit=1" | jq_py 'J["total"]')
	case "$_st/$_msg/$_n1" in
	"400/$3"*"/$_n0") pass "$1: $_msg" ;;
	*) fail "$1" "$_st $_msg; jobs $_n0 then $_n1" ;;
	esac
}
refused "a patch URL on loopback is refused without lab.fetch_allow (400)" "\"url\":\"http://127.0.0.1:$WWW/fix.patch\"" \
	"url: host 127.0.0.1: refused: 127.0.0.1 is a loopback address (not in lab.fetch_allow)"
check "a patch URL on loopback is not fetched without lab.fetch_allow" test ! -e "$TMP/got-patch"
refused "a host name that resolves to loopback is refused too" "\"url\":\"http://localhost:$WWW/fix.patch\"" \
	"url: host localhost: refused: localhost resolves to"
refused "a branch URL on loopback is refused the same way" \
	"\"branch\":{\"url\":\"git://127.0.0.1:$GITD_PORT/big.git\",\"ref\":\"master\"}" \
	"branch.url: host 127.0.0.1: refused: 127.0.0.1 is a loopback address (not in lab.fetch_allow)"

# a branch taken under fetch_allow, whose build starts once the policy has
# changed (the builder is busy meanwhile): refused then, class patch
reload 127.0.0.0/8
echo slow >"$TMP/build-mode"
rm -f "$TMP/fake-build.pid"
busy=$(submit "\"patch\":$PATCH_JSON")
wait_for "the slow build" 30 test -s "$TMP/fake-build.pid"
id=$(submit "\"branch\":{\"url\":\"git://127.0.0.1:$GITD_PORT/big.git\",\"ref\":\"master\"}")
reload
echo ok >"$TMP/build-mode"
api POST "/jobs/$busy/cancel" '' "$TOKEN" >/dev/null
st=$(job_wait "$id" "failed done cancelled" 60)
cls=$(stage "$id" 1 error_class) msg=$(stage "$id" 1 error_message)
if [ "$st/$cls" = failed/patch ] &&
	echo "$msg" | grep -q "build: the branch at git://127.0.0.1:$GITD_PORT/big.git: host 127.0.0.1: refused: 127.0.0.1 is a loopback address"; then
	pass "a branch taken under fetch_allow is refused at its build once the policy no longer allows it: $msg"
else
	fail "a branch refused at its build" "$st/$cls: $msg"
fi

reload 127.0.0.0/8
id=$(submit "\"url\":\"http://127.0.0.1:$WWW/fix.patch\"")
if wait_for "the patched build" 60 test -s "$TMP/got-patch" && cmp -s "$TMP/got-patch" "$TMP/www/fix.patch"; then
	pass "with fetch_allow: [127.0.0.0/8] the same URL is fetched and built"
else
	fail "fetch_allow takes loopback" "$(api GET "/jobs/$id" | head -c 600)"
fi
api POST "/jobs/$id/cancel" '' "$TOKEN" >/dev/null
job_wait "$id" "cancelled done failed" 30 >/dev/null

# a mail in Latin-1 is kept and built as the bytes it came as (a text
# column of PostgreSQL would refuse them: store/postgres 0019); a NUL byte
# makes it no text at all, the submitter's
printf -- 'Subject: [PATCH] caf\351\n\n--- a/y\n+++ b/y\n@@ -0,0 +1 @@\n+d\351j\340 vu\n' >"$TMP/www/latin1.patch"
rm -f "$TMP/got-patch"
id=$(submit "\"url\":\"http://127.0.0.1:$WWW/latin1.patch\"")
if wait_for "the Latin-1 patch's build" 60 test -s "$TMP/got-patch" && cmp -s "$TMP/got-patch" "$TMP/www/latin1.patch" &&
	[ "$(stage "$id" 1 attempt)" = 0 ]; then
	pass "a fetched patch in Latin-1 is kept and built byte for byte, on its first attempt"
else
	fail "a fetched patch in Latin-1 is built" "$(stage "$id" 1 state) attempt $(stage "$id" 1 attempt): $(stage "$id" 1 error_message)"
fi
api POST "/jobs/$id/cancel" '' "$TOKEN" >/dev/null
job_wait "$id" "cancelled done failed" 30 >/dev/null
printf -- '--- a/y\n+++ b/y\n@@ -0,0 +1 @@\n+a\000b\n' >"$TMP/www/nul.patch"
patch_fails "\"url\":\"http://127.0.0.1:$WWW/nul.patch\"" "a fetched patch with a NUL byte is class patch, naming the url" \
	"a patch with a NUL byte" -F "url: the patch at http://127.0.0.1:$WWW/nul.patch is not text (a NUL byte at offset 32)"

# ---- 6. a patch URL that fails: the submitter's --------------------------------

for what in "http://127.0.0.1:$WWW/no-such.patch|HTTP 404" "http://127.0.0.1:1/fix.patch|connect"; do
	url=${what%%|*} want=${what#*|}
	patch_fails "\"url\":\"$url\"" "a patch URL that fails ($want) is class patch, not infra retried" \
		"failed patch fetch ($want)" -i "$want"
done
