#!/bin/sh
# make demo-track: nightly tracking on the embedded lab, to watch in the
# dashboard. Brings the lab up as make demo does, then makes the branch
# tlblab-demo of the embedded tree: eight commits on v6.1-debian, with a
# fixed author and dates, so their ids (and the kernels built of them) are
# the same on every run:
#   1-3    a line in Documentation/tlblab-demo.txt each
#   4      a comment in mm/mprotect.c: a kernel that does what 3's does
#   5      the demo's TLB change (kernels/patches/0001-...): flush_tlb_mm_range()
#          shoots down every online CPU
#   6-8    a line in Documentation/tlblab-demo.txt each
# The track demo of configs/local.yaml follows the branch. The script moves
# the branch to heads 1, 2, 3, then 6, 7, 8, as six nightly runs would meet
# them, and asks the track to run at each (`tlblab tracks run demo`). The
# detector finds the rise at 6, confirms it at 8 and raises an alert, and
# the alert bisects 4..6 by itself. The script waits for the bisection, and
# prints the culprit it names and how long each part took (and writes it
# to docs/measured/make-demo-track.md). A second run finds all of it stored
# and prints it again.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/scripts/lab-up.sh"
. "$TOP/scripts/measured.sh"
started=${TLBLAB_MAKE_START:-$(measured_now)} begun=$(measured_date) commit=$(measured_commit) lab=$(measured_lab)
BRANCH=tlblab-demo
TRACK=demo
PY=/usr/bin/python3
cd "$TOP"
T0=$(date +%s)
lab_up 5

echo "== 4/5 the branch $BRANCH: eight commits on v6.1-debian"
LINUX=$CACHE/linux
INDEX=$(mktemp "${TMPDIR:-/tmp}/tlblab-demo-index.XXXXXX")
NOTE=$(mktemp "${TMPDIR:-/tmp}/tlblab-demo-note.XXXXXX")
trap 'rm -f "$INDEX" "$NOTE" "$NOTE.c"' EXIT
. "$TOP/kernels/commits.sh"
c=$(git -C "$LINUX" rev-parse 'v6.1-debian^{commit}')
git -C "$LINUX" cat-file blob "$c:mm/mprotect.c" >"$NOTE.c"
printf '\n/* tlblab demo: a comment, and nothing else */\n' >>"$NOTE.c"
: >"$NOTE"
DATE=1769904000	# 2026-02-01, a day a commit
for k in 1 2 3 4 5 6 7 8; do
	DATE=$((DATE + 86400))
	rm -f "$INDEX"
	tree_read "$c"
	case $k in
	4)
		tree_put mm/mprotect.c "$NOTE.c"
		c=$(tree_commit "$c" "$DATE" "mm/mprotect: a comment, and nothing else") ;;
	5)
		tree_apply "$TOP/kernels/patches/0001-x86-mm-tlb-flush-every-online-cpu.patch"
		c=$(tree_commit "$c" "$DATE" "x86/mm/tlb: flush every online CPU in flush_tlb_mm_range()") ;;
	*)
		echo "note $k" >>"$NOTE"
		tree_put Documentation/tlblab-demo.txt "$NOTE"
		c=$(tree_commit "$c" "$DATE" "Documentation: tlblab demo note $k") ;;
	esac
	eval "c$k=\$c"
	printf '   %s  %.12s  %s\n' "$k" "$c" "$(git -C "$LINUX" log -1 --format=%s "$c")"
done

echo "== 5/5 the track $TRACK measures heads 1, 2, 3, 6, 7, 8, as six nightly runs would"
echo "   watch it: $TLBLAB_SERVER/tracks/$TRACK   bisections: $TLBLAB_SERVER/bisections"
echo "   (a point is a kernel build and one boot; a build of a new commit takes a few minutes)"
T1=$(date +%s)

# json PATH EXPR: EXPR (python, J the document) of GET /api/v1/PATH
json() {
	curl -fs -m 30 "$TLBLAB_SERVER/api/v1/$1" | $PY -c "import json,sys; J=json.load(sys.stdin); print($2)"
}

# point K: the branch at head K, the track run, its point's job waited for
point() {
	eval "_sha=\$c$1"
	git -C "$LINUX" update-ref "refs/heads/$BRANCH" "$_sha"
	"$BUILD/tlblab" tracks run "$TRACK" >/dev/null
	_t=$(date +%s)
	_job=
	# the tracker makes the point's job a moment after it is asked (at most 2 min)
	while [ -z "$_job" ]; do
		_job=$(json "tracks/$TRACK/points?limit=100" \
			"([p['job'] for p in J['points'] if p['commit'] == '$_sha'] + [''])[0]")
		[ -n "$_job" ] || [ $(($(date +%s) - _t)) -lt 120 ] ||
			{ echo "demo-track: the track made no point for head $1; see tlblab tracks $TRACK"; exit 1; }
		[ -n "$_job" ] || sleep 1
	done
	# polled every 2 s, for at most an hour
	while _state=$(json "jobs/$_job" "J['job']['state']") &&
		[ "$_state" = queued ] || [ "$_state" = running ]; do
		[ $(($(date +%s) - _t)) -lt 3600 ] || break
		sleep 2
	done
	[ "$_state" = done ] ||
		{ echo "demo-track: head $1's job $_job ended $_state; see tlblab status $_job"; exit 1; }
	printf '   head %s (%.12s): job %s done, %s s\n' "$1" "$_sha" "$_job" $(($(date +%s) - _t))
}
for k in 1 2 3 6 7 8; do
	point $k
done
T2=$(date +%s)

echo "   the detector and the bisection (it builds and boots the commits between 3 and 6)"
_t=$(date +%s)
b=
while :; do
	b=$(json bisections "([str(b['id']) for b in J['bisections'] if b['track'] == '$TRACK' and b['state'] != 'running'] + [''])[0]")
	[ -z "$b" ] || break
	[ $(($(date +%s) - _t)) -lt 3600 ] || { echo "demo-track: no bisection of track $TRACK ended in an hour; see tlblab bisections"; exit 1; }
	sleep 5
done
T3=$(date +%s)
"$BUILD/tlblab" alerts 2>/dev/null | head -n 8 || true
echo
"$BUILD/tlblab" bisect "$b" || true
first=$(json "bisections/$b" "J.get('first_bad') or ''")
echo
echo "Dashboard: track $TLBLAB_SERVER/tracks/$TRACK   bisection $TLBLAB_SERVER/bisections/$b"
echo "Took: lab up $((T1 - T0)) s, six points $((T2 - T1)) s, alert and bisection $((T3 - T2)) s; $((T3 - T0)) s in all"
if [ "$first" = "$c5" ]; then
	result="named $(echo "$first" | cut -c1-12), the TLB change"
else
	result="named ${first:-nothing}, not the TLB change"
fi
measured_head make-demo-track | measured_write "$TOP/docs/measured/make-demo-track.md" history \
	"| $commit | $begun | $lab | $(measured_took "$started") | $((T1 - T0)) s | $((T2 - T1)) s | $((T3 - T2)) s | $result |" ||
	echo "demo-track: could not write docs/measured/make-demo-track.md" >&2
if [ "$first" = "$c5" ]; then
	echo "demo-track: bisection $b names $(echo "$first" | cut -c1-12), the TLB change (head 5)"
else
	echo "demo-track: bisection $b named '${first:-nothing}', not the TLB change ($(echo "$c5" | cut -c1-12)); see tlblab bisect $b"
	exit 1
fi
