# shellcheck shell=sh
# build.sh's part "env": the environment every step runs in. git is told
# that the trees are safe and how to compare files, the locale is C, none of
# the caller's kbuild or git variables get through, identities and dates
# are fixed, and the limits (patch size, free space, a fetch's time and
# size) are set. Sourced by build.sh (parts.list); env_setup runs first.

env_setup() {
	# The tree may belong to another user than the one this runs as (make
	# demo's tlblabd runs as tlblab and builds from the tree root imported), and
	# git refuses such a repository unless it is named safe. Configuration
	# given this way counts as the command line's, which git honours for it; it
	# reaches this script's own git calls only (the sandbox clears the
	# environment), and the trees are the ones the daemon names.
	# The checkout's index compares files by mtime, size and mode only
	# (core.checkStat=minimal, no ctime): the daemon's user and root take turns
	# owning WORK (make demo chowns it, a root build gives the objects back to
	# the build user), and a chown alone made `checkout --force` rewrite every
	# file, so the next build in every object dir recompiled the whole kernel.
	GIT_CONFIG_COUNT=3 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*'
	GIT_CONFIG_KEY_1=core.checkStat GIT_CONFIG_VALUE_1=minimal
	GIT_CONFIG_KEY_2=core.trustctime GIT_CONFIG_VALUE_2=false
	export GIT_CONFIG_COUNT GIT_CONFIG_KEY_0 GIT_CONFIG_VALUE_0 GIT_CONFIG_KEY_1 GIT_CONFIG_VALUE_1 \
		GIT_CONFIG_KEY_2 GIT_CONFIG_VALUE_2
	# A fetch from a tree on a local path runs git upload-pack in that tree with
	# the environment above cleared, so upload-pack is told on its own command
	# line (for a tree over SSH, the same command runs there).
	UPLOAD_PACK="remote.origin.uploadpack=git -c 'safe.directory=*' upload-pack"

	LC_ALL=C
	export LC_ALL
	unset LANG LANGUAGE 2>/dev/null || true
	# The caller's environment must not reach kbuild or kconfig: each of these
	# would change what gets built without showing up in the build id.
	unset ARCH SUBARCH CROSS_COMPILE KCONFIG_CONFIG KCONFIG_ALLCONFIG KBUILD_OUTPUT \
		KBUILD_EXTMOD KCFLAGS KAFLAGS KCPPFLAGS KBUILD_BUILD_VERSION_TIMESTAMP \
		MAKEFLAGS MFLAGS MAKELEVEL MAKEFILES GNUMAKEFLAGS CONFIG_ GIT_DIR \
		GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY 2>/dev/null || true
	# An empty (but set) LOCALVERSION keeps scripts/setlocalversion from adding
	# "+" for an untagged tree: kernelrelease depends on the config alone.
	LOCALVERSION=
	export LOCALVERSION
	# Never wait for a password or an editor.
	GIT_TERMINAL_PROMPT=0
	GIT_EDITOR=:
	export GIT_TERMINAL_PROMPT GIT_EDITOR

	# Fixed identities and dates: the commit made from a patch depends on the
	# patch and the base only, and the kernel's version string on the build id.
	GIT_COMMITTER_NAME=tlblab
	GIT_COMMITTER_EMAIL=tlblab@localhost
	GIT_COMMITTER_DATE="2000-01-01T00:00:00Z"
	export GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL GIT_COMMITTER_DATE
	BUILD_TIMESTAMP="Sat Jan  1 00:00:00 UTC 2000"
	MAX_PATCH_BYTES=33554432
	MIN_FREE_MB=${TLBLAB_MIN_FREE_MB:-1024}
	# The bounds of a --fetch (the submitter's repository): its time, and the
	# size of the pack it brings (fetch.unpackLimit=1 keeps the pack one file,
	# and RLIMIT_FSIZE caps that file).
	FETCH_TIMEOUT=${TLBLAB_FETCH_TIMEOUT:-600}
	FETCH_MAX_KB=${TLBLAB_FETCH_MAX_KB:-2097152}
	NL='
'
}
