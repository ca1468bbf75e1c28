#!/bin/sh
# A boot method, a transport or a metric class is one new file, with its
# registration line in it, and nothing else edited (daemon/config/backend.h,
# daemon/analysis/compare_class.h); a monitor is one new file
# (agents/monitors/monitor.h) and one line, its row, in the catalog the
# daemon shares (lib/catalog/monitor_catalog.c). The test adds a toy of
# each to a copy of the tree, builds the daemon and the agent there, and
# sees the loader take a machine of the toy method with its own section and
# of the toy transport, refuse bad ones at FILE:LINE:COL, the reference
# list the toy's settings, the agent refuse to run with the toy monitor's
# file but not its row, and with both report its counter, the daemon take
# a suite that names it, and the shipped comparison code give a row of the
# toy's metrics the toy's class and list the class with its legend; then
# it adds second files that register names already taken, and sees every
# load refused with the two registrations' places. The copy goes away with
# the test; the tree under test never knows the toys. docs/design.md's
# "How to add" is checked too: the files it names exist.
. "$(dirname "$0")/../lib.sh"

DAEMON=$BUILD/tlblabd

# docs/design.md's "How to add" names files: each must exist (a name with
# NAME or NNNN in it stands for a new one: its folder must)
sed -n '/^## How to add/,/^## /p' "$TOP/docs/design.md" | grep -o '`[a-z][a-z_/.-]*/[A-Za-z_.NM-]*`' |
	tr -d '`' | sort -u >"$TMP/named"
missing=
while read -r path; do
	case $path in
	*NAME* | *NNNN*) [ -d "$TOP/$(dirname "$path")" ] || missing="$missing $path" ;;
	*) [ -e "$TOP/$path" ] || missing="$missing $path" ;;
	esac
done <"$TMP/named"
if [ -s "$TMP/named" ] && [ -z "$missing" ]; then
	pass "the $(wc -l <"$TMP/named") files docs/design.md's How to add names exist"
else
	fail "the files docs/design.md's How to add names exist" "missing:${missing:- (none found)}"
fi
COPY=$TMP/tree
mkdir -p "$COPY"
# the working tree's files as they are (edits not yet committed too), and
# the build's objects, so that only the new file compiles
(cd "$TOP" && git ls-files -z -c -o --exclude-standard | xargs -0 cp -a --parents -t "$COPY") || {
	fail "the tree is copied" "cp failed"
	exit 0
}
mkdir -p "$COPY/build"
cp -a "$BUILD/obj" "$BUILD/gen" "$COPY/build/" 2>/dev/null
git -C "$COPY" init -q && git -C "$COPY" add -A && git -C "$COPY" -c user.name=t -c user.email=t@t commit -qm base

cat >"$COPY/daemon/stages/boot_toy.c" <<'EOF'
/* boot: toy, a method the registry test adds: it boots nothing and says so. */
#include "boot.h"

#include <stddef.h>

#include "backend.h"
#include "validate.h"

struct cfg_toy {
	char *greeting;
	int tries;
};

static const struct setting rows[] = {
	{ .name = "greeting", .type = SET_STR, .off = offsetof(struct cfg_toy, greeting),
	  .valid = config_valid_name, .must = MUST_NAME, .flags = SETTING_REQUIRED,
	  .need = " (what the toy says)", .what = "what the toy says" },
	{ .name = "tries", .type = SET_INT, .off = offsetof(struct cfg_toy, tries), .def = 3, .min = 1,
	  .max = 9, .what = "how often it says it" },
};

static enum boot_outcome_kind toy_start(const struct cfg_machine *m, const struct boot_ask *ask,
					const char *kernel, const char *boot_id, double deadline,
					volatile sig_atomic_t *cancel, struct boot_session **ret,
					struct cfg_machine *guest, struct strbuf *console, struct strbuf *message)
{
	const struct cfg_toy *t = m->boot_conf;

