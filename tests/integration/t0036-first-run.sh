#!/bin/sh
# The first run on a new machine, made cheap to check (issue 37): a kernel
# tree that root imported (kernels/import-tree.sh, from a small tarball
# that stands in for linux-source-6.1), the lab's directories made by
# scripts/lab-dirs.sh with an empty builder work directory, and the
# daemon's user making the first checkout and resolving the base: first
# kernels/build/build.sh --resolve as that user, then tlblabd (started as root,
# lab.user tlblab) running a first job, as make demo's first job does.
#
# On 78022e5 the first checkout failed ("git clone --shared of ... failed":
# git's upload-pack refused the tree as another user's, "dubious
# ownership"), so every make demo on a new machine failed in a second;
# warm labs hid it, whose checkout root had made earlier.
#
# The job's tree is no kernel: its build stops at kconfig ("make
# tinyconfig failed"), the first step after the checkout and the base, and
# its log must say before that the checkout was made and the base resolved.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/daemon.sh"
trap 'daemon_cleanup; rm -rf "$TMP"' EXIT

daemon_test 25000
need_lab_user "the first run as the daemon's user" "the lab is set up by root"

# the tarball: a top Makefile that knows its version, as the kernel's does
mkdir -p "$TMP/src/linux-source-6.1/mm"
printf 'kernelversion:\n\t@echo 6.1.99\n' >"$TMP/src/linux-source-6.1/Makefile"
echo "int tlblab_first_run;" >"$TMP/src/linux-source-6.1/mm/first.c"
tar -cJf "$TMP/linux-source-6.1.tar.xz" -C "$TMP/src" linux-source-6.1

CACHE1=$TMP/cache
if sh "$TOP/scripts/lab-dirs.sh" "$CACHE1" "$TMP/data" >"$TMP/dirs.out" 2>&1 &&
	[ "$(stat -c %U "$CACHE1")" = root ] && [ "$(stat -c %U "$CACHE1/tlblab")" = "$LAB_USER" ] &&
	[ "$(stat -c %U:%a "$CACHE1/guest")" = "$LAB_USER:700" ] && [ "$(stat -c %U:%a "$TMP/data")" = "$LAB_USER:700" ]; then
	pass "lab-dirs.sh makes the cache root's, its tlblab/ and guest/ and the data dir $LAB_USER's"
else
	fail "lab-dirs.sh makes the lab's directories" "$(cat "$TMP/dirs.out"; ls -la "$CACHE1")"
	exit 0
fi
# a file of root's in the builder's directory (as an older tlblab's root-run
# build left them) is named, with its owner; once it is gone, the check passes
install -d -o "$LAB_USER" "$CACHE1/tlblab/old"
touch "$CACHE1/tlblab/old/root-made.o"
if ! sh "$TOP/scripts/lab-dirs.sh" "$CACHE1" "$TMP/data" >"$TMP/dirs.out" 2>&1 &&
	grep -q "$CACHE1/tlblab holds files of other users.*: $CACHE1/tlblab/old/root-made.o (root) - give them" "$TMP/dirs.out"; then
	pass "lab-dirs.sh names a file of root's in the builder's directory, with its owner"
else
	fail "lab-dirs.sh names a file of root's in the builder's directory" "$(cat "$TMP/dirs.out")"
fi
rm -rf "$CACHE1/tlblab/old"
check "lab-dirs.sh passes once that file is gone" sh "$TOP/scripts/lab-dirs.sh" "$CACHE1" "$TMP/data"
if ! sh "$TOP/kernels/import-tree.sh" "$CACHE1/linux" "$TMP/linux-source-6.1.tar.xz" >"$TMP/import.out" 2>&1; then
	fail "import-tree.sh imports the tarball" "$(tail -n 3 "$TMP/import.out")"
	exit 0
fi
BASE=$(git -C "$CACHE1/linux" rev-parse 'v6.1-debian^{commit}')
check "the tree is root's, as import-tree.sh makes it" [ "$(stat -c %U "$CACHE1/linux/.git")" = root ]

# 1. build.sh --resolve as the daemon's user, in an empty work directory
WORK1=$CACHE1/tlblab/work-linux
ST=0
as_lab sh "$TOP/kernels/build/build.sh" --resolve --tree "$CACHE1/linux" --work "$WORK1" --ref v6.1-debian \
	>"$TMP/resolve.out" 2>&1 || ST=$?
