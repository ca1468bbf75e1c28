# A real PostgreSQL for the tests: a cluster of its own (initdb) in a
# directory of the test's, listening on a Unix socket in that directory
# only (listen_addresses = ''), started and stopped with pg_ctl, each wait
# bounded. As root, the server runs as the unprivileged user postgres (or
# the lab's user tlblab): PostgreSQL refuses to run as root. fsync is off:
# what a test writes need not survive a crash of the machine.
#
# Two ways in, one code:
#   the shell tests source it (after tests/lib.sh, which sets $TMP):
#     . "$TOP/tests/pg.sh"
#     pg_start "$TMP/pg" || exit 1    # PG_URL: its database tlblab
#     pg_stop "$TMP/pg"               # also at exit (pg_cleanup)
#     pg_test "what the test is"      # skips or fails the test, or pg_start
#   the C tests run it (tests/unit/fixture_store.h):
#     sh tests/pg.sh start DIR [PID]  # prints the socket directory; the
#                                     # server stops once PID ends
#     sh tests/pg.sh stop DIR [MODE]  # MODE: fast (default) or immediate
#     sh tests/pg.sh start-again DIR  # the same cluster, after a stop
#     sh tests/pg.sh available        # says why not and fails when it cannot run
#
# Nothing outlives its test: pg_start leaves a reaper behind, a process
# that waits for the test's process to end (the sourcing shell, or the PID
# given to `start`: without one, no reaper, as the caller of a command may
# be a shell that ends at once) and then stops the cluster, however the
# test ended: a shell killed with -9 runs no trap, a C test that crashes
# no teardown. pg_stop checks that the server's process is gone, and
# ends it (by its pid) if it is not.
#
# The cluster's superuser is tlblab (trust on the socket). The role
# tlblab_pw may log in only with the password pg_password prints (the
# tests of a refused login). pg_start makes the database tlblab.
# shellcheck shell=sh

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
# this file, whole, for the reaper to run: as a command, its path;
# sourced, $TOP's (tests/lib.sh sets it)
case "${0##*/}" in
pg.sh) _PG_SELF=$(cd "$(dirname "$0")" && pwd)/pg.sh ;;
*) _PG_SELF=$TOP/tests/pg.sh ;;
esac
PG_PASSWORD=tlblab-test-password-5eb1
PG_DIRS=

# pg_available: true when initdb and pg_ctl are here; else says what is
# missing (scripts/deps.sh test installs postgresql-15)
pg_available() {
	for _b in initdb pg_ctl postgres psql; do
		if [ ! -x "$PG_BIN/$_b" ]; then
			echo "no $PG_BIN/$_b (postgresql-15 is not installed: scripts/deps.sh test installs it)"
			return 1
		fi
	done
	return 0
}

# the user the server runs as: ours, or an unprivileged one when root
_pg_user() {
	if [ "$(id -u)" != 0 ]; then
		id -un
	elif id -u postgres >/dev/null 2>&1; then
		echo postgres
	else
		echo tlblab
	fi
}

# _pg_as DIR CMD...: CMD as the server's user, in DIR (a directory it may enter)
_pg_as() {
	_d=$1
	shift
	if [ "$(id -u)" = 0 ]; then
		(cd "$_d" && runuser -u "$(_pg_user)" -- "$@")
	else
		(cd "$_d" && "$@")
	fi
}

# _pg_reaper DIR PID: in the background, apart from the caller's
# output, signals and process group: once PID has exited, the cluster of
# DIR stopped (tail --pid waits for a process that is not its child)
_pg_reaper() {
	setsid sh -c 'tail --pid="$2" -f /dev/null; sh "$3" stop "$1" immediate' \
		pg-reaper "$1" "$2" "$_PG_SELF" </dev/null >/dev/null 2>&1 &
}

# pg_start DIR [PID]: a new cluster in DIR (made; DIR/data, DIR/run:
# socket, log), started, with its database tlblab, and stopped once PID
# (default: this shell; "none": never) ends; sets PG_SOCKET and PG_URL.
# Fails saying why (the server's log when it would not start).
pg_start() {
	_dir=$1
	pg_available || return 1
	mkdir -p "$_dir" && chmod 711 "$_dir" || return 1
	mkdir -p "$_dir/run" "$_dir/data"
	if [ "$(id -u)" = 0 ]; then
		chown "$(_pg_user)" "$_dir/run" "$_dir/data" || return 1
	fi
	chmod 755 "$_dir/run"
	chmod 700 "$_dir/data"
	if ! _pg_as "$_dir/run" "$PG_BIN/initdb" -D "$_dir/data" --username=tlblab --auth=trust \
		--encoding=UTF8 --locale=C --no-sync >"$_dir/run/initdb.log" 2>&1; then
		echo "pg: initdb failed:"
		sed 's/^/#   /' "$_dir/run/initdb.log" | tail -n 15
		return 1
	fi
	_pg_as "$_dir/run" sh -c 'cat >>"$1/postgresql.conf"' sh "$_dir/data" <<EOF
listen_addresses = ''
unix_socket_directories = '$_dir/run'
unix_socket_permissions = 0777
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 60
shared_buffers = 16MB
log_min_messages = warning
EOF
	_pg_as "$_dir/run" sh -c 'printf "%s\n" "local all tlblab_pw scram-sha-256" "local all all trust" >"$1/pg_hba.conf"' \
		sh "$_dir/data"
	PG_DIRS="$PG_DIRS $_dir"
	[ "${2:-$$}" = none ] || _pg_reaper "$_dir" "${2:-$$}"
	pg_start_again "$_dir" || return 1
	"$PG_BIN/psql" -X -q -h "$_dir/run" -U tlblab -d postgres -v ON_ERROR_STOP=1 \
		-c "CREATE DATABASE tlblab" \
		-c "CREATE ROLE tlblab_pw LOGIN PASSWORD '$PG_PASSWORD'" \
		-c "GRANT ALL ON DATABASE tlblab TO tlblab_pw" >"$_dir/run/psql.log" 2>&1 || {
		echo "pg: cannot make the database:"
		sed 's/^/#   /' "$_dir/run/psql.log"
		return 1
	}
	PG_SOCKET=$_dir/run
	PG_URL="postgresql:///tlblab?host=$PG_SOCKET&user=tlblab"
	export PG_SOCKET PG_URL
}

