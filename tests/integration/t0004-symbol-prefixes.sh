#!/bin/sh
# Every global symbol of the daemon, client, lib and agent objects carries
# its module's prefix (docs/design.md, Conventions), so that a helper shared
# between the files of a module cannot collide with libc, a library or
# another module, and its name says where it lives. The prefix comes from
# the object's name: daemon/config_yaml.o's globals start with config_,
# lib/catalog/spec.o's with spec_; the few exceptions are listed in allowed().
# A name used by one file only is static, and then not checked.
. "$(dirname "$0")/../lib.sh"

# allowed OBJECT SYMBOL: true when SYMBOL may be defined globally in OBJECT
# (a path under $BUILD/obj)
allowed() {
	_stem=${1##*/}
	_stem=${_stem%.o}
	case $2 in
	"${_stem%%_*}_"* | "${_stem}_"*) return 0 ;;
	# names the compiler or a sanitizer makes (reserved to them)
	__*) return 0 ;;
	esac
	case $1:$2 in
	daemon/tlblabd.o:main | client/tlblab.o:main | agents/agent.o:main) return 0 ;;
	# the store's statement helpers (store_int.h)
	daemon/store/store_*.o:db_*) return 0 ;;
	# struct bootrun_outcome's init and release (boot.h)
	daemon/stages/boot_stage.o:bootrun_outcome_*) return 0 ;;
	# the commands' shared helpers (client_cli.h), and the commands of
	# tlblab.c's table that have a file of their own, as git's cmd_NAME
	client/client_cli.o:cli_* | client/client_*.o:cmd_*) return 0 ;;
	# each monitor's and workload's table, and the workloads' shared helpers
	# (monitor.h, workload.h)
	agents/monitors/*.o:monitor_* | agents/workloads/*.o:workload_* | \
	agents/workloads/*.o:wl_*) return 0 ;;
	# lib/util.h, the base every binary shares, named before this rule: a
	# new function there is util_NAME, or one more name here
	lib/util.o:cmp_double | lib/util.o:hex_encode | lib/util.o:hex_valid | \
	lib/util.o:median_inplace | lib/util.o:mono_now | lib/util.o:wall_now | \
	lib/util.o:name_valid | lib/util.o:ref_valid | lib/util.o:url_valid | \
	lib/util.o:word_valid | lib/util.o:parse_double | lib/util.o:parse_int_range | \
	lib/util.o:parse_u64 | lib/util.o:remove_tree | lib/util.o:run_command_* | \
	lib/util.o:sleep_sec | lib/util.o:write_all | lib/util.o:xcalloc | \
	lib/util.o:xmalloc | lib/util.o:xrealloc | lib/util.o:xstrdup) return 0 ;;
	esac
	return 1
}

# unprefixed DIR [SRC]: prints "OBJECT SYMBOL" for each global symbol
# defined in the daemon, client, lib and agent objects under DIR that
# allowed() refuses, then "# checked N symbols of M objects"; false when nm
# fails. With SRC, an object whose source SRC/OBJECT.c is gone (a build
# directory older than a move) is not this tree's and is left out.
unprefixed() {
	_n=0 _m=0
	for _o in $(cd "$1" && find daemon client lib agents -name '*.o' 2>/dev/null | sort); do
		[ -z "${2:-}" ] || [ -f "$2/${_o%.o}.c" ] || continue
		_syms=$(nm -g --defined-only "$1/$_o" | awk 'NF >= 2 { print $NF }') || return 1
		_m=$((_m + 1))
		for _s in $_syms; do
			_n=$((_n + 1))
			allowed "$_o" "$_s" || echo "$_o $_s"
		done
	done
	echo "# checked $_n symbols of $_m objects"
}

# the check itself can fail: an object with a generic global name
mkdir -p "$TMP/obj/daemon"
cat >"$TMP/config_fake.c" <<'EOF'
static int node_count(void) { return 2; }
int scalar(void) { return node_count(); }
int config_fake(void) { return 1; }
EOF
if ! ${CC:-cc} -c -o "$TMP/obj/daemon/config_fake.o" "$TMP/config_fake.c" 2>"$TMP/cc.out"; then
	fail "a sample object compiles" "$(tail -n 3 "$TMP/cc.out")"
	exit 1
fi
got=$(unprefixed "$TMP/obj" | grep -v '^#')
if [ "$got" = "daemon/config_fake.o scalar" ]; then
	pass "a global 'scalar' in daemon/config_fake.o is found, config_fake and a static are not"
else
	fail "a global 'scalar' in daemon/config_fake.o is found, config_fake and a static are not" \
		"got: $got"
fi

if ! [ -d "$BUILD/obj/daemon" ] || ! [ -d "$BUILD/obj/agents" ]; then
	fail "objects under $BUILD/obj" "none: run make first"
	exit 1
fi
if ! unprefixed "$BUILD/obj" "$TOP" >"$TMP/bad.out" 2>"$TMP/nm.err"; then
	fail "nm -g --defined-only on $BUILD/obj" "$(tail -n 3 "$TMP/nm.err")"
	exit 1
fi
summary=$(grep '^#' "$TMP/bad.out")
echo "$summary"
bad=0
while read -r obj sym; do
	case $obj in '#'*) continue ;; esac
	bad=$((bad + 1))
	fail "$obj: global '$sym' carries its module's prefix" \
		"rename it with the prefix of $obj, make it static, or list it in allowed() here"
done <"$TMP/bad.out"
case $summary in
"# checked 0 symbols"*) fail "global symbols in $BUILD/obj" "$summary" ;;
*) [ "$bad" -eq 0 ] && pass "every global symbol carries its module's prefix (${summary#\# })" ;;
esac
exit 0
