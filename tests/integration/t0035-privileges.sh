#!/bin/sh
# tlblabd off root (lab.user): started as root, it becomes the lab's own user
# before it opens the store or answers a request, for good (its real, saved
# and effective ids, and no supplementary group of root's), with no
# capability left in any set, no_new_privs set, and none of the operator's
# environment (GIT_*, SSH_*, a token) but the knobs build.sh reads; a
# data_dir that is not that user's, a builder work directory or tree of
# another owner's, or a user that does not exist, stops it at start with
# the fix; as root without lab.user it says it stays root. The user is
# scripts/deps.sh's (tlblab), which `make test` runs first.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
trap 'daemon_cleanup; rm -rf "$TMP"' EXIT

daemon_test 24000
if [ "$(id -u)" != 0 ]; then
	skip "tlblabd drops root" "not root: nothing to drop"
	exit 0
fi
if ! id -u tlblab >/dev/null 2>&1; then
	fail "the user tlblab exists" "scripts/deps.sh test makes it"
	exit 0
fi
uid=$(id -u tlblab)
# the daemon's user reaches its data_dir through the test's directory
chmod 711 "$TMP"
mkdir "$TMP/data"
chown tlblab: "$TMP/data"
lab_yaml "$TMP/data" "user: tlblab" "tokens: [$TOKEN]" >"$TMP/lab.yaml"

# what an operator's root shell may hold: none of it is the daemon's business
GIT_CANARY=1 GIT_SSH_COMMAND=/tmp/x SSH_AUTH_SOCK=/tmp/x TLBLAB_TOKEN=t0035-operator-token TLBLAB_MIN_FREE_MB=7
export GIT_CANARY GIT_SSH_COMMAND SSH_AUTH_SOCK TLBLAB_TOKEN TLBLAB_MIN_FREE_MB
daemon_start "$TMP/lab.yaml"
started=$?
unset GIT_CANARY GIT_SSH_COMMAND SSH_AUTH_SOCK TLBLAB_TOKEN TLBLAB_MIN_FREE_MB
if [ "$started" = 0 ]; then
	ids=$(awk '/^(Uid|Gid):/ { printf "%s %s %s %s %s;", $1, $2, $3, $4, $5 }' "/proc/$DAEMON_PID/status")
	groups=$(awk '/^Groups:/ { $1 = ""; print }' "/proc/$DAEMON_PID/status" | tr -d ' ')
	gid=$(id -g tlblab)
	if [ "$ids" = "Uid: $uid $uid $uid $uid;Gid: $gid $gid $gid $gid;" ] && [ "$groups" = "$gid" ]; then
		pass "started as root with lab.user tlblab, tlblabd runs as tlblab ($ids groups $groups)"
	else
		fail "started as root with lab.user tlblab, tlblabd runs as tlblab" "$ids groups '$groups'"
	fi
	check "its log says so" grep -q "running as tlblab (uid $uid), root dropped" "$DAEMON_LOG"
	caps=$(awk '/^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):/ { printf "%s %s;", $1, $2 }' "/proc/$DAEMON_PID/status")
	want="CapInh: 0000000000000000;CapPrm: 0000000000000000;CapEff: 0000000000000000;"
	want="${want}CapBnd: 0000000000000000;CapAmb: 0000000000000000;NoNewPrivs: 1;"
	if [ "$caps" = "$want" ]; then
		pass "it holds no capability, not even in its bounding set, and no_new_privs is set ($caps)"
	else
		fail "it holds no capability, not even in its bounding set, and no_new_privs is set" "$caps"
	fi
	# /proc/PID/environ is the block the process started with; what it
	# keeps of it its children show (t0038)
	tr '\0' '\n' <"/proc/$DAEMON_PID/environ" | grep . | sort >"$TMP/environ"
	if ! grep -Eq 'GIT_|SSH_|TLBLAB_TOKEN|t0035-operator-token' "$TMP/environ"; then
		pass "none of the operator's GIT_*, SSH_* or TLBLAB_TOKEN is left in /proc/<tlblabd>/environ"
	else
		fail "none of the operator's GIT_*, SSH_* or TLBLAB_TOKEN is left in /proc/<tlblabd>/environ" \
			"$(grep -E 'GIT_|SSH_|TLBLAB_TOKEN' "$TMP/environ" | tr '\n' ' ')"
	fi
	check "its store is the user's" test "$(stat -c %u "$TMP/data/tlblab.db")" = "$uid"
	body=$(api POST /jobs '{"suite": "nosuch"}' "$TOKEN")
	check "it answers an authorized request as that user (400 for an unknown suite)" \
		test "$(api_status)" = 400
	daemon_stop
