#!/bin/sh
# The verdict rule as shipped, measured by simulation (issue 11): A/B jobs
# shaped like the embedded lab's suites (configs/local.yaml, read with the
# daemon's config loader; specs expanded into cases by the agent's parser;
# every case with its headline and the counter rows its monitors give),
# with correlated rows, at per-boot CV 1, 2, 5, 10 and 20%, go through the
# real compare_sides() and the scheduler's second look
# (verdict_wants_more_boots(): 5 boots per side, 9 when it says so). No
# verdict logic lives in the tool (tests/tools/verdict-sim.c); it counts
# the verdicts compare gives.
#
# Printed: per-row and per-job A/A false call rates, the share of A/A jobs
# called same, the same_band that 80% same would take at 2% and 5% CV, and
# the power to call a 2, 3, 5 and 10% headline regression. Every rate has
# its Monte-Carlo standard error beside it; the goals are printed next to
# the figures, never asserted. Timings are medians.
#
# Knobs: SIM_JOBS (A/A jobs per CV, 250), SIM_BAND_JOBS (60),
# SIM_POWER_JOBS (jobs per CV and shift, 60), SIM_CV (1,2,5,10,20),
# SIM_POWER_CV (2,5), SIM_SHIFT (2,3,5,10), SIM_BANDS (3,4,5,6,8,10,12,15,20),
# SIM_SEED (1), SIM_PARALLEL (the CPUs), SIM_QUICK_JOBS (A/A jobs per CV for
# the quick suite, 80; 0 skips it), SIM_ARGS (more verdict-sim options,
# e.g. "--fixed 9" for one look at 9 boots). About 350 CPU seconds at
# these sizes (2 workers; a job costs ~60 ms of compare per look); the
# Monte-Carlo errors printed say when to ask for more.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$TOP/$BUILD" ;; esac
SIM=$BUILD/tests/verdict-sim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
say() { echo "b0008: $*"; }

if ! make --no-print-directory -C "$TOP" BUILD="${BUILD#"$TOP"/}" "${SIM#"$TOP"/}" >"$tmp/make.log" 2>&1; then
	say "could not build verdict-sim: $(tail -n 5 "$tmp/make.log")"
	exit 1
fi
# the embedded lab's suites; an inline token instead of its token file,
# which only a prepared lab has
sed 's|^  token_file:.*|  tokens: [bench-token-0123456789]|' "$TOP/configs/local.yaml" >"$tmp/local.yaml"

JOBS=${SIM_JOBS:-250}
PAR=${SIM_PARALLEL:-$(nproc 2>/dev/null || echo 2)}
set -- --seed "${SIM_SEED:-1}" --parallel "$PAR"
start=$(date +%s)
cd "$tmp" || exit 1
# what one job costs, to size the rest: 2000 bootstrap resamples per row
# shellcheck disable=SC2086
"$SIM" "$@" ${SIM_ARGS:-} --time 8 --cv 2 local.yaml || exit 1
echo
# shellcheck disable=SC2086
"$SIM" "$@" ${SIM_ARGS:-} --jobs "$JOBS" --cv "${SIM_CV:-1,2,5,10,20}" \
	--band-jobs "${SIM_BAND_JOBS:-60}" --band-cv 2,5 --bands "${SIM_BANDS:-3,4,5,6,8,10,12,15,20}" \
	--power-jobs "${SIM_POWER_JOBS:-60}" --power-cv "${SIM_POWER_CV:-2,5}" --shift "${SIM_SHIFT:-2,3,5,10}" \
	--suite tlb local.yaml || exit 1
if [ "${SIM_QUICK_JOBS:-80}" -gt 0 ]; then
	echo
	# shellcheck disable=SC2086
	"$SIM" "$@" ${SIM_ARGS:-} --jobs "${SIM_QUICK_JOBS:-80}" --cv 2,5 --band-jobs 0 --power-jobs 0 \
		--suite quick local.yaml || exit 1
fi
echo
say "$(($(date +%s) - start)) s in all"