	(void)ask, (void)kernel, (void)boot_id, (void)deadline, (void)cancel, (void)guest, (void)console;
	*ret = NULL;
	strbuf_addf(message, "boot: the toy says %s %d times", t->greeting, t->tries);
	return BOOT_INFRA;
}

static void toy_console(struct boot_session *s, struct strbuf *out)
{
	(void)s, (void)out;
}

static void toy_stop(struct boot_session *s)
{
	(void)s;
}

static const struct boot_ops ops = { BOOT_OPS(toy, "toy") };

static const struct backend boot_toy_backend = {
	.kind = BACKEND_BOOT, .name = "toy", .what = "a toy", .settings = rows, .nsettings = 2,
	.conf_size = sizeof(struct cfg_toy), .flags = BACKEND_SECTION_REQUIRED, .section_hint = "greeting",
	.ops = &ops,
};
BACKEND_REGISTER(boot_toy_backend)
EOF
cat >"$COPY/daemon/host/transport_toy.c" <<'EOF'
/* transport: toy, a transport the registry test adds: it reaches nothing. */
#include "transport.h"

#include <errno.h>

#include "backend.h"
#include "settings.h"

static int toy_open(struct transport *t, struct strbuf *err)
{
	return strbuf_seterr(err, "toy: %s is out of reach", t->ep->host), -EHOSTUNREACH;
}

/* what an open transport does: never reached, as open fails */
static int toy_exec(struct transport *t, const struct exec_req *req, struct exec_result *res, struct strbuf *err)
{
	return (void)req, (void)res, toy_open(t, err);
}

static int toy_upload(struct transport *t, const char *from, const char *to, int mode, struct strbuf *err)
{
	return (void)from, (void)to, (void)mode, toy_open(t, err);
}

static int toy_download(struct transport *t, const char *from, const char *to, size_t max, struct strbuf *err)
{
	return (void)from, (void)to, (void)max, toy_open(t, err);
}

static void toy_close(struct transport *t)
{
	(void)t;
}

static const struct transport_ops ops = { TRANSPORT_OPS(toy, "toy") };

static const char *const keys[] = { "host", NULL };

static void check(struct cfg_section *sec, const struct cfg_endpoint *ep)
{
	if (!ep->host)
		settings_missing(sec, "host", " (required with transport toy)");
}

static const struct backend transport_toy_backend = {
	.kind = BACKEND_TRANSPORT, .name = "toy", .what = "a toy", .endpoint_keys = keys,
	.check_endpoint = check, .ops = &ops,
};
BACKEND_REGISTER(transport_toy_backend)
EOF
cat >"$COPY/agents/monitors/toy.c" <<'EOF'
/* monitor: toy, a monitor the registry test adds: it counts its reads. */
#include "monitor.h"

static uint64_t reads;

static int toy_open(struct monitor *m, struct counter_set *cs, struct strbuf *err)
{
	(void)m, (void)err;
	monitor_counter_set_add(cs, "toy.reads", "reads", DIR_NEUTRAL, 0);
	return 0;
}

static int toy_read(struct monitor *m, uint64_t *vals, struct strbuf *err)
{
	(void)err;
	vals[m->first] = ++reads;
	return 0;
}

static const struct monitor_ops monitor_toy = { .name = "toy", .open = toy_open, .read = toy_read };
MONITOR_REGISTER(monitor_toy)
EOF
cat >"$COPY/daemon/analysis/class_toy.c" <<'EOF'
/* class: toy, a class the registry test adds: toys per operation. */
#include "compare_class.h"

static const struct compare_claim claims[] = {
	{ COMPARE_CLAIM_NAME, NULL, ".toy_per_op" },
};

static const struct compare_class class_toy = {
	.name = "toy",
	.legend = "toys per operation, as the registry test counts them",
	.order = 35,
	.flags = COMPARE_CLASS_TESTED,
	.claims = claims,
	.nclaims = 1,
	.margins = {
		[COMPARE_MIN_CHANGE] = { "min_change_toy", 0.03, NULL },
		[COMPARE_SAME_BAND] = { "same_band_toy", 0.03, NULL },
	},
};
COMPARE_CLASS_REGISTER(class_toy)
EOF
if make -C "$COPY" --no-print-directory BUILD=build build/tlblabd >"$TMP/make.out" 2>&1; then
	pass "the daemon builds with the toy method's, transport's and class's files added"
