#!/bin/sh
# kernels/build/build.sh on the real imported tree (Debian's linux-source-6.1), the
# way the daemon runs it: a base build with every result line, artifact and
# meta.json field; the same build again (cached); the 0001 demo patch built
# incrementally on top; fetching a branch; and each failure class with the
# excerpt a developer needs (patch, build, config, ref), an image that is
# not the kernel make wrote (refused, nothing stored), plus refs, and a
# script set not whole (a part missing or spoiled, build.sh read from
# stdin), that must be refused before anything runs.
#
# WORK and OUT are the lab builder's (${TLBLAB_CACHE:-/var/cache/tlblab}/tlblab/
# work-linux and out, kernel_tree in tests/lib.sh), and every build runs as
# their owner, the lab's user, as the daemon's do (kbuild): they share its
# checkout and ccache with make demo's jobs, so only the very first run
# (make demo's or this one) builds a kernel from
# cold (606 s on 2 cores, ccache off for that first build, in the fresh
# make test on 7aa7871; 811 s through an empty ccache on d29d488); later runs
# take about a minute and a half (95 s alone, warm), most of it the
# incremental rebuild of the patched kernel (forced on every run, so that
# path is always exercised), two kconfig runs and the stale-image check's
# two base builds.
. "$(dirname "$0")/../lib.sh"

PATCHES=$TOP/kernels/patches
FIX=$TOP/tests/fixtures

for tool in git make gcc ccache flock flex bison bc; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		fail "kernel build tools" "$tool is missing (apt-get install git make gcc ccache flex bison bc libelf-dev libssl-dev)"
		exit 0
	fi
done
kernel_tree
BASE_COMMIT=$(git -C "$LINUX" rev-parse 'v6.1-debian^{commit}')
COMPILER=$(gcc --version | head -n 1)

# fact NAME KEY: the value of the "TLBLAB KEY value" line of build NAME.
fact() { sed -n "s/^TLBLAB $2 //p" "$TMP/$1.out" | head -n 1; }
# show NAME: the end of build NAME's output, for a failed check.
show() { sed 's/^/#   /' "$TMP/$1.out" | tail -n "${2:-15}"; }
# expect_failure NAME STATUS CLASS [EXCERPT_PATTERN]: checks a failed build;
# the pattern (grep -E) must match the start of one excerpt line.
expect_failure() {
	if [ "$ST" = "$2" ] && [ "$(fact "$1" status)" = failed ] && [ "$(fact "$1" class)" = "$3" ] &&
		[ -n "$(fact "$1" message)" ] && { [ -z "${4:-}" ] || grep -Eq "^TLBLAB excerpt $4" "$TMP/$1.out"; }; then
		if [ -n "${4:-}" ]; then
			pass "$1: exit $2, class $3, excerpt: $(grep -E -m1 "^TLBLAB excerpt $4" "$TMP/$1.out" | cut -c16-)"
		else
			pass "$1: exit $2, class $3: $(fact "$1" message)"
		fi
	else
		fail "$1" "exit $ST (want $2), class '$(fact "$1" class)' (want $3), excerpt /${4:-}/"
		show "$1"
	fi
}

SUCCESS_KEYS="status build_id commit config_hash compiler cached dir duration warnings kernelrelease build_host"
# expect_success NAME CACHED: every success fact present, artifacts there;
# CACHED is 0, 1 or any.
expect_success() {
	_why=
	[ "$ST" = 0 ] || _why="exit $ST"
	for k in $SUCCESS_KEYS; do
		[ -n "$(fact "$1" "$k")" ] || _why="$_why; no TLBLAB $k line"
	done
	[ "$(fact "$1" status)" = ok ] || _why="$_why; status not ok"
	case $2:$(fact "$1" cached) in
	any:[01] | 0:0 | 1:1) ;;
	*) _why="$_why; cached '$(fact "$1" cached)', want $2" ;;
	esac
	_d=$(fact "$1" dir)
	[ "$_d" = "$OUT/$(fact "$1" build_id)" ] || _why="$_why; dir $_d is not OUT/build_id"
	for a in bzImage config System.map build.log meta.json; do
		[ -s "$_d/$a" ] || _why="$_why; no $a"
	done
	# The facts are the last lines: nothing but TLBLAB lines after the first.
	if awk '/^TLBLAB / { t = 1; next } t { bad = 1 } END { exit !bad }' "$TMP/$1.out"; then
		_why="$_why; output after the TLBLAB lines"
	fi
	if [ -z "$_why" ]; then
		return 0
	fi
	fail "$1" "${_why#; }"
	show "$1"
	return 1
}

