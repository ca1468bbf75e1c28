#!/bin/sh
# lab-dirs.sh [CACHE [DATA]]: the embedded lab's directories, each with its
# one owner (docs/security.md has the table), for make demo, make lab-arm64
# and the tests that share the lab; run as root.
#
#   CACHE (/var/cache/tlblab)   root's, 0755: the kernel tree (root imports
#                               it, the daemon reads it) and the arm64
#                               sysroot
#   CACHE/tlblab                the daemon's user's: the builder's checkout,
#                               object dirs, ccache and kernels
#   CACHE/guest, guest-arm64    the daemon's user's, 0700: the guests'
#                               initramfs and keys (mkinitramfs.sh runs as
#                               that user there)
#   DATA (/var/lib/tlblab)      the daemon's user's, 0700: store, token, log
#
# A missing one is made with its owner (its parent is root's, so nobody
# else can have put a link in its place). One that exists must have that
# owner already, and hold nothing of another user's: this script chowns
# nothing, it names the path, the owner it has and the one it needs, and
# fails. The daemon's user is LAB_USER (tlblab, lab.user of
# configs/local.yaml).
set -eu
CACHE=${1:-/var/cache/tlblab}
DATA=${2:-/var/lib/tlblab}
LAB_USER=${LAB_USER:-tlblab}
here=$(cd "$(dirname "$0")" && pwd)

fail() {
	echo "lab-dirs: $*" >&2
	exit 1
}
[ "$(id -u)" = 0 ] || fail "run as root (it makes directories for $LAB_USER)"
id -u "$LAB_USER" >/dev/null 2>&1 || fail "the user $LAB_USER is missing (scripts/deps.sh demo adds it)"

# owned DIR USER: DIR is a directory (not a link) of USER's, else an error
owned() {
	[ -d "$1" ] && [ ! -L "$1" ] || fail "$1 is not a directory"
	_has=$(stat -c %U -- "$1")
	[ "$_has" = "$2" ] ||
		fail "$1 belongs to $_has; the lab needs it to be $2's (chown -R -h $2: $1, if what it holds is to be kept)"
}

# root_dir DIR: DIR, root's and writable by root alone
root_dir() {
	[ -e "$1" ] || install -d -m 0755 -o root -g root "$1"
	owned "$1" root
	[ "$(( 0$(stat -c %a -- "$1") & 022 ))" = 0 ] ||
		fail "$1 is writable by others than root (mode $(stat -c %a -- "$1")); the lab needs it 0755"
}

# user_dir DIR MODE: DIR, the daemon's user's, nothing of another user's in it
user_dir() {
	_parent=$(dirname "$1")
	owned "$_parent" root
	[ -e "$1" ] || [ -L "$1" ] || install -d -m "$2" -o "$LAB_USER" -g "$LAB_USER" "$1"
	owned "$1" "$LAB_USER"
	# listed as the user (root reads nothing there): the first few paths of
	# someone else's, as an older tlblab's root-run builds left them. A path
	# find could not stat is printed too: one that a running build removed
	# as find passed (its private object copy, objp-*) is no one's, and is
	# dropped when it is gone by the time it is looked at again
	_foreign=$(sh "$here/as-user.sh" "$LAB_USER" find "$1" ! -user "$LAB_USER" 2>/dev/null |
		{
			_n=0
			while [ $_n -lt 3 ] && read -r f; do
				_o=$(stat -c %U -- "$f" 2>/dev/null) || continue
				[ "$_o" != "$LAB_USER" ] || continue
				printf '%s (%s) ' "$f" "$_o"
				_n=$((_n + 1))
			done
		})
	[ -z "$_foreign" ] ||
		fail "$1 holds files of other users, left by an older tlblab's root-run steps: $_foreign- give them to $LAB_USER (chown -R -h $LAB_USER: $1) or remove them"
}

root_dir "$CACHE"
user_dir "$CACHE/tlblab" 0755
user_dir "$CACHE/guest" 0700
user_dir "$CACHE/guest-arm64" 0700
user_dir "$DATA" 0700