else
	fail "the daemon builds with the toy method's, transport's and class's files added" \
		"$(tail -n 5 "$TMP/make.out" | tr '\n' ' ')"
	exit 0
fi

# the toy monitor's file without its row: the agent built so refuses to
# run, naming the file and the catalog
if make -C "$COPY" --no-print-directory BUILD=build build/tlblab-agent >"$TMP/make-agent0.out" 2>&1; then
	check_fails "an agent with a monitor's file but not its catalog row runs nothing" 1 \
		"agents/monitors/toy.c:[0-9]*: monitor 'toy' has no row in the catalog \\(lib/catalog/monitor_catalog.c\\)" \
		"$COPY/build/tlblab-agent" run --workload mprotect --duration 1 --iterations 1
else
	fail "the agent builds with the toy monitor's file added" "$(tail -n 5 "$TMP/make-agent0.out" | tr '\n' ' ')"
fi
# its row: one line, anywhere in the table (a monitor's bit comes from its name)
toy_row='	MONITOR("toy", 0, "counts its reads (a toy of t0006)"),'
awk -v row="$toy_row" '{ print } /^const struct monitor_def monitor_defs\[\] = \{$/ { print row }' \
	"$TOP/lib/catalog/monitor_catalog.c" >"$COPY/lib/catalog/monitor_catalog.c"
check "nothing but the four new files and the toy's catalog row changed in the tree" \
	sh -c "[ \"\$(git -C '$COPY' status --porcelain | grep -v '^?? build/' | tr '\n' ' ')\" = ' M lib/catalog/monitor_catalog.c ?? agents/monitors/toy.c ?? daemon/analysis/class_toy.c ?? daemon/host/transport_toy.c ?? daemon/stages/boot_toy.c ' ]"
git -C "$COPY" diff -U0 >"$TMP/row.diff"
printf '%s\n' "+$toy_row" >"$TMP/row.want"
if [ "$(git -C "$COPY" diff --numstat)" = "$(printf '1\t0\tlib/catalog/monitor_catalog.c')" ] &&
	grep '^[-+][^-+]' "$TMP/row.diff" | cmp -s - "$TMP/row.want"; then
	pass "the toy monitor's row is the one line added to an existing file"
else
	fail "the toy monitor's row is the one line added to an existing file" "$(tr '\n' '|' <"$TMP/row.diff")"
fi

cat >"$TMP/toy.yaml" <<'EOF'
lab: {data_dir: /tmp/d}
machines:
  - name: t1
    transport: local
    boot: toy
    toy: {greeting: hello, tries: 2}
EOF
cat >"$TMP/toyt.yaml" <<'EOF'
lab: {data_dir: /tmp/d}
machines:
  - {name: t1, transport: toy, host: 127.0.0.9}
  - {name: t2, transport: toy, port: 22}
EOF
"$COPY/build/tlblabd" -n -c "$TMP/toyt.yaml" >"$TMP/toyt.out" 2>&1
want="$TMP/toyt.yaml:4:5: missing key 'host' in machine 't2' (required with transport toy)
$TMP/toyt.yaml:4:32: port: only used with transport ssh (in machine 't2')"
if [ "$(grep -F "$TMP/toyt.yaml:" "$TMP/toyt.out")" = "$want" ]; then
	pass "a machine reached by the toy transport: its keys checked, another transport's refused"
else
	fail "a machine reached by the toy transport: its keys checked, another transport's refused" \
		"$(tr '\n' '|' <"$TMP/toyt.out")"
fi
check "a machine of the toy method loads, its section read by the toy's rows" \
	sh -c "'$COPY/build/tlblabd' -n -c '$TMP/toy.yaml' | grep -qx 'configuration OK'"