# ---- the base build -------------------------------------------------------

SEEN=$WORK/.ccache-compilers
FIRST=yes
if grep -qxF -- "$COMPILER" "$SEEN" 2>/dev/null; then FIRST=no; fi
kbuild base --ref v6.1-debian
if expect_success base any; then
	pass "base build at v6.1-debian: $(fact base build_id | cut -c1-12), cached $(fact base cached), $(fact base duration)s"
else
	echo "# the base build failed; the other checks need it"
	exit 0
fi

# ccache is off for gcc's first build in WORK, into a new object dir (an
# empty cache only adds its preprocessing); afterwards WORK lists gcc, and
# builds go through ccache. A cold object dir compiles over 1000 files.
OFF=no
if grep -q '^build.sh: ccache: the first build with .*: ccache off' "$TMP/base.out"; then OFF=yes; fi
NCC=$(grep -c '^  CC ' "$TMP/base.out" || true)
if ! grep -qxF -- "$COMPILER" "$SEEN" 2>/dev/null; then
	fail "WORK lists the compiler that built in it" "$SEEN lacks '$COMPILER'"
elif [ "$FIRST" = yes ] && [ "$NCC" -gt 1000 ]; then
	[ "$OFF" = yes ] &&
		pass "gcc's first build in WORK ($NCC files compiled) ran with ccache off, and WORK lists gcc now ($(fact base duration)s)" ||
		fail "gcc's first build in WORK runs with ccache off" "$(grep -m1 'build.sh: make' "$TMP/base.out")"
else
	[ "$OFF" = no ] &&
		pass "WORK lists gcc, and a build that is not gcc's first there keeps ccache on (first: $FIRST, $NCC files compiled)" ||
		fail "a build that is not gcc's first in WORK keeps ccache on" "$(grep -m1 'ccache off' "$TMP/base.out")"
fi
BASE_ID=$(fact base build_id)
BASE_DIR=$OUT/$BASE_ID

# meta.json and the artifacts say what the TLBLAB lines say, and the build
# id is what the interface defines: sha256(commit \n .config \n compiler).
if $PY - "$BASE_DIR" "$BASE_COMMIT" "$COMPILER" "$TMP/base.out" >"$TMP/meta.out" 2>&1 <<'EOF'
import hashlib, json, re, sys
d, commit, compiler, outfile = sys.argv[1:]
facts = dict(l.rstrip("\n")[7:].split(" ", 1) for l in open(outfile) if l.startswith("TLBLAB "))
m = json.load(open(d + "/meta.json"))
config = open(d + "/config", "rb").read()
want = {"build_id", "commit", "base_ref", "config_hash", "compiler", "duration_s", "warnings",
        "kernelrelease", "build_host", "cached"}
assert want <= set(m), "meta.json lacks %s" % (want - set(m))
assert m["commit"] == commit == facts["commit"], "commit"
assert m["base_ref"] == "v6.1-debian", "base_ref"
assert m["build_id"] == facts["build_id"], "build_id"
assert m["config_hash"] == hashlib.sha256(config).hexdigest() == facts["config_hash"], "config_hash"
assert m["compiler"] == compiler == facts["compiler"], "compiler"
bid = hashlib.sha256(commit.encode() + b"\n" + config + b"\n" + compiler.encode()).hexdigest()
assert m["build_id"] == bid, "build_id is not sha256(commit, config, compiler)"
assert m["build_host"] == "b-" + bid[:12] == facts["build_host"], "build_host"
assert re.fullmatch(r"6\.1\.\d+\S*", m["kernelrelease"]) and m["kernelrelease"] == facts["kernelrelease"], "kernelrelease"
assert isinstance(m["duration_s"], int) and isinstance(m["warnings"], int) and m["cached"] == 0, "types"
assert str(m["warnings"]) == facts["warnings"], "warnings"
for opt in ("CONFIG_SMP=y", "CONFIG_DEBUG_TLBFLUSH=y", "CONFIG_VIRTIO_NET=y", "CONFIG_SERIAL_8250_CONSOLE=y"):
    assert opt.encode() + b"\n" in config, opt + " not in config"