if [ "$ST" = 0 ] && grep -qx "TLBLAB status ok" "$TMP/resolve.out" && grep -qx "TLBLAB commit $BASE" "$TMP/resolve.out"; then
	pass "the daemon's user makes the first checkout of root's tree and resolves v6.1-debian ($(echo "$BASE" | cut -c1-12))"
else
	fail "the daemon's user makes the first checkout of root's tree and resolves the base" \
		"exit $ST: $(grep -E '^TLBLAB (message|excerpt)|fatal|dubious' "$TMP/resolve.out" | head -n 4 | tr '\n' ' ')"
fi
others=$(find "$CACHE1/tlblab" ! -user "$LAB_USER" | head -n 3)
check "everything in the builder's directory is $LAB_USER's" [ -z "$others" ]
tree_state="$(find "$CACHE1/linux" ! -user root | wc -l) $(git -C "$CACHE1/linux" rev-parse HEAD)"
check "root's tree is unchanged: still root's, at v6.1-debian" [ "$tree_state" = "0 $BASE" ]

# root builds nowhere the daemon's user owns: build.sh refuses, names why,
# and writes nothing there
ST=0
sh "$TOP/kernels/build/build.sh" --resolve --tree "$CACHE1/linux" --work "$WORK1" --ref v6.1-debian \
	>"$TMP/asroot.out" 2>&1 || ST=$?
if [ "$ST" = 1 ] && grep -q "^TLBLAB message $WORK1 belongs to $LAB_USER .* this build runs as root" "$TMP/asroot.out" &&
	[ -z "$(find "$CACHE1/tlblab" ! -user "$LAB_USER" | head -n 1)" ]; then
	pass "build.sh as root in the daemon's user's work directory refuses: $(sed -n 's/^TLBLAB message //p' "$TMP/asroot.out" | cut -c1-100)"
else
	fail "build.sh as root in the daemon's user's work directory refuses" "exit $ST: $(tail -n 3 "$TMP/asroot.out")"
fi

# 2. the daemon's first job, from an empty work directory again
as_lab rm -rf "$WORK1"
install -d -o "$LAB_USER" -g "$LAB_USER" "$TMP/m1"
{
	lab_yaml "$TMP/data" "user: $LAB_USER" "tokens: [$TOKEN]"
	cat <<EOC
machines:
  - name: m1
    transport: local
    workdir: $TMP/m1
    boot: qemu
    qemu:
      initrd: $CACHE1/guest/initramfs.cpio
      ssh_port: 10031
      identity: $CACHE1/guest/lab_key
      known_hosts: $CACHE1/guest/known_hosts
builders:
  - name: local
    transport: local
    workdir: $CACHE1
trees:
  - name: linux
    url: $CACHE1/linux
    builder: local
    config_base: tinyconfig
suites:
EOC
	lab_yaml_mprotect_suite quick "" "duration: 1"
} >"$TMP/lab.yaml"
if ! daemon_start "$TMP/lab.yaml"; then
	fail "tlblabd starts as $LAB_USER on the new lab" "see log"
	exit 0
fi
id=$(api POST /jobs '{"suite": "quick", "tree": "linux", "base": "v6.1-debian"}' "$TOKEN" | jq_py 'J["job"]["id"]')
state=$(job_wait "$id" "failed done cancelled" 120)
api GET "/jobs/$id" >"$TMP/job.json"
sid=$(jq_py "[g['id'] for g in J['job']['stages'] if g['kind'] == 'build'][0]" <"$TMP/job.json")
api GET "/jobs/$id/stages/$sid/log" >"$TMP/build.log"
why=$(sed -n 's/^TLBLAB message //p' "$TMP/build.log" | head -n 1)
if grep -q "cloning $CACHE1/linux (shared objects)" "$TMP/build.log" && grep -q "v6.1-debian is $BASE" "$TMP/build.log" &&
	[ "$why" = "make tinyconfig failed" ]; then
	pass "the daemon's first job makes the checkout and resolves the base, then stops where the tree is no kernel ($why)"
else
	fail "the daemon's first job makes the checkout and resolves the base" \
		"job $state: $(grep -E 'clon|fatal|dubious|v6.1-debian is|TLBLAB message' "$TMP/build.log" | head -n 4 | tr '\n' ' ')"
fi
others=$(find "$CACHE1/tlblab" "$TMP/data" ! -user "$LAB_USER" | head -n 3)
[ -d "$WORK1/src/.git" ] || others="no checkout in $WORK1/src $others"
check "the daemon's checkout is there, and all it wrote is $LAB_USER's" [ -z "$others" ]
daemon_stop
exit 0