cat >"$TMP/bad.yaml" <<'EOF'
lab: {data_dir: /tmp/d}
machines:
  - name: t1
    transport: local
    boot: toy
    toy: {tries: 12, colour: red}
  - {name: t2, transport: local, boot: toy}
  - {name: t3, transport: local, boot: tyo}
EOF
"$COPY/build/tlblabd" -n -c "$TMP/bad.yaml" >"$TMP/bad.out" 2>&1
st=$?
want="$TMP/bad.yaml:6:10: missing key 'greeting' in the toy section of machine 't1' (what the toy says)
$TMP/bad.yaml:6:18: tries: must be an integer from 1 to 9
$TMP/bad.yaml:6:22: unknown key 'colour' in the toy section of machine 't1'
$TMP/bad.yaml:7:5: missing key 'toy' in machine 't2' (required with boot: toy)
$TMP/bad.yaml:8:40: boot: must be kexec, none, qemu, reboot or toy"
if [ "$st" != 0 ] && grep -F "$TMP/bad.yaml:" "$TMP/bad.out" | sed 's/ (got .*//' >"$TMP/got" &&
	[ "$(cat "$TMP/got")" = "$want" ]; then
	pass "the toy's section is checked by its rows, each error at FILE:LINE:COL"
else
	fail "the toy's section is checked by its rows, each error at FILE:LINE:COL" \
		"exit $st: $(tr '\n' '|' <"$TMP/bad.out")"
fi
check "tlblabd -S lists the toy's settings with their bounds" \
	sh -c "'$COPY/build/tlblabd' -S | grep -q '^| \`machines\[\]\.toy\.tries\` | integer | 3 | 1 to 9 |'"
check "the tree under test does not know the toy" \
	sh -c "! '$DAEMON' -S | grep -q 'toy' && ! '$DAEMON' -n -c '$TMP/toy.yaml' >/dev/null 2>&1"

# the toy monitor: the daemon built in the copy takes a suite that names
# it, from the row alone (the tree under test refuses it); the agent built
# there takes its name and reports its counter beside the others (its
# samples reach the store with no daemon change: DESIGN.md)
cat >"$TMP/toym.yaml" <<'EOF'
lab: {data_dir: /tmp/d}
machines:
  - {name: t1, transport: local, boot: none}
suites:
  - name: s
    workloads:
      - {workload: mprotect, monitors: [toy, vmstat]}
EOF
if make -C "$COPY" --no-print-directory BUILD=build build/tlblabd >"$TMP/make3.out" 2>&1; then
	check "the daemon with the toy monitor's row takes a suite that names it" \
		sh -c "'$COPY/build/tlblabd' -n -c '$TMP/toym.yaml' | grep -qx 'configuration OK'"
	check_fails "the daemon under test refuses a suite that names the toy monitor" 1 \
		"monitors\\[0\\]: unknown monitor \\(one of interrupts, procstat, profile, tracepoints, vmstat\\)" \
		"$DAEMON" -n -c "$TMP/toym.yaml"
else
	fail "the daemon builds with the toy monitor's row added" "$(tail -n 5 "$TMP/make3.out" | tr '\n' ' ')"
fi
# the toy class: the comparison code of the copy (built as t0061 builds
# it) gives x.toy_per_op the toy's class, tests it in a family of its own,
# and lists the class with its legend; x.per_op stays work
top_under_test=$TOP
TOP=$COPY
build_tool "the compare driver of the copy" "$TMP/compare-toy" tests/tools/compare-cli.c \
	$(cd "$COPY" && echo daemon/analysis/compare*.c daemon/analysis/class_*.c) daemon/analysis/verdict.c \
	daemon/analysis/stats.c daemon/analysis/stats_bm.c lib/jsonget.c lib/strbuf.c lib/util.c \
	-iquote lib/catalog lib/catalog/workload_catalog.c -ljansson -lm
built=$?
TOP=$top_under_test
if [ "$built" = 0 ]; then
	$PY - "$TMP/toy-in.json" <<'PYEOF'
