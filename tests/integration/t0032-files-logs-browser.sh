#!/bin/sh
# What a security review of a running tlblabd looks at (issue 12, section 4):
# the modes of the data_dir, the store and the token files (made so, and
# tightened when an older run left them looser); the guests' private host
# key (kernels/mkinitramfs.sh); the patch file a build leaves on its
# builder; a machine-health reason that would forge a log line; the
# dashboard's framing headers, the Host check against DNS rebinding, and
# what of web/ is served (a copy of web/ with links and dotfiles planted in
# it); and the example token of configs/lab.example.yaml, refused.
# Loopback only: a local machine and a local builder whose tree does not
# exist (the build fails after the patch was uploaded).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
trap 'daemon_cleanup; rm -rf "$TMP"' EXIT

daemon_test 20000
mode() { stat -c %a "$1" 2>/dev/null || echo missing; }

# an older lab's leftovers: a data_dir and token files anyone could read
ADMIN=t0032-admin-0123456789abcdef
mkdir -m 755 "$TMP/data"
(umask 022; echo "$TOKEN" >"$TMP/tokens"; echo "$ADMIN" >"$TMP/admin-tokens")
{
	lab_yaml "$TMP/data" "token_file: $TMP/tokens" "admin_token_file: $TMP/admin-tokens" \
		"allowed_hosts: [tlblab.lab.example.org]"
	echo machines:
	lab_yaml_machine m1
	lab_yaml_builder "transport: local" "workdir: $TMP/builder"
	echo suites:
	lab_yaml_mprotect_suite quick "" "workers: 1" "duration: 0.2"
} >"$TMP/lab.yaml"

# 1. the example token is refused, inline or in the token file, at its line;
# the daemon does not start with it (timeout: a daemon that did would stay)
sed "s|^  token_file: .*|  tokens: [example-token-change-me-0001]|" "$TMP/lab.yaml" >"$TMP/example.yaml"
check_fails "the example token inline is refused at its line" 1 \
	"example.yaml:4:12: tokens\[0\]: it is the example token of configs/lab.example.yaml" \
	"$BUILD/tlblabd" -n -c "$TMP/example.yaml"
printf '# ours\nexample-token-change-me-0001\n' >"$TMP/example-tokens"
sed "s|^  token_file: .*|  token_file: $TMP/example-tokens|" "$TMP/lab.yaml" >"$TMP/example2.yaml"
check_fails "the example token in the token file is refused at its line" 1 \
	"example2.yaml:4:15: token_file: $TMP/example-tokens:2: it is the example token" \
	timeout 20 "$BUILD/tlblabd" -c "$TMP/example2.yaml"
check_fails "configs/lab.example.yaml as shipped is refused for its token" 1 \
	"lab.example.yaml:[0-9]+:[0-9]+: tokens\[0\]: it is the example token" \
	"$BUILD/tlblabd" -n -c "$TOP/configs/lab.example.yaml"

# 2. modes: made so, and tightened (with a line saying so)
daemon_start "$TMP/lab.yaml" || { fail "tlblabd starts" "see log"; exit 0; }
m="data_dir $(mode "$TMP/data"), tlblab.db $(mode "$TMP/data/tlblab.db"), -wal $(mode "$TMP/data/tlblab.db-wal"), -shm $(mode "$TMP/data/tlblab.db-shm"), token file $(mode "$TMP/tokens"), admin token file $(mode "$TMP/admin-tokens")"
[ "$m" = "data_dir 700, tlblab.db 600, -wal 600, -shm 600, token file 600, admin token file 600" ] &&
	pass "after start-up: $m" || fail "data_dir 0700, store and token file 0600" "$m"
grep -q "$TMP/data: mode was 0755, now 0700" "$DAEMON_LOG" && grep -q "$TMP/tokens: mode was 0644, now 0600" "$DAEMON_LOG" &&
	grep -q "$TMP/admin-tokens: mode was 0644, now 0600" "$DAEMON_LOG" &&
	pass "the daemon logs what it tightened" || fail "a line per tightened mode" "$(grep 'mode was' "$DAEMON_LOG")"
daemon_stop
chmod 644 "$TMP/data/tlblab.db"
chmod 755 "$TMP/data"

