# Real OpenSSH servers on loopback addresses for the numbered tests.
# Source it after tests/lib.sh (it needs $TMP):
#
#   . "$(dirname "$0")/../lib.sh"
#   . "$TOP/tests/sshd.sh"
#   sshd_keys "$TMP/keys"                  # user key pair, once per test
#   sshd_start a 127.0.0.2 "$(sshd_port 0)" || exit 1
#   ... use $SSHD_IDENTITY, $SSHD_KNOWN_HOSTS, $SSHD_PID, $SSHD_DIR ...
#   sshd_stop a
#
# SSHD_SHELL_USERS="user ...", set before sshd_start, lets those system
# users log in to that instance with /bin/sh as their shell (the lab's user
# tlblab, whose shell is nologin, for a builder reached as that user).
#
# After sshd_start NAME, these name that instance (the last one started):
#   SSHD_DIR          $TMP/sshd-NAME (config, host key, log, known_hosts)
#   SSHD_IDENTITY     the user's private key (from sshd_keys)
#   SSHD_KNOWN_HOSTS  $SSHD_DIR/known_hosts: "[ADDR]:PORT ssh-ed25519 ..."
#   SSHD_HOST_KEY     $SSHD_DIR/host_key.pub
#   SSHD_FINGERPRINT  "SHA256:..." of the host key, as ssh-keygen -l prints it
#   SSHD_PID          the listening sshd
# Every instance started here is stopped at exit, before $TMP is removed.
# shellcheck shell=sh

SSHD=${SSHD:-/usr/sbin/sshd}
SSHD_NAMES=

trap 'sshd_cleanup; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

# sshd_port N: a high port for the Nth server of this test, unlikely to
# clash with a concurrent run.
sshd_port() {
	echo $((22000 + ($$ % 1000) * 10 + $1))
}

# sshd_keys DIR: a user key pair (DIR/id_ed25519, DIR/id_ed25519.pub) and
# DIR/authorized_keys allowing it.
sshd_keys() {
	mkdir -p "$1" || return 1
	ssh-keygen -q -t ed25519 -N '' -C tlblab-test -f "$1/id_ed25519" </dev/null >/dev/null || return 1
	cp "$1/id_ed25519.pub" "$1/authorized_keys"
	SSHD_KEYS=$1
	SSHD_IDENTITY=$1/id_ed25519
}

# sshd_hostkey NAME: (re)generates the instance's ed25519 host key.
sshd_hostkey() {
	_d=$TMP/sshd-$1
	mkdir -p "$_d"
	rm -f "$_d/host_key" "$_d/host_key.pub"
	ssh-keygen -q -t ed25519 -N '' -C "sshd-$1" -f "$_d/host_key" </dev/null >/dev/null
}

# _sshd_vars NAME: sets the SSHD_* variables for instance NAME.
_sshd_vars() {
	SSHD_DIR=$TMP/sshd-$1
	SSHD_KNOWN_HOSTS=$SSHD_DIR/known_hosts
	SSHD_HOST_KEY=$SSHD_DIR/host_key.pub
	SSHD_FINGERPRINT=$(ssh-keygen -l -E sha256 -f "$SSHD_HOST_KEY" | awk '{print $2}')
	SSHD_PID=$(cat "$SSHD_DIR/sshd.pid" 2>/dev/null)
	SSHD_IDENTITY=$SSHD_KEYS/id_ed25519
	export SSHD_DIR SSHD_KNOWN_HOSTS SSHD_HOST_KEY SSHD_FINGERPRINT SSHD_PID SSHD_IDENTITY
}

# sshd_port_open ADDR PORT: true when something accepts TCP there.
sshd_port_open() {
	$PY - "$1" "$2" <<'PYEOF'
import socket, sys
s = socket.socket()
s.settimeout(0.5)
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
except OSError:
    sys.exit(1)
PYEOF
}

