#!/bin/sh
# Builds the initramfs of the QEMU lab machines: busybox-static, OpenSSH's
# sshd with the libraries it links, tlblab-agent, perf, stress-ng (for the
# exec workload) and kexec-tools' kexec when the host has them (a guest can
# then stand in for a `boot: kexec` real machine), GRUB's grub-reboot and
# grub-editenv likewise (for `boot: reboot`), and an init that brings up
# networking (QEMU user networking, 10.0.2.15) and sshd, then says
# "tlblab-guest: ready" on the console.
#
# The lab's keys live in OUT and are made once: lab_key (root's key for the
# guests, the daemon logs in with it) and host_key (the guests' host key;
# its fingerprint is in host_key.fingerprint, and known_hosts lists it for
# the forwarded ports 127.0.0.1:10022..10035, so the daemon checks the
# guests' identity like any other machine's). By convention the x86 guests
# use 10022..10031 and the arm64 guests 10032..10035; every known_hosts lists
# them all, so an OUT that both share serves both whichever was made last.
#
# usage: mkinitramfs.sh OUT AGENT [--arch x86_64|arm64] [--sysroot DIR]
#                                   -> OUT/initramfs.cpio (uncompressed: under
#                                      TCG the kernel unpacks it fastest)
#
# --arch x86_64 (the default) takes the guest's programs from this host.
# --arch arm64 takes them from --sysroot DIR (kernels/arm64-sysroot.sh OUT
# makes OUT/sysroot) and AGENT must be the aarch64 agent (`make agent-arm64`:
# build/aarch64/tlblab-agent); the libraries come from the sysroot too, found
# with readelf (kernels/elf-libs.sh), as ldd cannot run an arm64 loader.
# kexec and GRUB are not in an arm64 guest. The init is the same
# (kernels/guest-init): it names no console and no architecture.
#
# OUT is shared (the lab and the guest tests use /var/cache/tlblab/guest), and
# two builds may run at once: every file is written under a name of its own
# and renamed into place, so a reader sees the old file or the new one.
#
# The private keys, and initramfs.cpio which holds the host key, are for
# the user who runs the lab only (0600, OUT 0700): whoever reads the host
# key can pose as every guest. The fingerprint and known_hosts are public.
#
# Root writes nothing in a directory of another user's, and reads nothing
# there (docs/security.md): the lab's guests' directory is the daemon's
# user's (make demo's lab-up.sh makes it so), so there this runs as that
# user, who alone reads the keys it makes. Everything it packs is readable
# by anyone (the system's programs, the agent); the archive lists its files
# as root's, as the guest's sshd wants them.
set -eu
usage="usage: mkinitramfs.sh OUT AGENT [--arch x86_64|arm64] [--sysroot DIR]"
out=${1:?$usage}
agent=${2:?$usage}
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" = 0 ] && [ -d "$out" ] && [ "$(stat -c %u -- "$out")" != 0 ]; then
	exec sh "$here/../scripts/as-user.sh" "$(stat -c %U -- "$out")" sh "$here/mkinitramfs.sh" "$@"
fi
shift 2
arch=x86_64
sysroot=
while [ $# -gt 0 ]; do
	case $1 in
	--arch) arch=${2:?$usage} ;;
	--sysroot) sysroot=${2:?$usage} ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
	shift 2
done
# shellcheck source=kernels/elf-libs.sh
. "$here/elf-libs.sh"

fail() {
	echo "mkinitramfs: $*" >&2
	exit 1
}

# src: the root that the guest's programs come from (empty: this host)
case $arch in
x86_64|amd64)
	src=
	hint="apt-get install busybox-static openssh-server; make"
	;;
arm64|aarch64)
	[ -n "$sysroot" ] || fail "--arch arm64 needs --sysroot DIR (kernels/arm64-sysroot.sh OUT makes OUT/sysroot)"
	[ -f "$sysroot/.tlblab-sysroot" ] || fail "$sysroot is not a sysroot made by kernels/arm64-sysroot.sh"
	# the tree that OUT/sysroot links to now: one tree for the whole run
	src=$(cd "$sysroot" && pwd -P)
	triplet=aarch64-linux-gnu
	hint="kernels/arm64-sysroot.sh; make agent-arm64"
	readelf -h "$agent" 2>/dev/null | grep -q 'Machine:.*AArch64' ||
		fail "$agent is not an aarch64 binary (make agent-arm64 builds build/aarch64/tlblab-agent)"
	# the guest's busybox cannot run here to list its applets (below)
	[ -x /bin/busybox ] || fail "/bin/busybox is missing: its list of applets is the guest's (apt-get install busybox-static)"
	;;
*)
	fail "--arch $arch: unknown (x86_64 or arm64)"
	;;
esac
# in_src PATH: where the guest's PATH is on this host, links followed inside src
in_src() {
	if [ -z "$src" ]; then
		printf '%s\n' "$1"
	else
		printf '%s%s\n' "$src" "$(elf_resolve "$src" "$1")"
	fi
}

for f in "$(in_src /bin/busybox)" "$(in_src /usr/sbin/sshd)" "$agent"; do
	[ -x "$f" ] || fail "$f is missing ($hint)"
