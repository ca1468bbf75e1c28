#!/bin/sh
# The nightly change-point detector as shipped (daemon/analysis/changepoint.c, issue
# 14), on synthetic series of 200 points with known steps, noise, outliers
# and drifts (tests/tools/changepoint-sim.c): recall (a step found within 6
# points of where it is), false positives (change points more than 6 points
# from any step), and the median distance of a found step from the truth.
# The goals (no change point on a flat noisy series; a 5% step at 2% noise
# found) are printed beside the figures, never asserted.
#
# Knobs: CP_RUNS (series per scenario, 200), CP_SEED (1).
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$TOP/$BUILD" ;; esac
SIM=$BUILD/tests/changepoint-sim
[ -x "$SIM" ] || { echo "b0011: no $SIM (make bench builds it)"; exit 1; }
start=$(date +%s)
"$SIM" --runs "${CP_RUNS:-200}" --seed "${CP_SEED:-1}" || exit 1
echo "goals: 0 false positives on the flat series; a 5% step at 2% noise found >= 95%"
echo "b0011: $(($(date +%s) - start)) s"