img = open(d + "/bzImage", "rb").read(0x210)
assert img[0x202:0x206] == b"HdrS", "bzImage has no Linux boot header"
assert re.search(rb"^[0-9a-f]+ [Tt] flush_tlb_mm_range$", open(d + "/System.map", "rb").read(), re.M), "System.map"
EOF
then
	pass "base artifacts: meta.json fields match the TLBLAB lines, build id = sha256(commit, config, compiler), bzImage has a boot header"
else
	fail "base artifacts" "$(tail -n 1 "$TMP/meta.out")"
fi

# This time kconfig runs again: its .config must be the one the build id
# has (reusing the config of an earlier build with the same inputs is exact).
NO_CONFIG_CACHE=1
kbuild again --ref v6.1-debian
NO_CONFIG_CACHE=0
if expect_success again 1 && [ "$(fact again build_id)" = "$BASE_ID" ] &&
	! grep -q '^  CC ' "$TMP/again.out"; then
	pass "the same build again (config regenerated) is cached: same build id, nothing compiled, $(fact again duration)s"
fi

# ---- the 0001 demo patch, incremental ----------------------------------------

# Two builds of the same patch, one of them real: after the base build (a
# first run), or after removing the artifacts an earlier run left (so the
# incremental path runs every time). Both must make the same commit.
P1=$PATCHES/0001-x86-mm-tlb-flush-every-online-cpu.patch
kbuild p1 --ref v6.1-debian --patch "$P1" --vmlinux
P1_ST=$ST
if [ "$(fact p1 cached)" = 1 ]; then
	mv "$TMP/p1.out" "$TMP/p1-other.out"
	as_lab rm -rf -- "${OUT:?}/$(fact p1-other build_id)"
	kbuild p1 --ref v6.1-debian --patch "$P1" --vmlinux
	P1_ST=$ST
else
	kbuild p1-other --ref v6.1-debian --patch "$P1" --vmlinux
fi
ST=$P1_ST
P1_OTHER_COMMIT=$(fact p1-other commit)
if expect_success p1 0; then
	P1_ID=$(fact p1 build_id)
	P1_COMMIT=$(fact p1 commit)
	ncc=$(grep -c '^  CC ' "$TMP/p1.out" || true)
	# WORK/src is the lab user's: git runs there as that user
	parent=$(as_lab git -C "$WORK/src" rev-parse "$P1_COMMIT^" 2>/dev/null || true)
	if [ "$P1_ID" = "$BASE_ID" ] || [ "$parent" != "$BASE_COMMIT" ]; then
		fail "0001 demo patch" "build id $P1_ID (base $BASE_ID), parent $parent (want $BASE_COMMIT)"
	elif ! grep -q '^  CC      arch/x86/mm/tlb.o' "$TMP/p1.out" || [ "$ncc" -ge 50 ]; then
		fail "0001 demo patch builds incrementally" "$ncc files compiled (want tlb.o and a few others)"
		show p1
	elif [ ! -s "$OUT/$P1_ID/vmlinux" ]; then
		fail "0001 demo patch" "--vmlinux given but no vmlinux in $OUT/$P1_ID"
	else
		pass "0001 demo patch builds incrementally in $(fact p1 duration)s ($ncc files compiled, build id $(echo "$P1_ID" | cut -c1-12), with vmlinux)"
	fi
	# The boot stage recognises the kernel by its version string.
	banner="Linux version $(fact p1 kernelrelease) (tlblab@$(fact p1 build_host))"
	if grep -aqF "$banner" "$OUT/$P1_ID/vmlinux" 2>/dev/null; then
		pass "the kernel says who it is: \"$banner\""
	else
		fail "kernel version string" "no \"$banner\" in vmlinux"
	fi
	if [ "$P1_OTHER_COMMIT" = "$P1_COMMIT" ] && [ "$(fact p1-other build_id)" = "$P1_ID" ]; then
		pass "git am is reproducible: the same patch on the same base gives commit $(echo "$P1_COMMIT" | cut -c1-12) and the same build id each time"
	else
		fail "git am is reproducible" "commits $P1_OTHER_COMMIT and $P1_COMMIT"
	fi
else
	P1_ID=
	P1_COMMIT=
fi

# ---- a branch job: --fetch URL --fetch-ref BRANCH -----------------------------