# pg_test WHAT: the opening of a shell test of WHAT on a server of its
# own: skipped, and ended here, when PostgreSQL is not installed; else a
# cluster in $TMP/pg started (PG_URL), or the test fails and ends here
pg_test() {
	if ! _why=$(pg_available); then
		skip "$1" "$_why"
		exit 0
	fi
	pg_start "$TMP/pg" || { fail "a PostgreSQL server starts (tests/pg.sh)" "see above"; exit 0; }
}

# pg_start_again DIR: the cluster of DIR started (after pg_stop), waiting
# at most 60 s for it to take connections
pg_start_again() {
	if ! _pg_as "$1/run" "$PG_BIN/pg_ctl" -D "$1/data" -l "$1/run/server.log" -w -t 60 start \
		>"$1/run/pg_ctl.log" 2>&1; then
		echo "pg: the server did not start:"
		sed 's/^/#   /' "$1/run/pg_ctl.log" "$1/run/server.log" 2>/dev/null | tail -n 20
		return 1
	fi
}

# pg_stop DIR [MODE]: stops the cluster of DIR (fast: sessions are ended;
# immediate: as a crash), waiting at most 30 s; immediate when fast fails.
# Then no process of the server may be left: one that is, is killed (by
# the pid it wrote) and pg_stop fails saying so.
pg_stop() {
	[ -f "$1/data/postmaster.pid" ] || return 0
	_pid=$(sed -n 1p "$1/data/postmaster.pid" 2>/dev/null)
	_pg_as "$1/run" "$PG_BIN/pg_ctl" -D "$1/data" -m "${2:-fast}" -w -t 30 stop >/dev/null 2>&1 ||
		_pg_as "$1/run" "$PG_BIN/pg_ctl" -D "$1/data" -m immediate -w -t 30 stop >/dev/null 2>&1
	# the server removes its pid file as it exits: a moment (at most 5 s)
	# for the process to be gone, or a zombie its parent has yet to reap
	_i=0
	while [ -n "$_pid" ] && _pg_running "$_pid" && [ $_i -lt 50 ]; do
		_i=$((_i + 1))
		sleep 0.1
	done
	if [ -n "$_pid" ] && _pg_running "$_pid"; then
		echo "pg: the server of $1 (pid $_pid) outlived pg_ctl stop; killed" >&2
		kill -9 "$_pid" 2>/dev/null
		return 1
	fi
	return 0
}

# _pg_running PID: the process runs (it is there, and not a zombie)
_pg_running() {
	[ -r "/proc/$1/stat" ] && ! grep -q '^[0-9]* (.*) Z ' "/proc/$1/stat" 2>/dev/null
}

# pg_cleanup: every cluster pg_start made here, stopped (tests/lib.sh's
# trap removes $TMP after); a server that outlived its stop is a failure
pg_cleanup() {
	for _d in $PG_DIRS; do
		pg_stop "$_d" immediate ||
			echo "not ok - pg: the server of $_d stops with its test # it outlived pg_ctl stop"
	done
}

# pg_password: the password of the role tlblab_pw
pg_password() {
	echo "$PG_PASSWORD"
}

# as a command (the C tests): start DIR | stop DIR [MODE] | start-again DIR | available
case "${0##*/}" in
pg.sh)
	set -u
	case "${1:-}" in
	start) pg_start "$2" "${3:-none}" >&2 && echo "$PG_SOCKET" ;;
	start-again) pg_start_again "$2" >&2 ;;
	stop) pg_stop "$2" "${3:-fast}" ;;
	available) pg_available ;;
	*) echo "usage: sh tests/pg.sh start DIR [PID] | start-again DIR | stop DIR [MODE] | available" >&2; exit 2 ;;
	esac
	;;
*)
	# sourced: stop what we started at exit, before $TMP is removed
	# (and, were the shell killed with -9, the reaper does)
	trap 'pg_cleanup; rm -rf "$TMP"' EXIT
	trap 'exit 130' INT TERM HUP
	;;
esac
