#!/bin/sh
# The ssh transport against real OpenSSH servers on 127.0.0.2 and
# 127.0.0.3, through tests/tools/transport-cli: exec with exit status and
# separate stdout and stderr, arguments that reach the remote side
# literally, stdin, SFTP round trip, strict host keys (unknown, changed,
# pinned), auth failure, refused connection, timeouts, and a server killed
# in the middle of a command.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/sshd.sh"

# ms: monotonic-enough milliseconds for elapsed-time checks
ms() { echo $(($(date +%s%N) / 1000000)); }

# built by make with the daemon's objects (the transports register
# themselves with the configuration's registry: backend.h)
CLI=$BUILD/tests/transport-cli
if [ ! -x "$CLI" ]; then
	fail "build transport-cli" "$CLI is missing (make $CLI)"
	exit 0
fi

sshd_keys "$TMP/keys" || { fail "ssh-keygen" "cannot make keys"; exit 1; }
PA=$(sshd_port 0)
if ! sshd_start a 127.0.0.2 "$PA"; then
	fail "sshd on 127.0.0.2:$PA" "did not start"
	exit 1
fi
KH_A=$SSHD_KNOWN_HOSTS
FP_A=$SSHD_FINGERPRINT
ID=$SSHD_IDENTITY

# cli ARGS...: transport-cli against server a, known_hosts checked
cli() {
	"$CLI" --host 127.0.0.2 --port "$PA" --user root --identity "$ID" \
		--known-hosts "$KH_A" --connect-timeout 5 "$@"
}

# -- exec: status, stdout and stderr apart --
cli exec --stderr "$TMP/e1" -- sh -c 'echo out; echo err >&2; exit 3' >"$TMP/o1" 2>"$TMP/s1"
if [ "$(cat "$TMP/o1")" = out ] && [ "$(cat "$TMP/e1")" = err ] &&
   grep -q 'status=3 signal=0' "$TMP/s1"; then
	pass "exec: exit status 3, stdout and stderr kept apart"
else
	fail "exec: exit status 3, stdout and stderr kept apart" \
		"out=$(cat "$TMP/o1") err=$(cat "$TMP/e1") $(tail -n 1 "$TMP/s1")"
fi

# -- arguments are quoted, never interpreted by the remote shell --
ARG="a;b \$(id) 'q' \"dq\" \`uname\` * | > /tmp/x && \\ end"
cli exec -- printf %s "$ARG" >"$TMP/o2" 2>"$TMP/s2"
if [ "$(cat "$TMP/o2")" = "$ARG" ] && grep -q 'status=0' "$TMP/s2"; then
	pass "exec: shell metacharacters arrive literally"
else
	fail "exec: shell metacharacters arrive literally" "got: $(cat "$TMP/o2")"
fi
cli exec -- sh -c 'printf "[%s]" "$@"' sh '' ' ' "it's" >"$TMP/o2b" 2>"$TMP/s2b"
if [ "$(cat "$TMP/o2b")" = "[][ ][it's]" ]; then
	pass "exec: empty, blank and quote-bearing arguments kept as given"
else
	fail "exec: empty, blank and quote-bearing arguments kept as given" "got: $(cat "$TMP/o2b")"
fi

# -- stdin, binary, larger than one channel window --
head -c 3145728 /dev/urandom >"$TMP/in.bin"
cli exec --stdin "$TMP/in.bin" -- cat >"$TMP/o3" 2>"$TMP/s3"
if cmp -s "$TMP/in.bin" "$TMP/o3" && grep -q 'status=0' "$TMP/s3"; then
	pass "exec: 3 MiB of stdin comes back through cat unchanged"
else
	fail "exec: 3 MiB of stdin comes back through cat unchanged" \
		"$(wc -c <"$TMP/o3") bytes; $(tail -n 1 "$TMP/s3")"
fi

# -- stdout as lines --
cli exec --lines -- printf 'one\ntwo\n\nlast' >"$TMP/o4" 2>"$TMP/s4"
if [ "$(cat "$TMP/o4")" = "$(printf 'line: one\nline: two\nline: \nline: last')" ]; then
	pass "exec: on_line gets each stdout line, and the unterminated last one"
else
	fail "exec: on_line gets each stdout line, and the unterminated last one" "$(cat "$TMP/o4")"
fi

# -- killed by a signal --
cli exec -- sh -c 'kill -9 $$' >/dev/null 2>"$TMP/s5"
if grep -q 'status=-1 signal=9' "$TMP/s5"; then
	pass "exec: a command killed by SIGKILL reports status -1, signal 9"
else
	fail "exec: a command killed by SIGKILL reports status -1, signal 9" "$(tail -n 1 "$TMP/s5")"
fi

# -- SFTP round trip --
mkdir -p "$TMP/remote"
head -c 2097152 /dev/urandom >"$TMP/up.bin"
echo old >"$TMP/remote/file"
if cli upload "$TMP/up.bin" "$TMP/remote/file" 0750 2>"$TMP/s6" &&
   cli download "$TMP/remote/file" "$TMP/down.bin" 4194304 2>>"$TMP/s6" &&
   cmp -s "$TMP/up.bin" "$TMP/down.bin"; then
	pass "sftp: 2 MiB upload over an existing file, then download, is identical"
