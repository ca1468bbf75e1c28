# shellcheck shell=sh
# build.sh's part "args": the command line. Every argument is checked here
# as well as in the daemon, and passed to git and make as a quoted
# argument, never through eval or a built string: refs by git's rules and a
# narrower character set, URLs by the grammar the daemon's API takes, paths
# made absolute and canonical. Sourced by build.sh (parts.list): args_parse
# reads the options, args_check checks what they say together.

usage() {
	fail infra "$1 (usage: build.sh --tree TREE --work WORK --ref REF [--patch FILE | --fetch URL --fetch-ref REF] --config-base BASE [--fragment FILE]... [--jobs N] --out OUT [--vmlinux])"
}

# A value with no newline, no leading '-', not empty.
plain_value() {
	[ -n "$1" ] || return 1
	case $1 in -*) return 1 ;; esac
	case $1 in *"$NL"* | *"$(printf '\r')"*) return 1 ;; esac
	return 0
}

is_hex_ref() {
	case $1 in *[!0-9a-f]*) return 1 ;; esac
	[ ${#1} -ge 7 ] && [ ${#1} -le 40 ]
}

# Git's ref-format rules, and a character set narrower than git's: a ref
# also travels through the daemon's SSH command lines and into refspecs,
# where ';', '$', '+' or ':' would mean something.
valid_ref() {
	plain_value "$1" || return 1
	[ ${#1} -le 200 ] || return 1
	case $1 in [!A-Za-z0-9]* | *[!A-Za-z0-9._/@-]*) return 1 ;; esac
	is_hex_ref "$1" && return 0
	git check-ref-format --allow-onelevel "$1" >/dev/null 2>&1
}

# A git URL we are willing to clone or fetch: https:// or git:// only (no
# ext::, no ssh with a user-supplied command, no file:// tricks, no http://),
# at most 2048 bytes. The daemon's API takes exactly these for a branch
# (lib/util.c url_valid; tests/fixtures/branch-urls.txt holds both to it).
valid_url() {
	[ ${#1} -le 2048 ] || return 1
	printf '%s\n' "$1" | grep -Eq '^(https|git)://[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?(/[A-Za-z0-9._~/%@-]*)?$'
}

# abs_dir PATH: the canonical absolute path of an existing directory.
abs_dir() {
	(cd -P -- "$1" 2>/dev/null && pwd -P)
}

# abs_file PATH: the absolute path of an existing readable regular file.
abs_file() {
	[ -f "$1" ] && [ -r "$1" ] || return 1
	_d=$(abs_dir "$(dirname -- "$1")") || return 1
	printf '%s/%s\n' "${_d%/}" "$(basename -- "$1")"
}

# args_parse ARG...: the options into tree, work, ref, patch, fetch_url,
# fetch_ref, base, jobs, out, ccache, since, arch, want_vmlinux,
# resolve_only and fragments (newline-separated absolute paths).
args_parse() {
	tree='' work='' ref='' patch='' fetch_url='' fetch_ref='' base='' jobs='' out='' ccache='' since='' arch=''
	want_vmlinux=0
	resolve_only=0
	nfrag=0
	fragments=		# newline-separated absolute paths (none contains a newline)
	while [ $# -gt 0 ]; do
		opt=$1
		shift
		case $opt in
		--vmlinux) want_vmlinux=1; continue ;;
		--resolve) resolve_only=1; continue ;;
		-h | --help) sed -n '/^# usage:/,/^#$/p' "$0" 2>/dev/null || true; finished=1; exit 0 ;;
		--tree | --work | --ref | --patch | --fetch | --fetch-ref | --config-base | --fragment | --jobs | --out | --ccache | --since | --arch) ;;
		*) usage "unknown argument '$(oneline "$opt")'" ;;
		esac
		[ $# -gt 0 ] || usage "$opt needs a value"
		val=$1
		shift
		if ! plain_value "$val"; then
			case $opt in
			--ref | --fetch | --fetch-ref | --since) fail ref "$opt: refused value '$(oneline "$val")' (empty, starts with '-' or has a newline)" ;;
			*) usage "$opt: refused value '$(oneline "$val")' (empty, starts with '-' or has a newline)" ;;
			esac
		fi
		case $opt in
		--tree) [ -z "$tree" ] || usage "--tree given twice"; tree=$val ;;
		--work) [ -z "$work" ] || usage "--work given twice"; work=$val ;;
		--ref) [ -z "$ref" ] || usage "--ref given twice"; ref=$val ;;
		--patch) [ -z "$patch" ] || usage "--patch given twice"; patch=$val ;;
		--fetch) [ -z "$fetch_url" ] || usage "--fetch given twice"; fetch_url=$val ;;
		--fetch-ref) [ -z "$fetch_ref" ] || usage "--fetch-ref given twice"; fetch_ref=$val ;;
		--config-base) [ -z "$base" ] || usage "--config-base given twice"; base=$val ;;
		--jobs) [ -z "$jobs" ] || usage "--jobs given twice"; jobs=$val ;;
		--out) [ -z "$out" ] || usage "--out given twice"; out=$val ;;
		--since) [ -z "$since" ] || usage "--since given twice"; since=$val ;;
		--arch) [ -z "$arch" ] || usage "--arch given twice"; arch=$val ;;
		--ccache)
			[ -z "$ccache" ] || usage "--ccache given twice"
			case $val in /*) ccache=$val ;; *) usage "--ccache must be an absolute path" ;; esac
			;;
		--fragment)
			f=$(abs_file "$val") || usage "--fragment: '$(oneline "$val")' is not a readable file"
			nfrag=$((nfrag + 1))
			[ "$nfrag" -le 64 ] || usage "more than 64 fragments"
			fragments="$fragments$f$NL"
			;;
		esac
	done
}

# args_check: what the options say together; sets karch, cross, image,
# kcc, tree_is_url and base_file.
args_check() {
	[ -n "$tree" ] || usage "--tree is required"
	# karch: the kernel's ARCH; cross: CROSS_COMPILE; image: the file make
	# leaves in arch/$karch/boot/ and the name it is published under
	case ${arch:=x86_64} in
	x86_64) karch=x86 cross='' image=bzImage ;;
	arm64) karch=arm64 cross=aarch64-linux-gnu- image=Image ;;
	*) usage "--arch: '$(oneline "$arch")' is not one of x86_64, arm64" ;;
	esac
	kcc="${cross}gcc"
	[ -n "$work" ] || usage "--work is required"
	[ -n "$ref" ] || usage "--ref is required"
	if [ "$resolve_only" = 1 ]; then
		[ -z "$patch$base$out" ] || usage "--resolve takes no --patch, --config-base or --out"
		base=tinyconfig
	else
		[ -n "$base" ] || usage "--config-base is required"
		[ -n "$out" ] || usage "--out is required"
		[ -z "$since" ] || usage "--since goes with --resolve"
	fi
	[ -z "$since" ] || valid_ref "$since" || fail ref "--since '$(oneline "$since")' is not a valid ref nor a commit id"
	valid_ref "$ref" || fail ref "--ref '$(oneline "$ref")' is not a valid ref (git check-ref-format, characters [A-Za-z0-9._/@-]) nor a 7..40 digit hex commit id"
	if [ -n "$patch" ] && [ -n "$fetch_url$fetch_ref" ]; then
		usage "--patch and --fetch exclude each other"
	fi
	if [ -n "$fetch_url$fetch_ref" ]; then
		if [ -z "$fetch_url" ] || [ -z "$fetch_ref" ]; then
			usage "--fetch and --fetch-ref go together"
		fi
		valid_ref "$fetch_ref" || fail ref "--fetch-ref '$(oneline "$fetch_ref")' is not a valid ref"
		# A local repository only as an absolute path (an operator's own
		# call: the daemon sends URLs only), never a relative one, which
		# would be read against wherever this script runs.
		if valid_url "$fetch_url"; then
			:
		elif case $fetch_url in /*) true ;; *) false ;; esac && fu=$(abs_dir "$fetch_url"); then
			fetch_url=$fu
		else
			fail ref "--fetch '$(oneline "$fetch_url")' is neither an https:// or git:// URL nor the absolute path of a directory"
		fi
	fi
	case $FETCH_TIMEOUT$FETCH_MAX_KB in *[!0-9]*) usage "TLBLAB_FETCH_TIMEOUT and TLBLAB_FETCH_MAX_KB must be numbers" ;; esac
	if [ -z "$jobs" ]; then
		jobs=$(nproc 2>/dev/null || echo 2)
	fi
	case $jobs in '' | *[!0-9]*) usage "--jobs must be a number" ;; esac
	if [ "$jobs" -lt 1 ] || [ "$jobs" -gt 1024 ]; then usage "--jobs must be 1..1024"; fi
	tree_is_url=0
	if valid_url "$tree"; then
		tree_is_url=1
	else
		case $tree in *://*) usage "--tree: only https:// and git:// URLs are accepted" ;; esac
		t=$(abs_dir "$tree") || usage "--tree '$(oneline "$tree")' is not a directory"
		tree=$t
		git -C "$tree" rev-parse --git-dir >/dev/null 2>&1 || usage "--tree $tree is not a git repository"
	fi
	base_file=
	case $base in
	tinyconfig | defconfig) ;;
	*) base_file=$(abs_file "$base") || usage "--config-base must be tinyconfig, defconfig or a readable file" ;;
	esac
	if [ -n "$patch" ]; then
		p=$(abs_file "$patch") || usage "--patch '$(oneline "$patch")' is not a readable file"
		patch=$p
		psize=$(wc -c <"$patch")
		[ "$psize" -gt 0 ] || fail patch "the patch file is empty"
		[ "$psize" -le "$MAX_PATCH_BYTES" ] || fail patch "the patch is larger than $MAX_PATCH_BYTES bytes"
	fi
}