else
	fail "tlblabd starts with lab.user tlblab" "see log"
fi

# refused NAME CONFIG MESSAGE: tlblabd -c CONFIG exits non-zero at start
# and prints MESSAGE (a daemon that starts instead is stopped after 20 s)
refused() {
	timeout 20 "$BUILD/tlblabd" -c "$2" >"$TMP/refused.out" 2>&1
	_rc=$?
	if [ "$_rc" != 0 ] && [ "$_rc" != 124 ] && grep -qF "$3" "$TMP/refused.out"; then
		pass "$1 (exit $_rc)"
	else
		fail "$1" "exit $_rc: $(tail -n 2 "$TMP/refused.out")"
	fi
}

# a data_dir root owns: refused, with the fix, and nothing made in it
mkdir "$TMP/rootdata"
lab_yaml "$TMP/rootdata" "user: tlblab" "tokens: [$TOKEN]" >"$TMP/root.yaml"
refused "a data_dir that is not lab.user's stops tlblabd at start, with the fix" "$TMP/root.yaml" \
	"data_dir $TMP/rootdata belongs to uid 0, not to tlblab (lab.user): chown -R tlblab: $TMP/rootdata"
check "and nothing was made in it" test -z "$(ls -A "$TMP/rootdata")"

# a builder's work directory that holds a file of root's (an older
# version's root-run build left it), and a local tree of another user's:
# refused at start, each named with the owner it has and the one it
# needs, and nothing chowned
install -d -o tlblab -g tlblab "$TMP/builder" "$TMP/builder/tlblab" "$TMP/builder/tlblab/work-linux"
: >"$TMP/builder/tlblab/work-linux/.status"
install -d -o nobody "$TMP/othertree"
{
	lab_yaml "$TMP/data" "user: tlblab" "tokens: [$TOKEN]"
	printf 'builders:\n  - name: b1\n    transport: local\n    workdir: %s\n' "$TMP/builder"
	printf 'trees:\n  - name: linux\n    url: %s\n    builder: b1\n' "$TMP/othertree"
} >"$TMP/owners.yaml"
refused "a builder work directory holding a file of root's stops tlblabd at start, naming it" "$TMP/owners.yaml" \
	"builder work directory $TMP/builder/tlblab/work-linux/.status belongs to root; it needs to be tlblab's"
check "and a local tree of another user's is named too" \
	grep -qF "tree $TMP/othertree belongs to nobody; it needs to be tlblab's or root's" "$TMP/refused.out"
check "and nothing was chowned" test "$(stat -c %U "$TMP/builder/tlblab/work-linux/.status") $(stat -c %U "$TMP/othertree")" = "root nobody"

lab_yaml "$TMP/data" "user: no-such-user-of-tlblab" "tokens: [$TOKEN]" >"$TMP/nouser.yaml"
refused "a lab.user that does not exist stops tlblabd at start" "$TMP/nouser.yaml" \
	"lab.user no-such-user-of-tlblab: no such user"

# without lab.user, as root: it runs, and says it stays root
lab_yaml "$TMP/data2" "tokens: [$TOKEN]" >"$TMP/asroot.yaml"
: >"$DAEMON_LOG"
if daemon_start "$TMP/asroot.yaml"; then
	check "as root without lab.user, tlblabd says it stays root" \
		grep -q "running as root: set lab.user" "$DAEMON_LOG"
	daemon_stop
else
	fail "tlblabd starts as root without lab.user" "see log"
fi
exit 0