done
mkdir -p "$out"
chmod 700 "$out"
[ -f "$out/lab_key" ] || ssh-keygen -q -t ed25519 -N '' -C tlblab-lab -f "$out/lab_key" </dev/null
[ -f "$out/host_key" ] || ssh-keygen -q -t ed25519 -N '' -C tlblab-guest -f "$out/host_key" </dev/null
# keys an older version (or a copy) left readable by others
chmod 600 "$out/lab_key" "$out/host_key"
chmod 644 "$out/lab_key.pub" "$out/host_key.pub"
root=$(mktemp -d "$out/root.XXXXXX")
tmp=$(mktemp "$out/tmp.XXXXXX")
libs=$(mktemp "$out/libs.XXXXXX")
trap 'rm -rf "$root" "$tmp" "$libs"' EXIT
ssh-keygen -l -E sha256 -f "$out/host_key.pub" | awk '{print $2}' >"$tmp"
chmod 644 "$tmp"
mv "$tmp" "$out/host_key.fingerprint"
# guests are reached through forwarded ports 10022..10035 on loopback
for port in 10022 10023 10024 10025 10026 10027 10028 10029 10030 10031 10032 10033 10034 10035; do
	echo "[127.0.0.1]:$port $(cut -d' ' -f1-2 "$out/host_key.pub")"
done >"$tmp"
chmod 644 "$tmp"
mv "$tmp" "$out/known_hosts"
mkdir -p "$root/bin" "$root/sbin" "$root/usr/bin" "$root/usr/sbin" "$root/etc/ssh" "$root/root/.ssh" \
	"$root/proc" "$root/sys" "$root/dev" "$root/tmp" "$root/run" "$root/var/empty" "$root/lib64"
cp "$(in_src /bin/busybox)" "$root/bin/busybox"
# An arm64 busybox cannot run here to list its applets; the host's
# busybox-static is built from the same Debian source with the same
# configuration, so its list is theirs.
for applet in $(/bin/busybox --list); do
	[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done

# a dynamic binary of this host and every library it links, at the same paths
copy_with_libs_host() {
	mkdir -p "$root$(dirname "$2")"
	cp "$1" "$root$2"
	ldd "$1" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' | while read -r lib; do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}
# the same for a binary of the sysroot: each library at the path the
# guest's loader opens, its links followed inside the sysroot
copy_with_libs_sysroot() {
	mkdir -p "$root$(dirname "$2")"
	cp "$(in_src "$1")" "$root$2"
	elf_libs "$src" "$triplet" "$1" >"$libs" || fail "$src$1: cannot read its libraries"
	while read -r kind lib needer; do
		[ "$kind" = lib ] || fail "$needer needs $lib, which $src lacks (kernels/arm64-sysroot.sh makes it)"
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp "$(in_src "$lib")" "$root$lib"
	done <"$libs"
}
copy_with_libs() {
	if [ -z "$src" ]; then
		copy_with_libs_host "$@"
	else
		copy_with_libs_sysroot "$@"
	fi
}
copy_with_libs /usr/sbin/sshd /usr/sbin/sshd
if [ -x "$(in_src /usr/bin/perf)" ] && [ "${TLBLAB_GUEST_PERF:-1}" = 1 ]; then
	copy_with_libs /usr/bin/perf /usr/bin/perf
fi
# stress-ng, which the exec workload runs (tlblab-agent run --workload exec
# --parser stress-ng -- stress-ng --tlb-shootdown 2 ...)
if [ -x "$(in_src /usr/bin/stress-ng)" ] && [ "${TLBLAB_GUEST_STRESS_NG:-1}" = 1 ]; then
	copy_with_libs /usr/bin/stress-ng /usr/bin/stress-ng
fi
# kexec-tools and GRUB come from this host, so only into the host's guests
kexec=
if [ -z "$src" ]; then
	# kexec-tools (Debian: /sbin/kexec, which PATH may lack for non-root users)
	for kexec in /usr/sbin/kexec /sbin/kexec ""; do
		[ -x "$kexec" ] && break
	done
fi
if [ -n "$kexec" ]; then
	copy_with_libs "$kexec" /sbin/kexec
fi
# GRUB's grub-reboot and what it runs, so a guest booted by GRUB from a
# disk can stand in for a `boot: reboot` machine
if [ -z "$src" ] && [ -x /usr/sbin/grub-reboot ] && [ -x /usr/bin/grub-editenv ] && [ -x /usr/sbin/grub-probe ] &&
	[ -f /usr/share/grub/grub-mkconfig_lib ]; then
	copy_with_libs /usr/bin/grub-editenv /usr/bin/grub-editenv
	copy_with_libs /usr/sbin/grub-probe /usr/sbin/grub-probe
	cp /usr/sbin/grub-reboot "$root/usr/sbin/grub-reboot"
	mkdir -p "$root/usr/share/grub"
	cp /usr/share/grub/grub-mkconfig_lib "$root/usr/share/grub/"
fi
cp "$agent" "$root/usr/bin/tlblab-agent"

cp "$out/host_key" "$root/etc/ssh/ssh_host_ed25519_key"
cp "$out/host_key.pub" "$root/etc/ssh/ssh_host_ed25519_key.pub"
chmod 600 "$root/etc/ssh/ssh_host_ed25519_key"
cp "$out/lab_key.pub" "$root/root/.ssh/authorized_keys"
cat >"$root/etc/passwd" <<'EOP'
root:x:0:0:root:/root:/bin/sh
sshd:x:100:65534:sshd:/run/sshd:/bin/false
EOP
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
cat >"$root/etc/ssh/sshd_config" <<'EOS'
Port 22
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
Subsystem sftp internal-sftp
PidFile /run/sshd.pid
EOS
cp "$here/guest-init" "$root/init"
chmod 755 "$root/init"
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$tmp"
chmod 600 "$tmp"	# the guests' host key is in it
mv "$tmp" "$out/initramfs.cpio"
echo "mkinitramfs: $out/initramfs.cpio ($(du -h "$out/initramfs.cpio" | cut -f1)), host key $(cat "$out/host_key.fingerprint")"