# sshd_start NAME ADDR PORT: starts sshd for NAME (keeping its host key if
# it has one already, so a restart keeps its identity) and waits, at most
# 5 s, until it accepts connections. Returns non-zero, with sshd's log on
# stderr, when it does not come up.
sshd_start() {
	_n=$1 _addr=$2 _port=$3
	_d=$TMP/sshd-$_n
	[ -n "${SSHD_KEYS:-}" ] || { echo "sshd_start: call sshd_keys first" >&2; return 1; }
	mkdir -p "$_d" /run/sshd
	[ -f "$_d/host_key" ] || sshd_hostkey "$_n" || return 1
	cat >"$_d/sshd_config" <<EOF
ListenAddress $_addr:$_port
HostKey $_d/host_key
AuthorizedKeysFile $SSHD_KEYS/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $_d/sshd.pid
Subsystem sftp internal-sftp
LogLevel ERROR
MaxStartups 50
EOF
	rm -f "$_d/sshd.pid"
	if [ -n "${SSHD_SHELL_USERS:-}" ]; then
		# system users (the lab's, whose shell is nologin and whose
		# password is locked, "!", which sshd without PAM takes for a
		# locked account) given /bin/sh and no password ("*") for this
		# sshd alone: it sees its own /etc/passwd and /etc/shadow, in a
		# mount namespace of its own
		cp /etc/passwd "$_d/passwd"
		(umask 077 && cp /etc/shadow "$_d/shadow")
		for _u in $SSHD_SHELL_USERS; do
			sed -i "s|^\($_u:[^:]*:[^:]*:[^:]*:[^:]*:[^:]*:\).*|\1/bin/sh|" "$_d/passwd"
			sed -i "s|^$_u:[^:]*:|$_u:*:|" "$_d/shadow"
		done
		unshare -m sh -c 'mount --bind "$0" /etc/passwd && mount --bind "$1" /etc/shadow && shift && exec "$@"' \
			"$_d/passwd" "$_d/shadow" \
			"$SSHD" -D -e -f "$_d/sshd_config" >"$_d/log" 2>&1 &
	else
		"$SSHD" -D -e -f "$_d/sshd_config" >"$_d/log" 2>&1 &
	fi
	echo $! >"$_d/sshd.pid.bg"
	case " $SSHD_NAMES " in *" $_n "*) ;; *) SSHD_NAMES="$SSHD_NAMES $_n" ;; esac
	_i=0
	while ! sshd_port_open "$_addr" "$_port"; do
		_i=$((_i + 1))
		if [ "$_i" -ge 50 ] || ! kill -0 "$(cat "$_d/sshd.pid.bg")" 2>/dev/null; then
			echo "sshd_start $_n: not listening on $_addr:$_port after 5 s" >&2
			sed 's/^/#   sshd: /' "$_d/log" >&2
			sshd_stop "$_n"
			return 1
		fi
		sleep 0.1
	done
	# the pid file is written once it listens; prefer it, fall back to $!
	[ -s "$_d/sshd.pid" ] || cp "$_d/sshd.pid.bg" "$_d/sshd.pid"
	echo "[$_addr]:$_port $(cut -d' ' -f1-2 "$_d/host_key.pub")" >"$_d/known_hosts"
	echo "$_addr $_port" >"$_d/addr"
	_sshd_vars "$_n"
}

# sshd_pids NAME: every process of the instance: the listener, the
# per-connection monitors and session processes (whose argv sshd rewrites
# to "sshd: root@notty", so they are found through their parents) and the
# commands they run.
sshd_pids() {
	_lvl=$({
		cat "$TMP/sshd-$1/sshd.pid" "$TMP/sshd-$1/sshd.pid.bg" 2>/dev/null
		pgrep -f "$TMP/sshd-$1/sshd_config" 2>/dev/null
	} | sort -u)
	_all=$_lvl
	for _depth in 1 2 3 4; do
		_next=
		for _p in $_lvl; do
			_next="$_next $(pgrep -P "$_p" 2>/dev/null)"
		done
		_lvl=$_next
		_all="$_all $_next"
	done
	# shellcheck disable=SC2086
	printf '%s\n' $_all | sort -u
}

# _sshd_alive PIDS...: true when any of them still runs.
_sshd_alive() {
	for _p in "$@"; do
		kill -0 "$_p" 2>/dev/null && return 0
	done
	return 1
}

# sshd_stop NAME: SIGTERM to the instance, then after at most 2 s SIGKILL
# to what is left.
sshd_stop() {
	_pids=$(sshd_pids "$1")
	if [ -n "$_pids" ]; then
		# shellcheck disable=SC2086
		kill $_pids 2>/dev/null
		_i=0
		# shellcheck disable=SC2086
		while [ "$_i" -lt 20 ] && _sshd_alive $_pids; do
			_i=$((_i + 1))
			sleep 0.1
		done
		# shellcheck disable=SC2086
		kill -9 $_pids 2>/dev/null
	fi
	rm -f "$TMP/sshd-$1/sshd.pid" "$TMP/sshd-$1/sshd.pid.bg"
	return 0
}

# sshd_kill NAME: SIGKILL to every process of the instance at once,
# including the ones serving established connections, so a session really
# dies (its TCP connection is reset, as when a machine's sshd crashes).
sshd_kill() {
	_pids=$(sshd_pids "$1")
	# shellcheck disable=SC2086
	[ -z "$_pids" ] || kill -9 $_pids 2>/dev/null
	pkill -9 -f "$TMP/sshd-$1/sshd_config" 2>/dev/null
	rm -f "$TMP/sshd-$1/sshd.pid" "$TMP/sshd-$1/sshd.pid.bg"
	return 0
}

sshd_cleanup() {
	for _n in $SSHD_NAMES; do
		sshd_stop "$_n"
	done
}
