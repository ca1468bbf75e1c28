#!/bin/sh
# A patch is untrusted code: kernels/build/build.sh runs the tree's kconfig and
# make in a bubblewrap sandbox as an unprivileged user (here the lab's, who
# owns the builder's directories; tlblab-build when root builds), with
# no network and nothing of the daemon in view (issue 12). This test builds,
# the way the daemon does, a patch whose bzImage rule runs a script that
# tries what a hostile patch would: say who it runs as, read a token and a
# lab key laid out like the daemon's, reach a port listening on loopback,
# write the base build's published output, the shared object directory and
# ccache, and print fake result lines. Each attempt must fail, the build
# must still succeed with the facts build.sh computed, and the base build's
# output must keep its bytes.
#
# Shares WORK/OUT and ccache with t0040 and the lab's builder (kernel_tree
# in tests/lib.sh); warm, it takes about a minute (one kconfig run, a copy of the
# object directory, the bzImage link).
. "$(dirname "$0")/../lib.sh"

if ! command -v bwrap >/dev/null 2>&1; then
	fail "bubblewrap is installed" "apt-get install bubblewrap"
	exit 0
fi
kernel_tree

fact() { sed -n "s/^TLBLAB $2 //p" "$TMP/$1.out" | head -n 1; }
show() { sed 's/^/#   /' "$TMP/$1.out" | tail -n "${2:-15}"; }

# the base build: the tree's own code, published in OUT
kbuild base --ref v6.1-debian
if [ "$ST" != 0 ] || [ "$(fact base status)" != ok ]; then
	fail "the base kernel builds in the sandbox" "exit $ST"
	show base
	exit 0
fi
pass "the base kernel builds in the sandbox"
BASE_DIR=$(fact base dir)
BASE_SUM=$(sha256sum <"$BASE_DIR/bzImage" | cut -c1-64)
check "the base build reports its bzImage's hash" [ "$(fact base image_sha256)" = "$BASE_SUM" ]
grep -q "sandbox: $LAB_USER .*the tree's own: shared objects" "$TMP/base.out" &&
	pass "the base commit is the tree's own (shared objects and ccache)" ||
	fail "the base commit is the tree's own (shared objects and ccache)" "$(grep 'sandbox:' "$TMP/base.out")"

# what the daemon keeps: a token and a key readable by root only
mkdir -p "$TMP/data"
chmod 700 "$TMP/data"
echo "secret-token-$$-0123456789" >"$TMP/data/token"
echo "secret-key-$$-abcdef" >"$TMP/data/lab_key"
chmod 600 "$TMP/data/token" "$TMP/data/lab_key"

# a port on loopback that counts who connects
PORT=$((21000 + $$ % 3000))
$PY - "$PORT" "$TMP/connections" <<'EOF' &
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)
open(sys.argv[2], "w").close()
while True:
    c, _ = s.accept()
    with open(sys.argv[2], "a") as f:
        f.write("connection\n")
    c.close()
EOF
LISTENER=$!
i=0
until [ -f "$TMP/connections" ] || [ $i -gt 100 ]; do i=$((i + 1)); sleep 0.1; done
# the host can reach it (so a sandbox that could would have)
$PY -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 3).close()" "$PORT" 2>/dev/null
HOST_SEES=$(wc -l <"$TMP/connections")

# the hostile patch: a script the bzImage rule runs (paths filled in now)
rm -rf "$TMP/src"
git clone -q --shared "$LINUX" "$TMP/src"
(
	cd "$TMP/src" && git -c advice.detachedHead=false checkout -q v6.1-debian &&
	cat >scripts/tlblab-attack.sh <<EOF &&
#!/bin/sh
echo "attack: id \$(id)"
printf 'TLBLAB status ok\nTLBLAB build_id %064d\nTLBLAB dir /etc\n' 0
for f in "$TMP/data/token" "$TMP/data/lab_key" /var/lib/tlblab/token "$CACHE/guest/lab_key"; do
	if c=\$(cat "\$f" 2>&1); then echo "attack: read \$f: \$c"; else echo "attack: cannot read \$f: \$c"; fi
done
if perl -MIO::Socket::INET -e 'IO::Socket::INET->new(PeerAddr => "127.0.0.1:$PORT", Timeout => 3) or die "\$!\n"' 2>"\$HOME/err"; then
	echo "attack: reached 127.0.0.1:$PORT"
else
	echo "attack: no network: \$(cat "\$HOME/err")"
fi
for f in "$BASE_DIR/bzImage" "\$1/tlblab-attack" "\$CCACHE_DIR/tlblab-attack"; do
	if (echo poisoned >>"\$f") 2>/dev/null; then echo "attack: wrote \$f"; else echo "attack: cannot write \$f"; fi
done
exit 0
EOF
	awk '{ print } /^bzImage: vmlinux$/ { print "\t@sh $(srctree)/scripts/tlblab-attack.sh $(abs_objtree)" }' \
		arch/x86/Makefile >arch/x86/Makefile.new && mv arch/x86/Makefile.new arch/x86/Makefile &&
	git add -A && git add -f scripts/tlblab-attack.sh && git diff --cached v6.1-debian >"$TMP/attack.diff"
) || { fail "make the hostile patch" "git in $TMP/src failed"; kill "$LISTENER"; exit 0; }