else
	fail "sftp: 2 MiB upload over an existing file, then download, is identical" "$(tail -n 2 "$TMP/s6")"
fi
if [ "$(stat -c %a "$TMP/remote/file")" = 750 ] &&
   [ "$(find "$TMP/remote" -name 'file.tmp-*' | wc -l)" = 0 ]; then
	pass "sftp: uploaded file has mode 0750 and no temporary file is left"
else
	fail "sftp: uploaded file has mode 0750 and no temporary file is left" \
		"mode $(stat -c %a "$TMP/remote/file"); $(ls "$TMP/remote")"
fi
check_fails "sftp: download past max is EFBIG" 2 'error=EFBIG' \
	cli download "$TMP/remote/file" "$TMP/down2.bin" 1000
if [ ! -e "$TMP/down2.bin" ] && [ "$(find "$TMP" -maxdepth 1 -name 'down2.bin.tmp-*' | wc -l)" = 0 ]; then
	pass "sftp: a refused download leaves nothing behind"
else
	fail "sftp: a refused download leaves nothing behind" "$(ls "$TMP")"
fi
check_fails "sftp: download of a missing file is ENOENT" 2 'error=ENOENT' \
	cli download "$TMP/remote/nope" "$TMP/down3.bin" 1000

# -- host keys --
: >"$TMP/empty_known_hosts"
check_fails "host key not in known_hosts is refused as unknown" 2 \
	'error=EKEYREJECTED infra=0: .*is unknown' \
	"$CLI" --host 127.0.0.2 --port "$PA" --identity "$ID" --known-hosts "$TMP/empty_known_hosts" open
check_fails "no known_hosts and no pinned key is refused" 2 'error=EKEYREJECTED' \
	"$CLI" --host 127.0.0.2 --port "$PA" --identity "$ID" open
check "pinned fingerprint (ssh-keygen -l format) is accepted" \
	"$CLI" --host 127.0.0.2 --port "$PA" --identity "$ID" --host-key "$FP_A" exec -- true
ssh-keygen -q -t ed25519 -N '' -f "$TMP/other_key" </dev/null >/dev/null
FP_OTHER=$(ssh-keygen -l -E sha256 -f "$TMP/other_key.pub" | awk '{print $2}')
"$CLI" --host 127.0.0.2 --port "$PA" --identity "$ID" --host-key "$FP_OTHER" open 2>"$TMP/s9"
st=$?
# fingerprints hold '+' and '/': compare them as fixed strings
if [ $st = 2 ] && grep -q 'error=EKEYREJECTED infra=0' "$TMP/s9" &&
   grep -qF "$FP_A" "$TMP/s9" && grep -qF "$FP_OTHER" "$TMP/s9"; then
	pass "wrong pinned fingerprint is refused, naming both"
else
	fail "wrong pinned fingerprint is refused, naming both" "exit $st: $(cat "$TMP/s9")"
fi

# -- authentication --
check_fails "a key the server does not accept fails with EACCES" 2 \
	'error=EACCES infra=0: .*authentication failed' \
	"$CLI" --host 127.0.0.2 --port "$PA" --identity "$TMP/other_key" --known-hosts "$KH_A" open
check_fails "a missing identity file fails with EACCES" 2 'error=EACCES' \
	"$CLI" --host 127.0.0.2 --port "$PA" --identity "$TMP/nonexistent" --known-hosts "$KH_A" open

# -- unreachable --
PN=$(sshd_port 5)
check_fails "nothing listening: ECONNREFUSED, an infra error" 2 'error=ECONNREFUSED infra=1' \
	"$CLI" --host 127.0.0.2 --port "$PN" --identity "$ID" --known-hosts "$KH_A" open

# a server that accepts TCP but never says a word: the connect timeout holds
PS=$(sshd_port 6)
$PY -c 'import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.2", int(sys.argv[1])))
s.listen(5)
time.sleep(20)' "$PS" &
spid=$!
wait_until 5 sshd_port_open 127.0.0.2 "$PS" || fail "the silent server listens" "port $PS not open after 5 s"
t0=$(ms)
"$CLI" --host 127.0.0.2 --port "$PS" --identity "$ID" --known-hosts "$KH_A" \
	--connect-timeout 1 open 2>"$TMP/s10"
t1=$(ms)
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
if grep -q 'error=ETIMEDOUT infra=1' "$TMP/s10" && [ $((t1 - t0)) -lt 3000 ]; then
	pass "a silent server: ETIMEDOUT after $((t1 - t0)) ms with connect timeout 1 s"
else
	fail "a silent server: ETIMEDOUT within the connect timeout" "$((t1 - t0)) ms; $(cat "$TMP/s10")"
fi

