# shellcheck shell=sh
# build.sh's part "sandbox": everything that runs the tree's own code
# (kconfig, merge_config.sh, make) runs in a bubblewrap sandbox: as the
# unprivileged user tlblab-build (made here when missing; a builder reached
# as an unprivileged user runs it as that user), in new user, pid, network,
# IPC and UTS namespaces (no network: only a loopback that is down), with
# the system's /usr and /etc read-only, the checkout read-only, and only
# SB_RW (the object or config directory of this build; SB_RW_HOST when it
# is a private copy shown at SB_RW's path) and ccache writable. The
# daemon's data, tokens, keys, the output directory, these scripts and
# other builds' directories are not in its view. Root touches what the
# sandbox could write only through the sandbox (sb_cat), so a planted
# symlink reaches nothing the build user could not read anyway. Every line
# the sandbox prints that looks like one of build.sh's facts is defused
# (TLBLAB -> tlblab-build:), so the facts are build.sh's alone. The trust
# a commit gets (trust_decide) says whether its build may write the shared
# ccache and object dirs. Sourced by build.sh (parts.list).

# sb_setup: the build user (SB_USER, SB_UID, SB_GID), made when missing.
sb_setup() {
	SB_USER=tlblab-build
	SB_RW=
	SB_RW_HOST=
	SB_CCACHE=rw
	if [ "$(id -u)" = 0 ]; then
		if ! id -u "$SB_USER" >/dev/null 2>&1; then
			useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
				"$SB_USER" >/dev/null 2>&1 || id -u "$SB_USER" >/dev/null 2>&1 ||
				fail infra "cannot create the build user $SB_USER (useradd)"
		fi
		SB_UID=$(id -u "$SB_USER")
		SB_GID=$(id -g "$SB_USER")
	else
		SB_USER=$(id -un)
		SB_UID=$(id -u)
		SB_GID=$(id -g)
	fi
}

# sb_own DIR: makes DIR the build user's (once: a directory of an older,
# unsandboxed build belongs to root). -h: a link is changed, not its target.
sb_own() {
	[ "$(stat -c %u -- "$1")" = "$SB_UID" ] && return 0
	[ "$(id -u)" = 0 ] || fail infra "$1 belongs to another user and this builder is not root"
	chown -R -h "$SB_UID:$SB_GID" -- "$1" || fail infra "cannot give $1 to $SB_USER"
}

# sb_exec CMD...: CMD in the sandbox, its output unfiltered (for sb_cat).
# The lock's descriptor (9) stays outside: bwrap hands the sandbox every
# descriptor it gets, and a build's code holding WORK's lock could stall
# the next build, or outlive its own.
sb_exec() {
	set -- bwrap --unshare-all --unshare-user --die-with-parent --new-session --disable-userns \
		--ro-bind /usr /usr --ro-bind /etc /etc \
		--symlink usr/bin /bin --symlink usr/sbin /sbin --symlink usr/lib /lib \
		--symlink usr/lib64 /lib64 --proc /proc --dev /dev --tmpfs /tmp \
		--ro-bind "$SRC" "$SRC" \
		${SB_RW:+--bind "${SB_RW_HOST:-$SB_RW}" "$SB_RW"} \
		$([ "$SB_CCACHE" = rw ] && echo --bind || echo --ro-bind) "$CCACHE_DIR" "$CCACHE_DIR" \
		--clearenv --setenv PATH /usr/bin:/bin:/usr/sbin:/sbin --setenv HOME /tmp \
		--setenv LC_ALL C --setenv LOCALVERSION "" --setenv TMPDIR /tmp \
		--setenv CCACHE_DIR "$CCACHE_DIR" --setenv CCACHE_BASEDIR "$CCACHE_BASEDIR" \
		--setenv CCACHE_MAXSIZE "$CCACHE_MAXSIZE" --setenv CCACHE_TEMPDIR /tmp \
		--setenv CCACHE_NAMESPACE "$CCACHE_NAMESPACE" \
		$([ "$SB_CCACHE" = ro ] && echo --setenv CCACHE_READONLY 1) \
		$([ "$SB_CCACHE" = off ] && echo --setenv CCACHE_DISABLE 1) \
		--chdir "${SB_RW:-/tmp}" -- "$@"
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid="$SB_UID" --regid="$SB_GID" --clear-groups --inh-caps=-all --bounding-set=-all "$@" 9>&-
	else
		"$@" 9>&-
	fi
}

# sb CMD...: CMD in the sandbox; its output with any fact line defused.
sb() {
	_sbst=$WORK/.sb-status
	{
		_rc=0
		sb_exec "$@" </dev/null 2>&1 || _rc=$?
		echo "$_rc" >"$_sbst"
	} | sed -u 's/^TLBLAB/tlblab-build: TLBLAB/'
	return "$(cat "$_sbst")"
}

# sb_cat FILE: FILE's bytes, read by the build user in the sandbox (a
# regular file only: a link the build planted is not followed).
sb_cat() {
	sb_exec sh -c '[ -f "$1" ] && [ ! -L "$1" ] && exec cat -- "$1"; echo "not a regular file: $1" >&2; exit 1' sh "$1" </dev/null
}

# trust_decide: trusted=1 for the tree's own commit, else SB_CCACHE=ro.
# A commit that origin's branches or tags contain is the tree's own code; a
# patched or fetched commit, or a base that only a fetch brought in, is
# the submitter's. Untrusted builds read the shared ccache and object dirs
# but never write them: they build in a private copy of the object dir,
# removed afterwards, so nothing they leave is reused by another build.
trust_decide() {
	trusted=0
	if [ -z "$patch" ] && [ -z "$fetch_url" ] &&
		[ -n "$(g for-each-ref --count=1 --contains "$commit" refs/remotes/origin refs/tags 2>/dev/null)" ]; then
		trusted=1
	fi
	sb_own "$CCACHE_DIR"
	if [ "$trusted" = 1 ]; then
		say "sandbox: $SB_USER (uid $SB_UID), no network; $commit is the tree's own: shared objects and ccache"
	else
		SB_CCACHE=ro
		say "sandbox: $SB_USER (uid $SB_UID), no network; $commit is the submitter's: private objects, ccache read-only"
	fi
}

# kmake DIR TARGET...: make in the checkout with objects in DIR, for the
# arch, with the compiler the build uses (kconfig records it in the .config).
# x86_64 is built natively, without ARCH=: its configs stay as they were.
kmake() {
	_o=$1
	shift
	if [ -n "$cross" ]; then
		sb make -C "$SRC" O="$_o" ARCH="$karch" CROSS_COMPILE="$cross" CC="ccache $kcc" "$@"
	else
		sb make -C "$SRC" O="$_o" CC="ccache gcc" "$@"
	fi
}