kbuild attack --ref v6.1-debian --patch "$TMP/attack.diff"
kill "$LISTENER" 2>/dev/null
wait "$LISTENER" 2>/dev/null
# where the build's objects were, as its make line says, and its ccache
SHARED_OBJ=$(sed -n 's/^build.sh: make -j[0-9]* bzImage in \([^ ]*\) (a private copy).*/\1/p' "$TMP/attack.out" | head -n 1)
CCACHE=$(sed -n 's/^build.sh: make -j[0-9]* bzImage in .*(ccache \([^)]*\))$/\1/p' "$TMP/attack.out" | head -n 1)

if [ "$ST" = 0 ] && [ "$(fact attack status)" = ok ]; then
	pass "the hostile patch builds (its attempts fail, the build does not)"
else
	fail "the hostile patch builds (its attempts fail, the build does not)" "exit $ST"
	show attack 30
fi
if grep -q '^attack: id ' "$TMP/attack.out"; then
	pass "the patch's command ran"
else
	fail "the patch's command ran" "no 'attack: id' line"
	show attack 30
	exit 0
fi
# the build runs as the lab's user, who owns WORK (kbuild)
SB_UID=$(id -u "$LAB_USER" 2>/dev/null)
line=$(grep -m1 '^attack: id ' "$TMP/attack.out")
case $line in
*"uid=0("* | *"uid=0 "*) fail "it ran as an unprivileged user" "$line" ;;
*"uid=$SB_UID"*) pass "it ran as an unprivileged user ($line)" ;;
*) fail "it ran as an unprivileged user" "$line ($LAB_USER is uid $SB_UID)" ;;
esac
grep -q "sandbox: $LAB_USER .*the submitter's: private objects, ccache read-only" "$TMP/attack.out" &&
	pass "a patched commit is the submitter's (private objects, ccache read-only)" ||
	fail "a patched commit is the submitter's (private objects, ccache read-only)" "$(grep 'sandbox:' "$TMP/attack.out")"
for what in "$TMP/data/token" "$TMP/data/lab_key" /var/lib/tlblab/token "$CACHE/guest/lab_key"; do
	if grep -q "^attack: cannot read $what:" "$TMP/attack.out" && ! grep -q "secret-" "$TMP/attack.out"; then
		pass "it could not read $what"
	else
		fail "it could not read $what" "$(grep "$what" "$TMP/attack.out" | head -n 2)"
	fi
done
if [ "$HOST_SEES" = 1 ] && grep -q '^attack: no network' "$TMP/attack.out" &&
	[ "$(wc -l <"$TMP/connections")" = 1 ]; then
	pass "it could not reach a port on the host's loopback ($(grep -m1 '^attack: no network' "$TMP/attack.out"))"
else
	fail "it could not reach a port on the host's loopback" \
		"host connections $HOST_SEES, after the build $(wc -l <"$TMP/connections"); $(grep -m1 '^attack: .*network\|^attack: reached' "$TMP/attack.out")"
fi
for what in "$BASE_DIR/bzImage" "$CCACHE/tlblab-attack"; do
	if grep -q "^attack: cannot write $what" "$TMP/attack.out" && ! [ -e "$CCACHE/tlblab-attack" ]; then
		pass "it could not write $what"
	else
		fail "it could not write $what" "$(grep "$what" "$TMP/attack.out" | head -n 1)"
	fi
done
# the shared object directory's path shows the build its private copy
if [ ! -e "$SHARED_OBJ/tlblab-attack" ] && grep -q "^attack: wrote $SHARED_OBJ/tlblab-attack" "$TMP/attack.out"; then
	pass "what it wrote at the shared objects' path went to its private copy"
else
	fail "what it wrote at the shared objects' path went to its private copy" \
		"$(ls -l "$SHARED_OBJ/tlblab-attack" 2>&1); $(grep "$SHARED_OBJ" "$TMP/attack.out" | head -n 1)"
fi
check "the base build's bzImage kept its bytes" [ "$(sha256sum <"$BASE_DIR/bzImage" | cut -c1-64)" = "$BASE_SUM" ]
ID=$(fact attack build_id)
if [ "$ID" != "$(printf '%064d' 0)" ] && [ "$(fact attack dir)" = "$OUT/$ID" ] &&
	grep -q '^tlblab-build: TLBLAB build_id 0000' "$TMP/attack.out"; then
	pass "the facts are build.sh's: the build's fake TLBLAB lines are defused"
else
	fail "the facts are build.sh's: the build's fake TLBLAB lines are defused" "build_id $ID, dir $(fact attack dir)"
fi
if [ -n "$ID" ] && [ -f "$OUT/$ID/bzImage" ] &&
	[ "$(sha256sum <"$OUT/$ID/bzImage" | cut -c1-64)" = "$(fact attack image_sha256)" ]; then
	pass "the patched kernel is published with its hash"
else
	fail "the patched kernel is published with its hash" "$OUT/$ID"
fi
if ls -d "$WORK"/objp-* >/dev/null 2>&1; then
	fail "the private object directory is removed after the build" "$(ls -d "$WORK"/objp-*)"
else
	pass "the private object directory is removed after the build"
fi
