#!/bin/sh
# Builds one kernel for a tlblab job on a builder; the daemon runs it as root,
# locally or over SSH, and reads the result from the last lines of stdout.
# The tree's own code (kconfig, make) runs in a bubblewrap sandbox as the
# unprivileged user tlblab-build, without network (sandbox.sh).
#
# usage: build.sh --tree TREE --work WORK --ref REF
#                 [--patch FILE | --fetch URL --fetch-ref REF2]
#                 --config-base tinyconfig|defconfig|FILE [--fragment FILE]...
#                 [--jobs N] --out OUT [--vmlinux] [--ccache DIR]
#                 [--arch x86_64|arm64]
#        build.sh --resolve --tree TREE --work WORK --ref REF
#                 [--fetch URL --fetch-ref REF2] [--since GOOD]
#
# This file is the entry of a set: the parts that parts.list names, beside
# it, each one role of the build (its first lines say which). The daemon
# uploads the set whole (daemon/stages/build_builder.c) into a directory
# named by the set's hash, so a run never mixes two versions of it. This
# script sources every part from its own directory before it does
# anything, then runs the steps at the bottom in order; they share their
# state in the shell's variables (WORK, SRC, commit, build_id, ...).
#
# Why it is shaped this way:
# - A builder keeps warm state per tree in WORK, so the patched build that
#   follows a base build recompiles only what the patch touched: WORK/src is
#   one checkout (checkout.sh) that each build resets, and the kernel is
#   built out of tree in one object directory per config recipe
#   (compile.sh). ccache catches the rest (ccache.sh).
# - The build id hashes the commit, the final .config and the compiler
#   (config.sh), so OUT/<build_id>/ is a cache (artifacts.sh). The same
#   patch on the same base gives the same commit because git am and the
#   plain-diff commit run with a fixed identity and date (env.sh, patch.sh).
# - --arch arm64 cross-builds with Debian's gcc-aarch64-linux-gnu
#   (ARCH=arm64, CROSS_COMPILE=aarch64-linux-gnu-) from the same checkout,
#   into object directories of its own; its image is OUT/<id>/Image where
#   x86_64's is OUT/<id>/bzImage. The arch and the cross compiler are in
#   the build id (x86_64 ids hash no arch line: they predate --arch, and
#   the .config names the arch anyway).
#
# stdout: everything the build prints (also kept in WORK/build.log and copied
# to OUT/<build_id>/build.log), then one line per fact, each "TLBLAB KEY
# VALUE" (report.sh): status ok|failed; on failure class, message and 0..30
# excerpt lines; on success build_id, commit, config_hash, compiler, cached,
# dir, duration (of this run), warnings, kernelrelease, build_host, arch,
# image (the file name: bzImage or Image), image_sha256 (a line the sandbox
# prints starting with TLBLAB is defused to "tlblab-build: TLBLAB ...", so
# every fact is this script's). OUT/<id>/
# holds the image, config, System.map, build.log, meta.json (+ vmlinux).
# --fetch takes an https:// or git:// URL or the absolute path of a local
# repository; the commit built is then the fetched one, and REF only names
# the base. The fetch is bounded: TLBLAB_FETCH_TIMEOUT seconds (default 600)
# and a pack of TLBLAB_FETCH_MAX_KB (default 2097152, 2 GiB); a fetch that
# fails for any reason is class ref (the submitter's), not infra.
# --resolve (the nightly tracker's): only brings the checkout up to date
# and says what REF (or REF2 of URL) is now, in TLBLAB lines commit,
# commit_time (committer date, epoch seconds), author and subject; with
# --since GOOD, also "TLBLAB since SHA" (GOOD's commit) and one
# "TLBLAB between SHA TIME SUBJECT" line per commit
# after GOOD up to it, oldest first (at most 100000; a bisection's range).
# exit: 0 ok, 10 patch, 11 build, 12 config, 13 ref, 1 infra (tools, disk,
# git or network trouble, a bad invocation, a set not whole: the only class
# worth a retry).
set -eu
# The daemon may read only one stream (SSH): everything goes to stdout.
# stdin stays alone; commands get </dev/null one by one.
exec 2>&1

