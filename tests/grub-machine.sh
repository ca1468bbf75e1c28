#!/bin/sh
# A disk that boots like a real machine's with GRUB, for QEMU guests that
# stand in for `boot: reboot` machines. GRUB's i386-pc core image, made
# loadable as a Linux kernel with lnxboot.img, is what QEMU starts (-kernel
# GRUB.LNX, again at every reset); it reads its grub.cfg, its environment
# block and the kernels from an ext2 file system on the virtio disk through
# the BIOS. grub.cfg is what Debian's would do for this: boot next_entry
# once when grub-reboot set it (clearing it first), else the default entry,
# and source custom.cfg, where tlblab writes its entry.
#
# The guest mounts the disk at /boot, so GRUB's paths are the guest's
# /boot paths without the /boot (grub_dir: / in the machine's config).
#
# usage: grub-machine.sh DIR KERNEL INITRD -> DIR/grub.lnx and DIR/disk.img,
#        with KERNEL as the machine's known-good default entry
set -eu
dir=${1:?usage: grub-machine.sh DIR KERNEL INITRD}
kernel=${2:?usage}
initrd=${3:?usage}
lib=/usr/lib/grub/i386-pc
for f in "$lib/lnxboot.img" "$lib/ext2.mod" /usr/bin/grub-mkimage /usr/bin/grub-editenv /sbin/mke2fs; do
	[ -e "$f" ] || { echo "grub-machine: $f is missing (apt-get install grub-pc-bin grub-common e2fsprogs)" >&2; exit 1; }
done
mkdir -p "$dir"
root=$(mktemp -d "$dir/root.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/grub/i386-pc"
cp "$lib"/*.mod "$lib"/*.lst "$root/grub/i386-pc/"
cp "$kernel" "$root/vmlinuz-good"
cp "$initrd" "$root/initramfs.cpio"
cat >"$root/grub/grub.cfg" <<'EOC'
serial --unit=0 --speed=115200
terminal_input serial
terminal_output serial
set timeout=0
set default=known-good
load_env
if [ "${next_entry}" ]; then
	set default="${next_entry}"
	set next_entry=
	save_env next_entry
fi
menuentry 'known good' --id known-good {
	echo 'tlblab-grub: booting the known-good kernel'
	linux /vmlinuz-good console=ttyS0 panic=-1 random.trust_cpu=on
	initrd /initramfs.cpio
}
if [ -f /grub/custom.cfg ]; then
	source /grub/custom.cfg
fi
EOC
grub-editenv "$root/grub/grubenv" create
grub-mkimage -O i386-pc -o "$dir/core.img" -p '(hd0)/grub' \
	biosdisk ext2 normal linux search search_fs_file configfile loadenv echo test serial terminal
cat "$lib/lnxboot.img" "$dir/core.img" >"$dir/grub.lnx"
rm -f "$dir/core.img" "$dir/disk.img"
size=$(( ($(du -sm "$root" | cut -f1) + 64) ))
/sbin/mke2fs -q -t ext2 -L tlblab-boot -d "$root" "$dir/disk.img" "${size}M"
echo "grub-machine: $dir/grub.lnx, $dir/disk.img (${size} MiB)"