# -- timeout, and the remote command is killed --
t0=$(ms)
cli exec --timeout 2 -- sleep 29.71 >/dev/null 2>"$TMP/s7"
t1=$(ms)
if grep -q 'error=ETIMEDOUT infra=1' "$TMP/s7" && [ $((t1 - t0)) -lt 5000 ]; then
	pass "exec: sleep 30 with timeout 2 returns ETIMEDOUT after $((t1 - t0)) ms"
else
	fail "exec: sleep 30 with timeout 2 returns ETIMEDOUT" "$((t1 - t0)) ms; $(tail -n 1 "$TMP/s7")"
fi
# gone PATTERN: no process's command line matches PATTERN (pgrep -f); run
# in this shell, whose own command line is the test's
gone() { ! pgrep -f "$1" >/dev/null; }
gone_pid() { ! kill -0 "$1" 2>/dev/null; }
if wait_until 5 gone 'sleep 29.71'; then
	pass "exec: the timed-out remote command was killed"
else
	fail "exec: the timed-out remote command was killed" "sleep 29.71 still runs after 5 s"
	# shellcheck disable=SC2046
	kill $(pgrep -f 'sleep 29.71')
fi

# -- cancel: the flag a job's cancel sets stops the remote command --
# (not through cli(): the signal is for the tool, not a subshell)
"$CLI" --host 127.0.0.2 --port "$PA" --user root --identity "$ID" --known-hosts "$KH_A" \
	--connect-timeout 5 exec --lines --cancel-on-usr1 -- sh -c 'echo started; exec sleep 29.72' \
	>"$TMP/c1" 2>"$TMP/c1e" &
cpid=$!
wait_until 10 grep -q 'line: started' "$TMP/c1"
t0=$(ms)
kill -USR1 "$cpid"
wait "$cpid"
t1=$(ms)
if grep -q 'line: started' "$TMP/c1" && grep -q 'error=ECANCELED' "$TMP/c1e" && [ $((t1 - t0)) -lt 5000 ]; then
	pass "exec: a cancel returns ECANCELED after $((t1 - t0)) ms"
else
	fail "exec: a cancel returns ECANCELED" "$((t1 - t0)) ms; $(cat "$TMP/c1" "$TMP/c1e" | tail -n 3)"
fi
if wait_until 5 gone 'sleep 29.72'; then
	pass "exec: the cancelled remote command was killed"
else
	fail "exec: the cancelled remote command was killed" "sleep 29.72 still runs after 5 s"
	# shellcheck disable=SC2046
	kill $(pgrep -f 'sleep 29.72')
fi

# -- changed host key --
cp "$KH_A" "$TMP/known_hosts_a_old"
sshd_stop a
sshd_hostkey a
if sshd_start a 127.0.0.2 "$PA"; then
	check_fails "a changed host key is refused with CHANGED" 2 \
		'error=EKEYREJECTED infra=0: .*has CHANGED' \
		"$CLI" --host 127.0.0.2 --port "$PA" --identity "$ID" --known-hosts "$TMP/known_hosts_a_old" open
	check_fails "a changed host key is refused against the old pin too" 2 'error=EKEYREJECTED' \
		"$CLI" --host 127.0.0.2 --port "$PA" --identity "$ID" --host-key "$FP_A" open
else
	fail "restart sshd a with a new host key" "did not start"
fi
sshd_stop a

# -- server killed in the middle of a command --
PB=$(sshd_port 1)
if sshd_start b 127.0.0.3 "$PB"; then
	"$CLI" --host 127.0.0.3 --port "$PB" --identity "$SSHD_IDENTITY" \
		--known-hosts "$SSHD_KNOWN_HOSTS" exec --timeout 60 -- sleep 19.83 \
		>/dev/null 2>"$TMP/s8" &
	cpid=$!
	# the remote sleep itself (anchored: the local client's command line
	# names it too), so sshd dies in the middle of the command
	wait_until 10 pgrep -f '^sleep 19\.83$' ||
		fail "exec: the remote command starts" "no remote sleep 19.83 after 10 s"
	t0=$(ms)
	sshd_kill b
	wait_until 10 gone_pid "$cpid"
	t1=$(ms)
	if kill -0 "$cpid" 2>/dev/null; then
		fail "exec: sshd killed mid-command gives an error quickly" "still running after 10 s"
		kill "$cpid"
	elif grep -q 'error=E[A-Z]* infra=1' "$TMP/s8" && [ $((t1 - t0)) -lt 5000 ]; then
		pass "exec: sshd killed mid-command: $(sed -n 's/.*error=\([A-Z]*\).*/\1/p' "$TMP/s8") after $((t1 - t0)) ms"
	else
		fail "exec: sshd killed mid-command gives an infra error quickly" \
			"$((t1 - t0)) ms; $(tail -n 1 "$TMP/s8")"
	fi
	wait "$cpid" 2>/dev/null
	# shellcheck disable=SC2086
	_left=$(pgrep -f 'sleep 19.83') && kill $_left
else
	fail "sshd on 127.0.0.3:$PB" "did not start"
fi
exit 0
