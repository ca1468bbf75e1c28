# Sourced by kernels/arm64-sysroot.sh and kernels/mkinitramfs.sh: the shared
# libraries that a binary of another architecture loads, found inside a
# sysroot with readelf. ldd cannot answer for such a binary, as it runs the
# binary's own loader.
#
# The search is that of a Debian loader with no /etc/ld.so.cache: the
# multiarch directories, then /lib and /usr/lib. RPATH and RUNPATH are not
# followed; no Debian binary that a guest holds has one.
#
# Paths are inside the sysroot (/usr/sbin/sshd), without spaces. The
# variables of these functions start with _elf, as they share the caller's.

# elf_resolve ROOT PATH: PATH with its symbolic links followed inside ROOT.
# A link's absolute target is inside ROOT too (libc6 links
# /lib/ld-linux-aarch64.so.1 to its multiarch copy), never on this host.
elf_resolve() {
	_elf_p=$2
	_elf_n=0
	while [ -L "$1$_elf_p" ]; do
		_elf_n=$((_elf_n + 1))
		if [ "$_elf_n" -gt 40 ]; then
			echo "elf: $1$2: too many levels of symbolic links" >&2
			return 1
		fi
		_elf_t=$(readlink "$1$_elf_p")
		case $_elf_t in
		/*) _elf_p=$_elf_t ;;
		*) _elf_p=${_elf_p%/*}/$_elf_t ;;
		esac
	done
	printf '%s\n' "$_elf_p"
}

# elf_find ROOT TRIPLET SONAME: where the loader finds SONAME, or nothing.
elf_find() {
	for _elf_d in "/lib/$2" "/usr/lib/$2" /lib /usr/lib; do
		_elf_r=$(elf_resolve "$1" "$_elf_d/$3") || return 1
		if [ -f "$1$_elf_r" ]; then
			printf '%s\n' "$_elf_d/$3"
			return 0
		fi
	done
}

# elf_libs ROOT TRIPLET FILE...: every library the FILEs load, directly or
# through another library, and their program interpreter, one line each:
#   lib PATH                 found at PATH (the path the loader opens)
#   missing SONAME NEEDER    NEEDER asks for SONAME and ROOT has none
# Returns 1, with a message, when a FILE is not an ELF file.
elf_libs() {
	_elf_root=$1
	_elf_triplet=$2
	shift 2
	_elf_queue=$*
	_elf_seen=' '
	while [ -n "$_elf_queue" ]; do
		# shellcheck disable=SC2086
		set -- $_elf_queue
		_elf_f=$1
		shift
		_elf_queue=$*
		_elf_real=$_elf_root$(elf_resolve "$_elf_root" "$_elf_f") || return 1
		if ! readelf -h "$_elf_real" >/dev/null 2>&1; then
			echo "elf: $_elf_root$_elf_f is not an ELF file" >&2
			return 1
		fi
		for _elf_i in $(readelf -lW "$_elf_real" |
			sed -n 's/.*\[Requesting program interpreter: \(.*\)\]$/\1/p'); do
			if [ ! -f "$_elf_root$(elf_resolve "$_elf_root" "$_elf_i")" ]; then
				echo "missing $_elf_i $_elf_f"
				continue
			fi
			case $_elf_seen in *" $_elf_i "*) continue ;; esac
			_elf_seen="$_elf_seen$_elf_i "
			echo "lib $_elf_i"
		done
		for _elf_so in $(readelf -dW "$_elf_real" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
			_elf_at=$(elf_find "$_elf_root" "$_elf_triplet" "$_elf_so") || return 1
			if [ -z "$_elf_at" ]; then
				echo "missing $_elf_so $_elf_f"
				continue
			fi
			case $_elf_seen in *" $_elf_at "*) continue ;; esac
			_elf_seen="$_elf_seen$_elf_at "
			echo "lib $_elf_at"
			_elf_queue="$_elf_queue $_elf_at"
		done
	done
}