import json, sys
d = {"runs": [], "metrics": [], "profiles": [], "provenance": {"kernel": "6.1.0"}}
for side, scale in (("base", 1.0), ("patched", 1.2)):
    for b in range(5):
        rid = len(d["runs"]) + 1
        d["runs"].append({"id": rid, "stage": rid, "machine": "m1", "side": side, "spec": 0, "case": 0,
                          "iteration": 1, "warmup": False, "workload": "x", "params": {},
                          "build_id": side, "boot_id": "%s-%d" % (side, b)})
        for m, v in (("x.toy_per_op", 10 * scale + b * 0.01), ("x.per_op", 5 * scale + b * 0.01)):
            d["metrics"].append({"run": rid, "name": m, "value": v, "unit": "toys/op", "direction": "lower"})
json.dump({"base": d, "patched": d, "base_side": "base", "patched_side": "patched"}, open(sys.argv[1], "w"))
PYEOF
	"$TMP/compare-toy" <"$TMP/toy-in.json" >"$TMP/toy-cmp.json" 2>"$TMP/toy-cmp.err" ||
		fail "the copy's comparison runs" "$(tail -n 3 "$TMP/toy-cmp.err")"
	check "a row of x.toy_per_op gets the toy's class and is tested in its own family; x.per_op stays work" \
		pyjson "$TMP/toy-cmp.json" '({r["metric"]: (r["class"], r.get("family")) for r in L[0]["rows"]} ==
		 {"x.toy_per_op": ("toy", "toy"), "x.per_op": ("work", "work")})'
	check "the comparison's rules list the toy class with its legend and margins, by_class has it" \
		pyjson "$TMP/toy-cmp.json" '([c for c in L[0]["rules"]["classes"] if c["name"] == "toy"] ==
		 [{"name": "toy", "legend": "toys per operation, as the registry test counts them", "tested": True,
		   "makes_verdict": False, "margins": {"min_change": 0.03, "min_change_counter": 0.03,
		   "same_band": 0.03, "keys": {"min_change": "min_change_toy", "min_change_counter": "min_change_toy",
		   "same_band": "same_band_toy"}}}] and "toy" in L[0]["by_class"] and
		 L[0]["rules"]["min_change_toy"] == 0.03)'
fi
cat >"$TMP/toyc.yaml" <<'EOF'
lab: {data_dir: /tmp/d}
suites:
  - name: s
    workloads: [{workload: mprotect}]
    compare: {min_change_toy: 4%, min_change: 3%}
EOF
check "a suite sets the toy class's margin by the key its file names" \
	sh -c "'$COPY/build/tlblabd' -n -c '$TMP/toyc.yaml' | grep -qx 'configuration OK'"
check_fails "the daemon under test knows no such key" 1 \
	"toyc\.yaml:5:15: unknown key 'min_change_toy' in the compare section of suite 's'" \
	"$DAEMON" -n -c "$TMP/toyc.yaml"

# the toy monitor: the agent built in the copy takes its name and reports
# its counter beside the others (its samples reach the store with no
# daemon change: DESIGN.md)
if make -C "$COPY" --no-print-directory BUILD=build build/tlblab-agent >"$TMP/make-agent.out" 2>&1; then
	"$COPY/build/tlblab-agent" run --workload mprotect --workers 1 --duration 1 --iterations 1 --warmup 0 \
		--interval 0.2 --monitors toy,vmstat >"$TMP/toy-agent.out" 2>"$TMP/toy-agent.err"
	check "the agent with the toy monitor's file added reports toy.reads" grep -q '"toy.reads"' "$TMP/toy-agent.out"
	check_fails "the agent under test does not know the toy monitor" 2 "monitors\[0\]: unknown monitor" \
		"$AGENT" run --workload mprotect --monitors toy
else
	fail "the agent builds with the toy monitor's file added" "$(tail -n 5 "$TMP/make-agent.out" | tr '\n' ' ')"
fi

