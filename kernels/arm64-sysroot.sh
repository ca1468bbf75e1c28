#!/bin/sh
# Makes the userland of the arm64 lab machines on this (x86) host: a sysroot
# of Debian 12's own arm64 packages, unpacked with dpkg-deb -x and never
# installed, so the host's dpkg knows nothing of them. It holds
#
#  - libjansson-dev, whose libjansson.a the static aarch64 agent links
#    (`make agent-arm64`); libc, libm and pthread come from the cross
#    toolchain's own sysroot (/usr/aarch64-linux-gnu, libc6-dev-arm64-cross);
#  - what kernels/mkinitramfs.sh --arch arm64 puts in the guest: busybox-static,
#    openssh-server, linux-perf and stress-ng, and every shared library their
#    binaries load. Those are found by following readelf's NEEDED entries
#    inside the sysroot (kernels/elf-libs.sh); a soname that is missing is
#    looked for among the library packages that the packages already
#    unpacked depend on, until none is missing. Package dependencies alone
#    would pull in perl, python and debconf; the binaries need far less.
#
# TLBLAB_GUEST_PERF=0 and TLBLAB_GUEST_STRESS_NG=0 leave perf (which loads
# libperl and libpython) and stress-ng out, as they do for mkinitramfs.sh.
#
# usage: arm64-sysroot.sh OUT   -> OUT/sysroot, OUT/debs (the downloads)
#
# The first run adds the arm64 architecture to dpkg and runs apt-get update
# (as root); every run after it reuses OUT/debs. OUT/sysroot is a symbolic
# link to a whole tree, replaced in one rename, so a build that reads it sees
# the old tree or the new one (the old one is then removed: a build still
# reading it fails, and is rerun). A run whose packages and scripts are those
# of the tree in place does nothing: the tree's .tlblab-sysroot says which.
set -eu
out=${1:?usage: arm64-sysroot.sh OUT}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=kernels/elf-libs.sh
. "$here/elf-libs.sh"
triplet=aarch64-linux-gnu

fail() {
	echo "arm64-sysroot: $*" >&2
	exit 1
}

# The packages to unpack whole, and the binaries whose libraries the guest needs
roots="libjansson-dev busybox-static openssh-server"
bins=/usr/sbin/sshd
if [ "${TLBLAB_GUEST_PERF:-1}" = 1 ]; then
	roots="$roots linux-perf"
	bins="$bins /usr/bin/perf"
fi
if [ "${TLBLAB_GUEST_STRESS_NG:-1}" = 1 ]; then
	roots="$roots stress-ng"
	bins="$bins /usr/bin/stress-ng"
fi
# a tree made by other scripts, or for other packages, is made again
stamp="packages: $roots
binaries: $bins
scripts: $(cat "$0" "$here/elf-libs.sh" | cksum)"

if [ -f "$out/sysroot/.tlblab-sysroot" ] &&
	[ "$(sed -n '1,3p' "$out/sysroot/.tlblab-sysroot")" = "$stamp" ]; then
	echo "arm64-sysroot: $out/sysroot is up to date"
	exit 0
fi

# the agent links the cross toolchain's libc, not Debian's arm64 libc6-dev
for f in libc.a libm.a libpthread.a; do
	[ -f "/usr/$triplet/lib/$f" ] ||
		fail "/usr/$triplet/lib/$f is missing (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross)"
done
for c in dpkg-deb readelf; do
	command -v "$c" >/dev/null || fail "$c is missing (apt-get install dpkg binutils)"
done

mkdir -p "$out/debs"
tree=$(mktemp -d "$out/sysroot.XXXXXX")
log=$(mktemp "$out/log.XXXXXX")
deps=$(mktemp "$out/deps.XXXXXX")	# the Depends of the unpacked packages
needs=$(mktemp "$out/needs.XXXXXX")	# what elf_libs says of the binaries
trap 'rm -rf "$tree" "$log" "$deps" "$needs" "$out/debs/dl.$$" "$out/debs/no-arm64.$$"' EXIT

# The arm64 package lists, once, and only when something is to be downloaded:
# a run that finds its packages in OUT/debs asks apt nothing.
apt_ready=
apt_prepare() {
	[ -n "$apt_ready" ] && return 0
	apt_ready=1
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		[ "$(id -u)" = 0 ] || fail "dpkg has no arm64 architecture (as root: dpkg --add-architecture arm64)"
		echo "arm64-sysroot: dpkg --add-architecture arm64"
		dpkg --add-architecture arm64
	fi
	eval "$(apt-config shell lists Dir::State::lists/d)"
	for f in "${lists:-/var/lib/apt/lists/}"*_binary-arm64_Packages*; do
		[ -f "$f" ] && return 0
	done
	[ "$(id -u)" = 0 ] || fail "apt has no arm64 package lists (as root: apt-get update)"
	echo "arm64-sysroot: apt-get update (arm64 package lists)"
	apt-get -o DPkg::Lock::Timeout=900 -q update >"$log" 2>&1 ||
		fail "apt-get update failed: $(tail -n 3 "$log")"
}

# cached PKG: got= the .deb of PKG in OUT/debs, or returns 1
cached() {
	for got in "$out/debs/$1"_*.deb; do
		[ -f "$got" ] && return 0
	done
	return 1
}