# a copy of web/ with what must not be served planted in it
W=$TMP/web
mkdir -p "$W/node_modules/uplot/dist" "$TMP/outside"
cp -R "$TOP/web/index.html" "$TOP/web/app.css" "$TOP/web/js" "$TOP/web/package.json" "$TOP/web/package-lock.json" "$W/"
echo 'secret' >"$TMP/outside/secret.js"
echo '{"name":"uplot"}' >"$W/node_modules/uplot/package.json"
echo '{}' >"$W/node_modules/.package-lock.json"
echo 'export default 1;' >"$W/node_modules/uplot/dist/uPlot.esm.js"
echo '.u{}' >"$W/node_modules/uplot/dist/uPlot.min.css"
echo 'iife' >"$W/node_modules/uplot/dist/uPlot.iife.js"
ln -s "$TMP/outside/secret.js" "$W/js/secret.js"
ln -s "$TMP/outside" "$W/out"
ln -s /etc/passwd "$W/passwd.txt"
echo 'hidden' >"$W/.hidden.js"
mkdir "$W/.git" && echo '[core]' >"$W/.git/config"

DAEMON_ARGS="-w $W" daemon_start "$TMP/lab.yaml" || { fail "tlblabd restarts with the copy of web/" "see log"; exit 0; }
m="data_dir $(mode "$TMP/data"), tlblab.db $(mode "$TMP/data/tlblab.db")"
[ "$m" = "data_dir 700, tlblab.db 600" ] && grep -q "tlblab.db: mode was 0644, now 0600" "$DAEMON_LOG" &&
	pass "a store left 0644 is tightened at the next start ($m)" || fail "the store tightened" "$m"

# 3. a newline in a reason does not forge a log line
reason='disk\n2030-01-01T00:00:00Z tlblabd: job 7: done\u001b[2J'
api POST /machines/m1/health "{\"health\":\"maintenance\",\"reason\":\"$reason\"}" "$ADMIN" >/dev/null
if [ "$HTTP_STATUS" = 200 ] && ! grep -q '^2030-01-01T00:00:00Z tlblabd: job 7' "$DAEMON_LOG" &&
	grep -qF 'machine m1: maintenance (disk\n2030-01-01T00:00:00Z tlblabd: job 7: done\x1b[2J)' "$DAEMON_LOG" &&
	! grep -q "$(printf '\033')" "$DAEMON_LOG"; then
	pass "a reason's newline and ESC are logged escaped, on the reason's line"
else
	fail "a reason cannot forge a log line" "status $HTTP_STATUS; $(grep -A1 'machine m1' "$DAEMON_LOG" | head -n 3)"
fi
api POST /machines/m1/health '{"health":"unknown"}' "$ADMIN" >/dev/null

# 4. the dashboard: not in a frame
curl -s -D "$TMP/h" -o /dev/null "$URL/jobs/1"
tr -d '\r' <"$TMP/h" >"$TMP/headers"
grep -qi "^content-security-policy: default-src 'self'; .*frame-ancestors 'none'" "$TMP/headers" &&
	grep -qi '^x-frame-options: DENY$' "$TMP/headers" &&
	pass "dashboard pages: CSP frame-ancestors 'none' (beside default-src 'self') and X-Frame-Options: DENY" ||
	fail "framing headers" "$(grep -i 'security-policy\|frame-options' "$TMP/headers")"

# 5. Host: this lab's names only
code() { curl -s -o "$TMP/body" -w '%{http_code}' "$@"; }
c1=$(code -H 'Host: evil.example' "$URL/api/v1/health")
b1=$(cat "$TMP/body")
c2=$(code -H "Host: evil.example:$DAEMON_PORT" "$URL/")
c3=$(code -H "Host: localhost.evil.example:$DAEMON_PORT" "$URL/api/v1/jobs")
c4=$(code -H 'Host: evil.example' -H "Authorization: Bearer $TOKEN" -d '{"suite":"quick"}' "$URL/api/v1/jobs")
[ "$c1 $c2 $c3 $c4" = "421 421 421 421" ] && echo "$b1" | grep -q '"code":"misdirected"' &&
	pass "another Host name gets 421 with a JSON error, API and dashboard alike" ||
	fail "Host check" "$c1 $c2 $c3 $c4: $b1"
c1=$(code "$URL/api/v1/health")
c2=$(code -H "Host: localhost:$DAEMON_PORT" "$URL/api/v1/health")
c3=$(code -H 'Host: tlblab.lab.example.org' "$URL/")
c4=$(code -H "Host: [::1]:$DAEMON_PORT" "$URL/api/v1/health")
[ "$c1 $c2 $c3 $c4" = "200 200 200 200" ] && pass "127.0.0.1, localhost, [::1] and an allowed_hosts name are answered" ||
	fail "allowed Host names" "$c1 $c2 $c3 $c4"
[ "$(api GET /jobs | jq_py 'J["total"]')" = 0 ] && pass "the refused POST queued nothing" || fail "refused POST" "a job exists"

# 6. web/: the dashboard's files, nothing else
got=
for p in /package.json /package-lock.json /node_modules/uplot/package.json /node_modules/.package-lock.json \
	/node_modules/uplot/dist/uPlot.iife.js /js/secret.js /out/secret.js /passwd.txt /.hidden.js /.git/config \
	/js/../.hidden.js /%2e%2e/t0032.js; do
	got="$got $p=$(code "$URL$p")"
