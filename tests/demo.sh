#!/bin/sh
# make demo: the TLB suite of tlblab-agent on this machine's own kernel.
# Threads of one process against single-threaded processes (the contrast is
# remote TLB shootdowns), an mremap thread sweep, and a noisy neighbour.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$TOP/$BUILD" ;; esac
AGENT=$BUILD/tlblab-agent

echo "== tlblab demo on $(uname -r), $(nproc) CPUs"
echo
echo "== mprotect: 2 workers as threads (shared mm) vs as processes"
"$AGENT" run --workload mprotect --mode threads,processes --workers 2 --duration 3 --iterations 3 --table
echo
echo "== mremap: moves/s as the mm spans more CPUs"
"$AGENT" run --workload mremap --workers 1,2 --duration 2 --iterations 2 --table
echo
echo "== stencil with an mprotect neighbour on the other CPUs"
"$AGENT" run --workload stencil --grid S --workers 1 --duration 3 --iterations 2 --neighbour mprotect:2:threads --table