# download PKG...: the arm64 .debs that OUT/debs lacks, in one apt-get call.
# One call per round, not per package: apt rebuilds its cache at every call
# where none is kept (Debian's container images keep none), seconds each.
download() {
	_want=
	for _p; do
		cached "$_p" || _want="$_want $_p:arm64"
	done
	[ -n "$_want" ] || return 0
	apt_prepare
	mkdir -p "$out/debs/dl.$$"
	echo "arm64-sysroot: apt-get download$_want"
	# apt-get download writes NAME_VERSION_ARCH.deb in place: here, then renamed
	# shellcheck disable=SC2086
	if ! (cd "$out/debs/dl.$$" && apt-get download -q $_want) >"$log" 2>&1; then
		fail "apt-get download failed: $(grep '^E:' "$log" | head -n 3)"
	fi
	mv "$out/debs/dl.$$"/*.deb "$out/debs/"
	rmdir "$out/debs/dl.$$"
}

# arm64_only PKG...: those of PKGs that have an arm64 build. An Architecture:
# all package (libpam-runtime) has no PKG:arm64 to download, and ships no
# arm64 library either: those are kept in OUT/debs/no-arm64, so that a run
# from the cache need not ask apt again. One that apt does not know (a
# virtual package, or apt failing) is only left out of this run.
arm64_only() {
	[ $# -gt 0 ] || return 0
	for _p; do
		echo "$_p:arm64 $_p"
	done | xargs apt-cache show --no-all-versions 2>/dev/null |
		awk '/^Package:/ { p = $2 } /^Architecture:/ { print p, $2 }' >"$log" || true
	{
		cat "$out/debs/no-arm64" 2>/dev/null || true
		awk '$2 == "all" { print $1 }' "$log"
	} | sort -u >"$out/debs/no-arm64.$$"
	mv "$out/debs/no-arm64.$$" "$out/debs/no-arm64"
	awk '$2 == "arm64" { print $1 }' "$log"
}

# unpack PKG: PKG's files into the tree, its .deb into the tree's list
# (.tlblab-debs says which packages a tree was made of), its Depends to $deps
unpacked=' '
unpack() {
	cached "$1" || fail "package $1:arm64 was not downloaded"
	dpkg-deb -x "$got" "$tree" || fail "package $1: dpkg-deb -x $got failed"
	unpacked="$unpacked$1 "
	echo "$got" >>"$tree/.tlblab-debs"
	dpkg-deb -f "$got" Depends Pre-Depends >>"$deps"
}

# The packages that the unpacked ones depend on (first alternatives, without
# versions or :any), of those that are library packages and not yet tried
tried=' '
candidates() {
	sed 's/^[A-Za-z-]*: //' "$deps" | tr ',' '\n' |
		sed 's/|.*//; s/(.*)//; s/:.*//; s/[[:space:]]//g' | sort -u |
		while read -r _p; do
			case $_p in lib*|zlib1g) ;; *) continue ;; esac
			case $tried$unpacked in *" $_p "*) continue ;; esac
			echo "$_p"
		done
}

# ships DEB SONAME...: whether DEB has a file named one of SONAMEs
ships() {
	_deb=$1
	shift
	dpkg-deb -c "$_deb" | awk -v want="$*" '
		BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) s[w[i]] = 1 }
		{ k = split($6, part, "/"); if (part[k] in s) found = 1 }
		END { exit !found }'
}

# shellcheck disable=SC2086
download $roots
for p in $roots; do
	unpack "$p"
done
[ -f "$tree/usr/lib/$triplet/libjansson.a" ] || fail "package libjansson-dev: no /usr/lib/$triplet/libjansson.a"
[ -x "$tree/bin/busybox" ] || fail "package busybox-static: no /bin/busybox"
for b in $bins; do
	[ -f "$tree$(elf_resolve "$tree" "$b")" ] || fail "$b is not in its package"
done

# Rounds: unpack every candidate that ships a missing soname, until none is
# missing; a round that finds none of them ends in an error.
while :; do
	# shellcheck disable=SC2086
	elf_libs "$tree" "$triplet" $bins >"$needs" || fail "reading the libraries of$bins failed"
	# file names: the loader is asked for by path (/lib/ld-linux-aarch64.so.1)
	missing=$(awk '$1 == "missing" { sub(".*/", "", $2); print $2 }' "$needs" | sort -u | tr '\n' ' ')
	[ -n "$missing" ] || break
	found=
	cands=$(candidates)
	new=
	for c in $cands; do
		cached "$c" || grep -qsxF "$c" "$out/debs/no-arm64" || new="$new $c"
	done
	if [ -n "$new" ]; then
		apt_prepare
		# shellcheck disable=SC2046,SC2086
		download $(arm64_only $new)
	fi
	for c in $cands; do
		tried="$tried$c "
		cached "$c" || continue
		# shellcheck disable=SC2086
		if ships "$got" $missing; then
			unpack "$c"
			found=1
		fi
	done
	if [ -z "$found" ]; then
		awk '$1 == "missing" { print "arm64-sysroot: " $3 " needs " $2 \
			", which no library package it depends on ships" }' "$needs" | sort -u >&2
		exit 1
	fi
done

printf '%s\n' "$stamp" >"$tree/.tlblab-sysroot"
chmod 755 "$tree"
old=$(readlink "$out/sysroot" 2>/dev/null || true)
# a sysroot that is a plain directory (made by hand) cannot be renamed over
if [ -d "$out/sysroot" ] && [ ! -L "$out/sysroot" ]; then
	rm -rf "$out/sysroot"
fi
ln -s "${tree##*/}" "$out/sysroot.link.$$"
mv -T "$out/sysroot.link.$$" "$out/sysroot"
case $old in sysroot.??????) [ "$old" = "${tree##*/}" ] || rm -rf "${out:?}/$old" ;; esac
tree=	# in place: not removed on exit
echo "arm64-sysroot: $out/sysroot ($(du -sh "$out/sysroot/" | cut -f1), $(wc -l <"$out/sysroot/.tlblab-debs") packages)"
