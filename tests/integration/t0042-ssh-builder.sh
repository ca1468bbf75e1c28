#!/bin/sh
# A builder reached over SSH, as a real lab builds: an OpenSSH server on
# 127.0.0.7 (its host key checked), its own workdir
# ($CACHE/ssh-builder, kept between runs so only the first run builds the
# base from cold objects; it shares t0040's ccache through the builder's
# ccache: key). The daemon uploads build.sh and the patch over SSH and
# build.sh sandboxes the build there (issue 12): an A/B job of a one-line
# patch (a comment unique to this run, so the patched kernel is really
# built every time) boots both kernels on the QEMU guest and ends done.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
. "$TOP/tests/sshd.sh"
trap 'daemon_cleanup; sshd_cleanup; rm -rf "$TMP"' EXIT

CACHE=${TLBLAB_CACHE:-/var/cache/tlblab}
TOKEN=t0042-token-0123456789abcdef
DAEMON_PORT=$((16000 + $$ % 1000))	# below the ephemeral range (32768-)
GUEST_PORT=10030
CLIENT=$BUILD/tlblab
MACHINE=vm1
REMOTE=$CACHE/ssh-builder
export TLBLAB_SERVER="http://127.0.0.1:$DAEMON_PORT" TLBLAB_TOKEN=$TOKEN
. "$TOP/tests/guest.sh"

guest_prepare usr/sbin/sshd
sshd_keys "$TMP/keys" || { fail "ssh keys" "ssh-keygen failed"; exit 0; }
if ! sshd_start builder 127.0.0.7 "$(sshd_port 2)"; then
	fail "sshd for the builder starts on 127.0.0.7" "see above"
	exit 0
fi
pass "sshd for the builder listens on 127.0.0.7:$(sshd_port 2)"

{ lab_qemu_head; cat <<EOC
builders:
  - name: remote
    transport: ssh
    host: 127.0.0.7
    port: $(sshd_port 2)
    user: root
    identity: $SSHD_IDENTITY
    known_hosts: $SSHD_KNOWN_HOSTS
    jobs: 2
    workdir: $REMOTE
    ccache: $CACHE/work-test/ccache
trees:
  - name: linux
    url: $CACHE/linux
    builder: remote
    fragments: [$TOP/kernels/fragments/lab-required.config, $TOP/kernels/fragments/qemu-x86_64.config]
suites:
  - name: quick
    timeout: 600
    workloads:
      - workload: mprotect
        mode: [processes]
        workers: 2
        duration: 1
        iterations: 2
EOC
} >"$TMP/lab.yaml"
DAEMON_AGENT=$GUEST_AGENT daemon_start "$TMP/lab.yaml" || { fail "tlblabd starts" "see log"; exit 0; }

# the patch: a comment that names this run
rm -rf "$TMP/src"
git clone -q --shared "$CACHE/linux" "$TMP/src" && (cd "$TMP/src" &&
	git -c advice.detachedHead=false checkout -q v6.1-debian &&
	printf '/* tlblab t0042 run %s-%s: a comment only */\n' "$(date +%s)" "$$" >>mm/mprotect.c &&
	git diff v6.1-debian >"$TMP/comment.diff") || { fail "make the patch" "git in $TMP/src"; exit 0; }

t0=$(date +%s)
id=$("$CLIENT" submit --json --suite quick --tree linux --base v6.1-debian --patch "$TMP/comment.diff" \
	--boots 1 --max-boots 1 --submitter t0042 | jq_py 'J["job"]["id"]')
state=$(job_wait "$id" "done failed cancelled" 3000)
if [ "$state" = done ]; then
	pass "an A/B job built on the SSH builder is done in $(($(date +%s) - t0)) s"
else
	fail "an A/B job built on the SSH builder" "$state: $(api GET "/jobs/$id" | jq_py "J['job']['error']")"
fi
api GET "/jobs/$id" >"$TMP/job.json"
# the build logs, as the API gives them
for side in base patched; do
	sid=$(jq_py "[g['id'] for g in J['job']['stages'] if g['kind'] == 'build' and g['side'] == '$side'][0]" <"$TMP/job.json")
	curl -fs -H "Authorization: Bearer $TOKEN" "$TLBLAB_SERVER/api/v1/jobs/$id/stages/$sid/log" >"$TMP/log.$side"
done
if grep -q "== build base on remote" "$TMP/log.base" && grep -q "== build patched on remote" "$TMP/log.patched"; then
	pass "both kernels were built by the builder 'remote' (over SSH)"
else
	fail "both kernels were built by the builder 'remote' (over SSH)" "$(head -c 300 "$TMP/log.patched")"
fi
if grep -q "sandbox: tlblab-build (uid [0-9]*), no network; .* is the submitter's: private objects, ccache read-only" "$TMP/log.patched" &&
	grep -q "make -j2 bzImage in $REMOTE/tlblab/work-linux/obj-[0-9a-f]* (a private copy)" "$TMP/log.patched"; then
	pass "the patched kernel was built in the sandbox there, in a private copy of the objects"
else
	fail "the patched kernel was built in the sandbox there" "$(grep -E 'sandbox:|bzImage in' "$TMP/log.patched" | head -n 3)"
fi
if [ -d "$REMOTE/tlblab/out" ] && ! ls "$REMOTE"/tlblab/scripts/job-*.patch >/dev/null 2>&1; then
	pass "the builder keeps its outputs in its own workdir, and no patch file is left there"
else
	fail "the builder keeps its outputs in its own workdir" "$(ls "$REMOTE/tlblab" "$REMOTE/tlblab/scripts" 2>&1 | tr '\n' ' ')"
fi
# this run's patched kernel is of no use to the next one
pid=$(jq_py '[g.get("build_id") for g in J["job"]["stages"] if g["kind"] == "build" and g["side"] == "patched"][0]' <"$TMP/job.json")
case $pid in *[!0-9a-f]* | '') ;; *) rm -rf "${REMOTE:?}/tlblab/out/$pid" "$TMP/data/builds/$pid" ;; esac