# A repository that has the 0001 commit on a branch, as a developer's tree
# would: it borrows the objects of the checkout build.sh made (the lab
# user's, as the repository is).
if [ -n "$P1_COMMIT" ]; then
	lab_tmp
	as_lab git init -q --bare "$TMP/lab/dev.git"
	as_lab sh -c 'echo "$1/src/.git/objects" >"$2/objects/info/alternates"' sh "$WORK" "$TMP/lab/dev.git"
	as_lab git -C "$TMP/lab/dev.git" update-ref refs/heads/tlb-demo "$P1_COMMIT"
	kbuild branch --ref v6.1-debian --fetch "$TMP/lab/dev.git" --fetch-ref tlb-demo
	if expect_success branch 1 && [ "$(fact branch build_id)" = "$P1_ID" ] &&
		[ "$(fact branch commit)" = "$P1_COMMIT" ]; then
		pass "--fetch of a branch holding the 0001 commit gives the same build (cached)"
	elif [ "$ST" = 0 ]; then
		fail "--fetch of a branch" "build id $(fact branch build_id), want $P1_ID"
	fi
	kbuild branch-missing --ref v6.1-debian --fetch "$TMP/lab/dev.git" --fetch-ref no-such-branch
	expect_failure branch-missing 13 ref "fatal: couldn't find remote ref no-such-branch"
fi

# ---- failures, one per class -----------------------------------------------

kbuild not-apply --ref v6.1-debian --patch "$FIX/patches/does-not-apply.patch"
expect_failure not-apply 10 patch "error: patch failed: arch/x86/mm/tlb\.c:[0-9]+"

# The same hunk as a plain diff (no mail headers) goes through git apply.
sed -n '/^diff --git/,$p' "$FIX/patches/does-not-apply.patch" >"$TMP/not-apply.diff"
kbuild not-apply-diff --ref v6.1-debian --patch "$TMP/not-apply.diff"
expect_failure not-apply-diff 10 patch "error: patch failed: arch/x86/mm/tlb\.c:[0-9]+"

kbuild not-compile --ref v6.1-debian --patch "$FIX/patches/does-not-compile.patch"
expect_failure not-compile 11 build "arch/x86/mm/tlb\.c:[0-9]+:[0-9]+: error: "
if grep -q '^TLBLAB excerpt make target: arch/x86/mm/tlb.o$' "$TMP/not-compile.out"; then
	pass "not-compile: the excerpt names the failing make target arch/x86/mm/tlb.o"
else
	fail "not-compile: failing make target" "no 'make target: arch/x86/mm/tlb.o' excerpt"
fi

NO_CONFIG_CACHE=1
kbuild dropped --ref v6.1-debian --fragment "$FIX/fragments/dropped-option.config"
NO_CONFIG_CACHE=0
expect_failure dropped 12 config "CONFIG_DRM_I915=y requested, final .config has it not set"

kbuild bad-ref --ref no-such-ref
if fact bad-ref message | grep -q "no-such-ref"; then
	expect_failure bad-ref 13 ref
else
	fail "bad-ref" "the message does not name the ref: $(fact bad-ref message)"
fi

# ---- a stale image is not stored ----------------------------------------------

# ccache's depend mode once gave back an old piggy.o (piggy.S pulls the
# compressed vmlinux in with .incbin), so a bzImage held an earlier
# commit's kernel. The same mismatch, made by hand. The base is built
# again with its artifacts put aside, so that the shared object directory
# holds the base's objects (the track tests build other commits there).
# Then one byte of its compressed vmlinux changes, its size and mtime kept
# so that make rebuilds nothing, and a third build must fail and store
# nothing. The byte and the artifacts are put back.
BASE_OBJ=$(sed -n 's/^build\.sh: .* exists: cached, objects in //p' "$TMP/again.out" | head -n 1)
# the compressed vmlinux is named for the compression the config chose
# (kernels/fragments/qemu-x86_64.config: lz4)
case $(sed -nE 's/^CONFIG_KERNEL_(GZIP|XZ|LZ4|ZSTD)=y$/\1/p' "$BASE_DIR/config" 2>/dev/null) in
GZIP) ZS=gz ;; XZ) ZS=xz ;; LZ4) ZS=lz4 ;; ZSTD) ZS=zst ;; *) ZS=unknown ;;
esac
Z=$BASE_OBJ/arch/x86/boot/compressed/vmlinux.bin.$ZS
if [ -z "$BASE_OBJ" ] || [ -e "$BASE_DIR.aside" ]; then
	fail "a stale bzImage is not stored" "no object directory named in again.out, or $BASE_DIR.aside is there"
