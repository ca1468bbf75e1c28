#!/bin/sh
# What ccache's depend mode (CCACHE_DEPEND=1, as kernels/build.sh sets it)
# saves a kernel build from cold. On a miss, the default mode runs the
# preprocessor once to hash the file and again inside the compile; depend
# mode compiles once and hashes the headers the compiler's own dependency
# file names (kbuild passes -Wp,-MMD). Measured on mm/ of the lab kernel's
# config (the x86_64 one t0040 or the daemon built, v6.1-debian), compiled
# from an empty cache CCACHE_RUNS times (default 3) each way, alternately:
# the median seconds each way and their ratio. The tree is Debian's, not a
# patch, so it is compiled here without build.sh's sandbox.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/guest.sh"

RUNS=${CCACHE_RUNS:-3}
say() { echo "b0014: $*"; }
command -v ccache >/dev/null 2>&1 || { say "no ccache (apt-get install ccache)"; exit 1; }
if ! kernel=$(lab_kernel CONFIG_PERF_EVENTS=y); then
	say "no lab kernel: $(tail -n 5 "$TMP/build.log")"
	exit 1
fi
config=$(dirname "$kernel")/config
[ -f "$config" ] || { say "no config beside $kernel"; exit 1; }
SRC=$TMP/src OBJ=$TMP/obj
if ! { git clone -q --shared --no-checkout "$CACHE/linux" "$SRC" &&
	git -C "$SRC" -c advice.detachedHead=false checkout -q v6.1-debian; } >"$TMP/clone.log" 2>&1; then
	say "cannot check out v6.1-debian of $CACHE/linux: $(tail -n 3 "$TMP/clone.log")"
	exit 1
fi
mkdir -p "$OBJ"
cp "$config" "$OBJ/.config"
J=$(nproc)
# settle the generated headers and command lines first (with a cache of its
# own), so each measured run compiles mm/ and nothing else
if ! env -u CCACHE_DEPEND CCACHE_DIR="$TMP/cc-settle" make -C "$SRC" O="$OBJ" -j"$J" CC="ccache gcc" olddefconfig mm/ >"$TMP/settle.log" 2>&1; then
	say "mm/ does not build: $(tail -n 5 "$TMP/settle.log")"
	exit 1
fi

# one MODE (default|depend): mm/ from an empty cache; prints
# "SECONDS FILES" (the files compiled), or nothing when make failed
one() {
	rm -rf "$OBJ/mm" "$TMP/cc"
	dep=
	[ "$1" = depend ] && dep=CCACHE_DEPEND=1
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	if ! env -u CCACHE_DEPEND CCACHE_DIR="$TMP/cc" CCACHE_BASEDIR="$SRC" $dep make -C "$SRC" O="$OBJ" -j"$J" CC="ccache gcc" mm/ \
		>"$TMP/$1.log" 2>&1; then
		say >&2 "$1: make failed: $(tail -n 3 "$TMP/$1.log")"
		return
	fi
	t1=$(date +%s.%N)
	echo "$t0 $t1 $(grep -c '^  CC ' "$TMP/$1.log")" | awk '{printf "%.2f %d\n", $2 - $1, $3}'
}

: >"$TMP/default.s"
: >"$TMP/depend.s"
b=0
while [ $b -lt "$RUNS" ]; do
	if [ $((b % 2)) = 0 ]; then order="default depend"; else order="depend default"; fi
	for m in $order; do
		one $m >>"$TMP/$m.s"
	done
	b=$((b + 1))
done
$PY - "$TMP" "$RUNS" "$J" <<'PYEOF'
import os, statistics, sys
d, runs, cpus = sys.argv[1], int(sys.argv[2]), sys.argv[3]
v = {}
for m in ("default", "depend"):
    v[m] = [l.split() for l in open(os.path.join(d, m + ".s")) if l.strip()]
if len(v["default"]) < runs or len(v["depend"]) < runs:
    print("b0014: only %d and %d of %d builds ran" % (len(v["default"]), len(v["depend"]), runs))
    sys.exit(1)
files = {int(r[1]) for m in v for r in v[m]}
if len(files) != 1 or 0 in files:
    print("b0014: the runs compiled different numbers of files (%s): not the same work" % sorted(files))
    sys.exit(1)
t = {m: statistics.median(float(r[0]) for r in v[m]) for m in v}
print("b0014: mm/ of the lab's x86_64 config (%d files) from an empty ccache, -j%s, medians of %d builds each: "
      "%.1f s in depend mode (as build.sh sets it), %.1f s in the default mode: %.2fx"
      % (files.pop(), cpus, runs, t["depend"], t["default"], t["depend"] / t["default"]))
PYEOF