done
case "$got" in *=2*|*=3*) fail "only the dashboard's files" "$got" ;; *) pass "404: package files, node_modules/ but uPlot, links out of web/, dotfiles:$got" ;; esac
got="$(code "$URL/node_modules/uplot/dist/uPlot.esm.js") $(code "$URL/node_modules/uplot/dist/uPlot.min.css") $(code "$URL/js/app.js") $(code "$URL/")"
[ "$got" = "200 200 200 200" ] && pass "what the pages load is served (uPlot's module and CSS, app.js, index.html)" ||
	fail "the dashboard's files" "$got"

# 7. the patch a build read does not stay on the builder. tlblabd -k runs a
# build.sh of the test's: the base builds (fake artifacts), the patched
# side notes its --patch file (so the check below is not vacuous) and fails
# as a compile error would.
daemon_stop
kernels_stub "$TMP/kernels"
cat >"$TMP/kernels/build/build.sh" <<EOB
#!/bin/sh
out= patch=
while [ \$# -gt 1 ]; do
	case \$1 in --out) out=\$2 ;; --patch) patch=\$2 ;; esac
	shift 2
done
if [ -n "\$patch" ]; then
	stat -c '%a %n' "\$patch" >>"$TMP/patch-seen"
	echo "TLBLAB status failed"
	echo "TLBLAB message x.c:1: error: fake"
	exit 11
fi
id=\$(printf '%064d' 1)
mkdir -p "\$out/\$id"
for f in bzImage config System.map build.log meta.json; do echo fake >"\$out/\$id/\$f"; done
echo "TLBLAB status ok"
echo "TLBLAB build_id \$id"
echo "TLBLAB dir \$out/\$id"
echo "TLBLAB arch x86_64"
echo "TLBLAB image bzImage"
echo "TLBLAB image_sha256 \$(sha256sum <"\$out/\$id/bzImage" | cut -c1-64)"
EOB
DAEMON_ARGS="-k $TMP/kernels" daemon_start "$TMP/lab.yaml" || { fail "tlblabd restarts with a test build.sh" "see log"; exit 0; }
patch='--- a/mm/x.c
+++ b/mm/x.c
@@ -1 +1 @@
-a
+b
'
id=$(api POST /jobs "$($PY -c 'import json,sys; print(json.dumps({"suite":"quick","tree":"linux","base":"v6.1","boots":1,"patch":sys.argv[1]}))' "$patch")" "$TOKEN" |
	jq_py 'J["job"]["id"]')
state=$(job_wait "$id" "failed done cancelled" 120)
scripts=$TMP/builder/tlblab/scripts
seen=$(cat "$TMP/patch-seen" 2>/dev/null)
# job-ID-PID.patch: the daemon's pid keeps two daemons on one builder apart
pf=$scripts/job-$id-$DAEMON_PID.patch
if [ "$state" = failed ] && [ "$seen" = "600 $pf" ] && [ ! -e "$pf" ]; then
	pass "build.sh read $pf (mode 600); once the build failed, it is gone"
else
	fail "the patch file is removed after the build" "job ${id:-?} $state; build.sh saw '$seen'; $scripts: $(ls "$scripts" 2>&1 | tr '\n' ' ')"
fi
daemon_stop

# 8. the guests' keys (kernels/mkinitramfs.sh)
if [ ! -x /bin/busybox ] || [ ! -x /usr/sbin/sshd ]; then
	skip "the guest initramfs and its keys are not world-readable" "no busybox-static or sshd"
elif TLBLAB_GUEST_PERF=0 TLBLAB_GUEST_STRESS_NG=0 sh "$TOP/kernels/mkinitramfs.sh" "$TMP/guest" "$BUILD/tlblab-agent" >"$TMP/mkinit.log" 2>&1; then
	g=$TMP/guest
	m="dir $(mode "$g"), host_key $(mode "$g/host_key"), lab_key $(mode "$g/lab_key"), initramfs.cpio $(mode "$g/initramfs.cpio"), known_hosts $(mode "$g/known_hosts")"
	[ "$m" = "dir 700, host_key 600, lab_key 600, initramfs.cpio 600, known_hosts 644" ] &&
		cpio -t <"$g/initramfs.cpio" 2>/dev/null | grep -qx 'etc/ssh/ssh_host_ed25519_key' &&
		pass "the guests' private keys and the initramfs holding the host key: $m" ||
		fail "the guest initramfs and its keys are not world-readable" "$m"
else
	fail "mkinitramfs.sh" "$(tail -n 5 "$TMP/mkinit.log")"
fi
exit 0