# set_refuse MESSAGE: the failure facts of a set that is not whole (the
# part that prints them otherwise, report.sh, may be what is missing).
set_refuse() {
	printf 'TLBLAB status failed\nTLBLAB class infra\nTLBLAB message %s\n' \
		"$(printf 'build.sh: %s' "$1" | tr '\000-\037\177' ' ' | cut -c1-400)"
	exit 1
}

# set_part NAME: NAME, in this script's directory, is fit to be sourced: a
# regular file (not a link) of this script's owner that no one else may
# write; else the run is refused.
set_part() {
	_f=$BUILD_SET/$1
	{ [ -f "$_f" ] && [ ! -L "$_f" ] && [ -r "$_f" ]; } ||
		set_refuse "$1 is missing from $BUILD_SET (or not a regular file): build.sh, parts.list and every part it names are one set (kernels/build/), uploaded whole"
	[ "$(stat -c %u -- "$_f")" = "$set_owner" ] ||
		set_refuse "$_f belongs to $(stat -c %U -- "$_f"), not to build.sh's owner $(stat -c %U -- "$0"): not sourced"
	[ $((0$(stat -c %a -- "$_f") & 022)) = 0 ] ||
		set_refuse "$_f is writable by others than its owner (mode $(stat -c %a -- "$_f")): not sourced"
}

# The parts come from this script's own directory, never from PATH or the
# current directory: a script read from stdin (sh -s) or found by a bare
# name has no directory of its own, and is refused. Each is checked before
# any is sourced, so a set uploaded in part runs nothing.
case $0 in
*/*) BUILD_SET=$(cd -P -- "${0%/*}" 2>/dev/null && pwd -P) || BUILD_SET= ;;
*) BUILD_SET= ;;
esac
{ [ -n "$BUILD_SET" ] && [ -f "$0" ]; } ||
	set_refuse "run it by its path (sh DIR/build.sh): its parts are sourced from its own directory, and '$0' names none"
set_owner=$(stat -c %u -- "$0")
set_part parts.list
set_parts=
while IFS= read -r _part || [ -n "$_part" ]; do
	case $_part in '' | '#'*) continue ;; esac
	case $_part in
	build.sh | *[!a-z0-9.-]* | [!a-z]*) _part_ok=0 ;;
	*.sh) _part_ok=1 ;;
	*) _part_ok=0 ;;
	esac
	[ "$_part_ok" = 1 ] ||
		set_refuse "parts.list in $BUILD_SET names '$_part', which is not a part's name (like config.sh)"
	set_part "$_part"
	set_parts="$set_parts $_part"
done <"$BUILD_SET/parts.list"
for _part in $set_parts; do
	# shellcheck disable=SC1090 # the parts parts.list names
	. "$BUILD_SET/$_part"
done

# ---- the steps ---------------------------------------------------------------

env_setup		# env.sh
report_start		# report.sh: from here, any stop is a verdict
args_parse "$@"		# args.sh
args_check
tools_check		# workdir.sh
work_prepare
work_lock
ccache_setup		# ccache.sh
sb_setup		# sandbox.sh
src_prepare		# checkout.sh
ref_resolve
ref_fetch
# shellcheck disable=SC2154 # args_parse sets it
if [ "$resolve_only" = 1 ]; then
	ref_facts	# --resolve ends here
fi
src_checkout
patch_apply		# patch.sh
trust_decide		# sandbox.sh
config_make		# config.sh
config_check
build_identify
obj_prepare		# compile.sh
ccache_first_build	# ccache.sh
obj_config		# compile.sh
cached_reuse		# artifacts.sh: a kernel built before ends here
compile			# compile.sh
artifacts_collect	# artifacts.sh
artifacts_publish