else
	as_lab mv -- "$BASE_DIR" "$BASE_DIR.aside"
	kbuild stale-pre --ref v6.1-debian
	if ! expect_success stale-pre 0 || [ ! -s "$Z" ]; then
		fail "a stale bzImage is not stored" "the base did not build again in $BASE_OBJ, or left no $Z"
	else
		lab_tmp
		# Under make test's two lanes another test (t0055's track)
		# may build another commit in the same object directory between
		# the byte changed here and the build that follows: make then
		# writes the compressed vmlinux again, the image is right, and
		# the build stores it. The tampered byte gone after the build
		# says so; the base's objects are back then, and it is tried
		# again, 5 times at most (t0055's bisection builds commit after
		# commit there: 3 tries all met its builds when this test ran late)
		tries=0
		while :; do
			tries=$((tries + 1))
			as_lab rm -rf -- "$BASE_DIR"
			as_lab cp -p -- "$Z" "$TMP/lab/payload.good"
			at=$(($(as_lab stat -c %s -- "$Z") / 2))
			byte=$(as_lab od -An -tu1 -j "$at" -N 1 -- "$Z" | tr -d ' ')
			# shellcheck disable=SC2059 # an octal escape, made here
			printf "\\$(printf %o $(((byte + 1) % 256)))" | as_lab dd of="$Z" bs=1 seek="$at" conv=notrunc 2>/dev/null
			as_lab touch -r "$TMP/lab/payload.good" -- "$Z"
			kbuild stale --ref v6.1-debian
			stored=$(find "$OUT" -maxdepth 1 \( -name "$BASE_ID" -o -name ".tmp-*-$BASE_ID" \) | head -n 1)
			changed=$(as_lab cmp "$Z" "$TMP/lab/payload.good" 2>&1 || true)
			[ "$ST" = 0 ] && [ -z "$changed" ] && [ "$tries" -lt 5 ] || break
			echo "# the compressed vmlinux was written again during try $tries (another build in the object directory): again"
		done
		[ -n "$changed" ] && as_lab cp -p -- "$TMP/lab/payload.good" "$Z"
		if [ "$ST" = 1 ] && [ "$(fact stale class)" = infra ] && [ -z "$stored" ] && [ -n "$changed" ] &&
			fact stale message | grep -q "payload is not the arch/x86/boot/compressed/vmlinux.bin.$ZS this make wrote"; then
			pass "a bzImage whose payload is not the compressed vmlinux make wrote is refused, nothing stored: $(fact stale message | cut -c1-90)"
		else
			fail "a stale bzImage is not stored" "exit $ST, class '$(fact stale class)', stored '$stored', tampered byte still there: '$changed'"
			show stale
		fi
	fi
	as_lab rm -rf -- "$BASE_DIR"
	as_lab mv -- "$BASE_DIR.aside" "$BASE_DIR"
fi

# Refused before anything runs: not even WORK is created. SCRIPT: another
# build.sh than the lab's.
refused() { # NAME ARG...
	_n=$1
	shift
	ST=0
	sh "${SCRIPT:-$BUILD_SH}" --work "$TMP/never" --out "$TMP/never/out" --config-base tinyconfig "$@" \
		>"$TMP/$_n.out" 2>&1 || ST=$?
	if [ "$ST" != 0 ] && [ ! -e "$TMP/never" ] && ! grep -qv '^TLBLAB ' "$TMP/$_n.out" &&
		[ "$(fact "$_n" status)" = failed ]; then
		pass "$_n refused (exit $ST, class $(fact "$_n" class)): $(fact "$_n" message | cut -c1-90)"
	else
		fail "$_n refused" "exit $ST, or something ran"
		show "$_n"
	fi
}
refused "ref --upload-pack=x" --tree "$LINUX" --ref --upload-pack=x
refused "ref a;b" --tree "$LINUX" --ref 'a;b'
refused "ref with a newline" --tree "$LINUX" --ref "v6.1-debian
x"
refused "tree ext::" --tree 'ext::sh -c touch% /tmp/tlblab-pwned' --ref v6.1-debian
refused "fetch ext::" --tree "$LINUX" --ref v6.1-debian --fetch 'ext::sh -c id' --fetch-ref main
refused "fetch-ref -x" --tree "$LINUX" --ref v6.1-debian --fetch "$LINUX" --fetch-ref -x
refused "patch and fetch together" --tree "$LINUX" --ref v6.1-debian --patch "$P1" --fetch "$LINUX" --fetch-ref v6.1-debian

