#!/bin/sh
# Makes QEMU 8.1 or later the machine's qemu-system-x86 and qemu-system-arm,
# from Debian's bookworm-backports (QEMU 10.0 there), for the lab's
# deterministic mode: `-icount` with SMP guests livelocks before 8.1 ("accel/
# tcg: ensure fairness with icount" was first released in 8.1), and the
# instruction-counting plugin needs plugin API 2 or later (per-vCPU
# scoreboards).
#
# The backports suite is added to the mirror the machine's own apt sources
# already name for its release (read from them, so no mirror is written
# here), and only QEMU's packages (and its firmware seabios/ipxe, which the
# newer QEMU requires at newer versions) are pinned to it: nothing else on
# the machine moves to backports.
#
# TLBLAB_QEMU_BACKPORTS=no keeps the release's own QEMU (7.2 on Debian 12):
# the lab still works there, under multi-threaded TCG without icount.
# Exits 0 when QEMU is new enough (or was kept on purpose), 1 when it could
# not be made so (the message says why).
# usage: scripts/qemu-backports.sh
set -eu
PKGS="qemu-system-x86 qemu-system-arm"
PIN_PKGS="qemu-system-x86 qemu-system-arm qemu-system-common qemu-system-data qemu-system-gui qemu-utils qemu-block-extra qemu-system-modules-opengl qemu-system-modules-spice seabios ipxe-qemu"
LIST=/etc/apt/sources.list.d/tlblab-backports.sources
PREF=/etc/apt/preferences.d/tlblab-qemu-backports

new_enough() {
	for p in $PKGS; do
		v=$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null) || return 1
		[ -n "$v" ] && dpkg --compare-versions "$v" ge 1:8.1 || return 1
	done
}

if [ "${TLBLAB_QEMU_BACKPORTS:-yes}" = no ]; then
	exit 0
fi
new_enough && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "qemu-backports: QEMU older than 8.1 and not root: install qemu-system-x86 and qemu-system-arm" \
		"from bookworm-backports, or set TLBLAB_QEMU_BACKPORTS=no to keep it" >&2
	exit 1
fi
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
if [ -z "$codename" ]; then
	echo "qemu-backports: /etc/os-release names no release codename; set TLBLAB_QEMU_BACKPORTS=no" >&2
	exit 1
fi

# The URI that serves "$codename" with component main: deb822 files
# (*.sources: Types/URIs/Suites/Components stanzas) and one-line files
# (deb [options] URI SUITE COMPONENTS...), the first that fits.
mirror_of() {
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && [ "$f" != "$LIST" ] || continue
		awk -v want="$1" '
			function flush() {
				if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " want " ") &&
				    (" " comps " ") ~ / main / && uris != "" && !found) {
					split(uris, u, " "); print u[1]; found = 1
				}
				types = uris = suites = comps = ""
			}
			/^[ \t]*#/ { next }
			/^[ \t]*$/ { flush(); next }
			tolower($1) == "types:" { sub(/^[^:]*:[ \t]*/, ""); types = $0 }
			tolower($1) == "uris:" { sub(/^[^:]*:[ \t]*/, ""); uris = $0 }
			tolower($1) == "suites:" { sub(/^[^:]*:[ \t]*/, ""); suites = $0 }
			tolower($1) == "components:" { sub(/^[^:]*:[ \t]*/, ""); comps = $0 }
			END { flush() }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk -v want="$1" '
			$1 == "deb" {
				i = 2
				if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
				if ($(i + 1) == want) {
					for (k = i + 2; k <= NF; k++) if ($k == "main") { print $i; exit }
				}
			}' "$f"
	done
}
uri=$(mirror_of "$codename" | head -n 1)
if [ -z "$uri" ]; then
	echo "qemu-backports: no apt source of this machine serves $codename main; cannot add" \
		"$codename-backports (set TLBLAB_QEMU_BACKPORTS=no to keep QEMU $(dpkg-query -W -f='${Version}' qemu-system-x86 2>/dev/null || echo '(none)'))" >&2
	exit 1
fi
echo "qemu-backports: QEMU from $codename-backports on the machine's own mirror, pinned to QEMU's packages"
cat >"$LIST" <<EOF
# added by tlblab's scripts/qemu-backports.sh: QEMU 8.1+ for the lab's
# deterministic mode; only QEMU's packages are pinned to it ($PREF)
Types: deb
URIs: $uri
Suites: $codename-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
{
	echo "# tlblab: QEMU (and its firmware) from backports, nothing else"
	echo "Package: *"
	echo "Pin: release n=$codename-backports"
	echo "Pin-Priority: 100"
	echo
	echo "Package: $PIN_PKGS"
	echo "Pin: release n=$codename-backports"
	echo "Pin-Priority: 990"
} >"$PREF"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $PKGS >/dev/null
if ! new_enough; then
	echo "qemu-backports: QEMU is still $(dpkg-query -W -f='${Version}' qemu-system-x86) after the install" >&2
	exit 1
fi
echo "qemu-backports: qemu-system-x86 $(dpkg-query -W -f='${Version}' qemu-system-x86)"
