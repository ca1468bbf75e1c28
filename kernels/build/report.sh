# shellcheck shell=sh
# build.sh's part "report": the result protocol. Progress lines (say), the
# build log (run, capture), and every TLBLAB fact line the daemon reads:
# a failure's (fail, and on_exit for a stop without a verdict), a
# resolve's (emit_resolved) and a build's (emit_ok). Sourced by build.sh
# (parts.list); report_start runs right after env_setup.

# report_start: the run's state, and the traps that turn any stop without a
# verdict into one.
report_start() {
	start=$(date +%s)
	finished=0
	step="checking arguments"
	LOG=
	tmpout=
	private_obj=
	trap on_exit EXIT
	trap 'step="$step (interrupted)"; exit 1' INT TERM HUP
}

# One safe line: no control characters, bounded length.
oneline() {
	printf '%s' "$1" | tr '\000-\037\177' ' ' | cut -c1-400
}

# say MESSAGE: a progress line for the log and stdout.
say() {
	if [ -n "$LOG" ]; then
		printf 'build.sh: %s\n' "$1" | tee -a "$LOG"
	else
		printf 'build.sh: %s\n' "$1"
	fi
}

# fail CLASS MESSAGE [EXCERPT_FILE]: print the failure facts and exit.
fail() {
	case $1 in
	patch) code=10 ;;
	build) code=11 ;;
	config) code=12 ;;
	ref) code=13 ;;
	*) code=1 ;;
	esac
	finished=1
	printf 'TLBLAB status failed\n'
	printf 'TLBLAB class %s\n' "$1"
	printf 'TLBLAB message %s\n' "$(oneline "$2")"
	if [ $# -ge 3 ] && [ -s "$3" ]; then
		head -n 30 "$3" | while IFS= read -r _l || [ -n "$_l" ]; do
			printf 'TLBLAB excerpt %s\n' "$(oneline "$_l")"
		done
	fi
	exit "$code"
}

# Anything that stops the script without a verdict (set -e, a signal) is the
# lab's trouble, not the patch's: class infra, with the step it was in.
# shellcheck disable=SC2317 # called by the EXIT trap
on_exit() {
	rc=$?
	set +e	# a failing clean-up command must not replace the exit status
	if [ -n "$tmpout" ]; then rm -rf "$tmpout"; fi
	if [ -n "${private_obj:-}" ]; then rm -rf "$private_obj"; fi
	if [ "$finished" = 0 ]; then
		finished=1
		ex=
		if [ -n "$LOG" ] && [ -f "$LOG" ] && [ -n "${WORK:-}" ] && [ -d "$WORK" ]; then
			ex=$WORK/.excerpt
			tail -n 10 "$LOG" >"$ex" 2>/dev/null || ex=
		fi
		( fail infra "build.sh stopped while $step (exit $rc)" "$ex" )
		exit 1
	fi
	exit "$rc"
}

# run CMD...: CMD's output to the log and stdout; returns CMD's status
# (a pipeline's status would be tee's, hence the status file).
run() {
	_st=$WORK/.status
	{
		_rc=0
		"$@" </dev/null 2>&1 || _rc=$?
		echo "$_rc" >"$_st"
	} | tee -a "$LOG"
	return "$(cat "$_st")"
}

# capture FILE CMD...: like run, and CMD's output also in FILE.
capture() {
	_f=$1
	shift
	_st=$WORK/.status
	{
		_rc=0
		"$@" </dev/null 2>&1 || _rc=$?
		echo "$_rc" >"$_st"
	} | tee "$_f" | tee -a "$LOG"
	return "$(cat "$_st")"
}

# emit_resolved: a resolve's facts (checkout.sh's ref_facts: commit, the
# log line facts, good) and exit.
emit_resolved() {
	SOH=$(printf '\001')
	rest=${facts#*"$SOH"}
	finished=1
	printf 'TLBLAB status ok\n'
	printf 'TLBLAB commit %s\n' "$commit"
	printf 'TLBLAB commit_time %s\n' "${facts%%"$SOH"*}"
	printf 'TLBLAB author %s\n' "$(oneline "${rest%%"$SOH"*}")"
	printf 'TLBLAB subject %s\n' "$(oneline "${rest#*"$SOH"}")"
	if [ -n "$good" ]; then
		printf 'TLBLAB since %s\n' "$good"
		g rev-list --reverse --topo-order --max-count=100000 --format='%ct %s' "$good..$commit" |
			awk '/^commit [0-9a-f]+$/ { sha = $2; next } { gsub(/[\001-\037\177]/, " "); printf "TLBLAB between %s %s\n", sha, substr($0, 1, 400) }'
	fi
	exit 0
}

# emit_ok CACHED WARNINGS KERNELRELEASE: the success facts, and exit.
emit_ok() {
	finished=1
	ccache_note_compiler
	printf 'TLBLAB status ok\n'
	printf 'TLBLAB build_id %s\n' "$build_id"
	printf 'TLBLAB commit %s\n' "$commit"
	printf 'TLBLAB config_hash %s\n' "$config_hash"
	printf 'TLBLAB compiler %s\n' "$(oneline "$compiler")"
	printf 'TLBLAB cached %s\n' "$1"
	printf 'TLBLAB dir %s\n' "$dest"
	printf 'TLBLAB duration %s\n' "$(($(date +%s) - start))"
	printf 'TLBLAB warnings %s\n' "$2"
	printf 'TLBLAB kernelrelease %s\n' "$(oneline "$3")"
	printf 'TLBLAB build_host %s\n' "$build_host"
	printf 'TLBLAB arch %s\n' "$arch"
	printf 'TLBLAB image %s\n' "$image"
	printf 'TLBLAB image_sha256 %s\n' "$image_sha256"
	exit 0
}