# The set: build.sh sources the parts kernels/build/parts.list names from
# its own directory, and refuses to run unless each one is there, its
# owner's and writable by nobody else. A copy of the set, spoiled one way
# at a time; the message names what is wrong.
SET=$TMP/set
set_copy() {
	rm -rf "$SET"
	kernels_stub "$TMP/set-kernels" && rm -rf "$SET" && mv "$TMP/set-kernels/build" "$SET" &&
		cp "$BUILD_SH" "$SET/"
}
set_refused() { # NAME MESSAGE-PATTERN
	SCRIPT=$SET/build.sh refused "$1" --tree "$LINUX" --ref v6.1-debian
	fact "$1" message | grep -q -- "$2" || fail "$1: the message says $2" "$(fact "$1" message)"
}
set_copy && rm "$SET/config.sh"
set_refused "a set without config.sh" "config.sh is missing from "
set_copy && echo ../x.sh >>"$SET/parts.list"
set_refused "parts.list naming a path out of the set" "names '../x.sh', which is not a part"
set_copy && chmod g+w "$SET/patch.sh"
set_refused "a part that others may write" "patch.sh is writable by others"
set_copy && rm "$SET/patch.sh" && ln -s "$TOP/kernels/build/patch.sh" "$SET/patch.sh"
set_refused "a part that is a link" "patch.sh is missing from .* (or not a regular file)"
if [ "$(id -u)" = 0 ] && id -u "$LAB_USER" >/dev/null 2>&1; then
	set_copy && chown "$LAB_USER" "$SET/args.sh"
	set_refused "a part of another user's" "args.sh belongs to $LAB_USER, not to build.sh's owner"
fi
# and whole, the copy runs: up to the argument checks
set_copy && SCRIPT=$SET/build.sh refused "a whole set elsewhere, a bad ref" --tree "$LINUX" --ref 'a;b'
fact "a whole set elsewhere, a bad ref" message | grep -q "^--ref 'a;b' is not a valid ref" ||
	fail "a whole set elsewhere runs its argument checks" "$(fact "a whole set elsewhere, a bad ref" message)"
# read from stdin (sh -s), build.sh has no directory of its own: refused,
# whatever parts the current directory holds
ST=0
(cd "$TOP/kernels/build" && sh -s -- --tree "$LINUX" --work "$TMP/never" --out "$TMP/never/out" \
	--config-base tinyconfig --ref v6.1-debian <"$BUILD_SH" >"$TMP/stdin.out" 2>&1) || ST=$?
if [ "$ST" = 1 ] && [ ! -e "$TMP/never" ] && [ "$(fact stdin class)" = infra ] &&
	fact stdin message | grep -q 'sourced from its own directory'; then
	pass "build.sh read from stdin is refused (exit 1, class infra): $(fact stdin message | cut -c1-90)"
else
	fail "build.sh read from stdin is refused" "exit $ST, class '$(fact stdin class)'"
	show stdin
fi
rm -rf "$SET" "$TMP/set-kernels"

# ---- the demo patches and fixtures apply where they should --------------------

# Checked with a throw-away index, so the shared tree is only read.
applies() { # PATCH: 0 when PATCH applies to v6.1-debian
	rm -f "$TMP/index"
	GIT_INDEX_FILE=$TMP/index git -C "$LINUX" read-tree v6.1-debian &&
		GIT_INDEX_FILE=$TMP/index git -C "$LINUX" apply --cached --check "$1" 2>/dev/null
}
for p in "$PATCHES"/*.patch "$FIX/patches/does-not-compile.patch" "$FIX/patches/panic-at-boot.patch"; do
	check "$(basename "$p") applies to v6.1-debian" applies "$p"
done
if applies "$FIX/patches/does-not-apply.patch"; then
	fail "does-not-apply.patch does not apply" "it applies"
else
	pass "does-not-apply.patch does not apply to v6.1-debian"
fi
if grep -q 'panic("tlblab test: panic at boot")' "$FIX/patches/panic-at-boot.patch" &&
	grep -q '^+late_initcall(' "$FIX/patches/panic-at-boot.patch"; then
	pass "panic-at-boot.patch panics from a late_initcall"
else
	fail "panic-at-boot.patch" "no late_initcall calling panic(\"tlblab test: panic at boot\")"
fi
