# shellcheck shell=sh
# build.sh's part "ccache": the compiler cache the sandboxed make uses. Its
# directory (--ccache, CCACHE_DIR, else WORK/ccache) and settings; the
# first build of a compiler in WORK runs without it (an empty cache only
# costs); and WORK/.ccache-compilers, the compilers that have built here.
# Whether the sandbox may write it is the trust's (sandbox.sh). Sourced by
# build.sh (parts.list).

# ccache_setup: CCACHE_* for this build, its directory made.
ccache_setup() {
	# ccache: --ccache, else WORK's own (its owner's, like WORK). BASEDIR makes
	# paths under WORK relative, so the hashes do not depend on where WORK lives.
	if [ -n "$ccache" ]; then
		CCACHE_DIR=$ccache
	elif [ -z "${CCACHE_DIR:-}" ]; then
		CCACHE_DIR=$WORK/ccache
	fi
	CCACHE_BASEDIR=$WORK
	CCACHE_MAXSIZE=5G
	# Not ccache's depend mode: it hashes only the headers the compiler's
	# dependency file names, so an object whose source pulls a file in with
	# .incbin comes back from the cache as it was. x86's bzImage wraps the
	# compressed vmlinux that way (arch/x86/boot/compressed/piggy.S): a commit
	# whose compressed kernel kept its size got the image of an earlier one
	# (the boot's /proc/version check caught it, make demo-track's bisection
	# skipped that commit). The default mode preprocesses, sees the .incbin and
	# does not cache that object. The namespace keeps this cache's entries from
	# the builds made in depend mode (up to 2c24e33) out of reach: ccache's
	# direct mode would hit them.
	CCACHE_NAMESPACE=tlblab-2
	export CCACHE_DIR CCACHE_BASEDIR CCACHE_MAXSIZE CCACHE_NAMESPACE
	mkdir -p -- "$CCACHE_DIR" || fail infra "cannot create $CCACHE_DIR"
}

# ccache_first_build: SB_CCACHE=off for a compiler's first build into a
# new object dir (OBJ, compiler: compile.sh, config.sh).
ccache_first_build() {
	# ccache is off for a compiler's first build in WORK (into a new object
	# dir): the cache holds nothing it could return, and a miss preprocesses
	# every file once more before compiling it. On this project's 2-core
	# builders a cold `make mm/ kernel/sched/` took 42.5 and 39.3 s with plain
	# gcc, 53.2 and 52.3 s through an empty ccache (2026-12-05), a quarter more. The first build's objects
	# stay in its object directory, which the builds that follow reuse; ccache
	# fills from the second build on (other commits, other recipes). WORK's
	# .ccache-compilers lists the compilers that have built here; a ccache
	# the builder names (--ccache, CCACHE_DIR) may hold other builders'
	# objects, so it is always used.
	ccache_seen=$WORK/.ccache-compilers
	if [ "$CCACHE_DIR" = "$WORK/ccache" ] && [ ! -f "$OBJ/vmlinux" ] &&
		! grep -qxF -- "$compiler" "$ccache_seen" 2>/dev/null; then
		SB_CCACHE=off
		say "ccache: the first build with $(oneline "$compiler") in $WORK: ccache off (an empty cache only adds its own preprocessing)"
	fi
}

# ccache_note_compiler: compiler is one that has built in WORK (at the end
# of a build that worked, emit_ok).
ccache_note_compiler() {
	grep -qxF -- "$compiler" "$ccache_seen" 2>/dev/null ||
		{ printf '%s\n' "$compiler" >>"$ccache_seen"; } 2>/dev/null || true
}
