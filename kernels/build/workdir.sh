# shellcheck shell=sh
# build.sh's part "workdir": the builder's side of a build before any git
# or make runs. The tools are there; WORK and OUT exist, are the invoking
# user's, and no directory above them is another user's or writable by
# others; WORK/lock (flock) serialises the builds that share WORK/src and
# its object dirs; WORK/build.log starts; leftovers of killed builds go;
# there is room. Sourced by build.sh (parts.list).

# tools_check: the commands a build runs are all there.
tools_check() {
	step="checking tools"
	missing=
	for tool in git make gcc "$kcc" ccache flock sha256sum awk sed tee cmp df flex bison bc perl bwrap; do
		command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
	done
	[ -z "$missing" ] || fail infra "missing tools on the builder:$missing (apt-get install git make gcc ccache util-linux flex bison bc perl libelf-dev libssl-dev bubblewrap${cross:+ gcc-aarch64-linux-gnu})"
}

# safe_path DIR: no directory from DIR up (real paths) may be another
# user's or writable by another, but for a sticky one like /tmp: nobody
# else can swap a link into the path above WORK or OUT.
safe_path() {
	_p=$1
	while [ -n "$_p" ]; do
		_m=$(stat -c %a -- "$_p")
		_u=$(stat -c %u -- "$_p")
		if [ "$_u" != 0 ] && [ "$_u" != "$(id -u)" ]; then
			fail infra "$_p, above $1, belongs to $(stat -c %U -- "$_p") (uid $_u): a build as $(id -un) needs every directory above its work and output directories to be root's or its own"
		fi
		if [ $((0$_m & 022)) != 0 ] && [ $((0$_m & 01000)) = 0 ]; then
			fail infra "$_p, above $1, is writable by others (mode $_m): a build needs every directory above its work and output directories writable by their owner only"
		fi
		_p=${_p%/*}
	done
}

# work_prepare: WORK, OUT and SRC, made and checked.
work_prepare() {
	step="preparing $work"
	mkdir -p -- "$work" ${out:+"$out"} || fail infra "cannot create $work or $out"
	WORK=$(abs_dir "$work")
	OUT=
	[ -z "$out" ] || OUT=$(abs_dir "$out")
	SRC=$WORK/src
	# One owner per directory (docs/security.md): a build runs as the owner of
	# its work and output directories. Root in a directory of another user's
	# would write each file there (the lock, the log, .status) through what
	# could be that user's link to one of root's, and a checkout that root and
	# that user take turns in rebuilds the whole kernel.
	for d in "$WORK" ${OUT:+"$OUT"}; do
		o=$(stat -c %u -- "$d")
		[ "$o" = "$(id -u)" ] ||
			fail infra "$d belongs to $(stat -c %U -- "$d") (uid $o) and this build runs as $(id -un) (uid $(id -u)): run it as $(stat -c %U -- "$d"), whose work and output directories these are"
		safe_path "${d%/*}"
	done
}

# work_lock: WORK's lock taken (fd 9, held to the end), the log started,
# leftovers cleared, the free space checked.
work_lock() {
	# One build at a time per WORK: they share the checkout and object dirs.
	exec 9>>"$WORK/lock"
	if ! flock -n 9; then
		say "waiting for another build in $WORK"
		flock 9
	fi

	LOG=$WORK/build.log
	: >"$LOG"
	say "build of $ref in $WORK (tree $tree), started $(date -u '+%Y-%m-%d %H:%M:%S UTC')"

	# Leftovers of builds killed before their rename (the lock is ours, and each
	# temp dir names the pid that made it).
	for d in ${OUT:+"$OUT"/.tmp-*}; do
		[ -d "$d" ] || continue
		pid=$(basename -- "$d" | sed -n 's/^\.tmp-\([0-9][0-9]*\)-.*/\1/p')
		if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
			rm -rf -- "$d"
		fi
	done

	free_mb=$(df -Pk "$WORK" | awk 'NR == 2 { print int($4 / 1024) }')
	[ "${free_mb:-0}" -ge "$MIN_FREE_MB" ] ||
		fail infra "only ${free_mb:-0} MB free under $WORK (need $MIN_FREE_MB MB)"
}