# a second registration of a name is refused at every load, with both
# places: a boot method's and a class's
sed -e 's/boot_toy_backend/boot_again_backend/g' -e 's/\.name = "toy"/.name = "qemu"/' \
	"$COPY/daemon/stages/boot_toy.c" >"$COPY/daemon/stages/boot_again.c"
sed -e 's/class_toy/class_again/g' -e 's/\.name = "toy"/.name = "work"/' -e 's/_toy"/_again"/g' \
	-e 's/toy_per_op/again_per_op/' "$COPY/daemon/analysis/class_toy.c" >"$COPY/daemon/analysis/class_again.c"
line=$(grep -n '^BACKEND_REGISTER' "$COPY/daemon/stages/boot_again.c" | cut -d: -f1)
first=$(grep -n '^BACKEND_REGISTER' "$TOP/daemon/stages/qemu_settings.c" | cut -d: -f1)
# (whichever links first is "first": the message names both places)
again="daemon/stages/boot_again.c:$line"
orig="daemon/stages/qemu_settings.c:$first"
if make -C "$COPY" --no-print-directory BUILD=build build/tlblabd >"$TMP/make2.out" 2>&1; then
	check_fails "a name registered twice fails every load, naming both registrations" 1 \
		"$again: boot method 'qemu' registered twice \\(first at $orig\\)|$orig: boot method 'qemu' registered twice \\(first at $again\\)" \
		"$COPY/build/tlblabd" -n -c "$TMP/toy.yaml"
	cline=$(grep -n '^COMPARE_CLASS_REGISTER' "$COPY/daemon/analysis/class_again.c" | cut -d: -f1)
	cfirst=$(grep -n '^COMPARE_CLASS_REGISTER' "$TOP/daemon/analysis/class_work.c" | cut -d: -f1)
	cagain="daemon/analysis/class_again.c:$cline"
	corig="daemon/analysis/class_work.c:$cfirst"
	check_fails "a class registered twice fails every load, naming both registrations" 1 \
		"$cagain: class 'work' registered twice \\(first at $corig\\)|$corig: class 'work' registered twice \\(first at $cagain\\)" \
		"$COPY/build/tlblabd" -n -c "$TMP/toy.yaml"
else
	fail "the daemon builds with a second registration of qemu" "$(tail -n 5 "$TMP/make2.out" | tr '\n' ' ')"
fi

# a catalog row given twice: every spec is refused at load, naming both
# rows (the catalog is a table, not a registration: its rows carry their
# lines)
rm -f "$COPY/daemon/stages/boot_again.c" "$COPY/daemon/analysis/class_again.c"
vline=$(grep -n '^	MONITOR("vmstat"' "$COPY/lib/catalog/monitor_catalog.c" | cut -d: -f1)
awk '{ print } /^	MONITOR\("vmstat"/ { print }' "$COPY/lib/catalog/monitor_catalog.c" >"$TMP/cat.c" &&
	cp "$TMP/cat.c" "$COPY/lib/catalog/monitor_catalog.c"
cat >"$TMP/suite.yaml" <<'EOF'
lab: {data_dir: /tmp/d}
machines:
  - {name: t1, transport: local}
suites:
  - name: s
    workloads:
      - {workload: mprotect, duration: 1}
EOF
if make -C "$COPY" --no-print-directory BUILD=build build/tlblabd >"$TMP/make3.out" 2>&1; then
	check_fails "a monitor listed twice in the catalog fails the load, naming both rows" 1 \
		"lib/catalog/monitor_catalog.c:$((vline + 1)): monitor 'vmstat' listed twice \\(first at lib/catalog/monitor_catalog.c:$vline\\)" \
		"$COPY/build/tlblabd" -n -c "$TMP/suite.yaml"
else
	fail "the daemon builds with a monitor listed twice" "$(tail -n 5 "$TMP/make3.out" | tr '\n' ' ')"
fi
rm -rf "$COPY"
check "the toy is gone with its copy of the tree" test ! -e "$COPY"
