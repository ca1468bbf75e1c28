# Helpers to run tlblabd in a test. Source after tests/lib.sh.
#   daemon_start CONFIG   starts $BUILD/tlblabd -c CONFIG, waits for /health
#   daemon_kill9          SIGKILL, as a crash
#   daemon_stop           SIGTERM and wait
#   api METHOD PATH [BODY] [TOKEN]   curl to the API; prints the body and
#                         leaves the HTTP status in $HTTP_STATUS (when run
#                         in a command substitution, `api_status` prints it)
#   job_wait ID STATES SECONDS       polls until the job's state is one of
#                         STATES (space-separated); prints it
#   jq_py EXPR            evaluates a Python expression over J, the JSON
#                         read from stdin, and prints it
#   daemon_seed CONFIG COMMAND...   the daemon makes its store (started
#                         once, stopped), then COMMAND fills it
#   daemon_sql SQLITE_FILE   SQL on stdin run on the test's store (the
#                         file, or DAEMON_STORE's database: t0083)
#   daemon_store_empty    DAEMON_STORE's database made again, empty
#   daemon_test PORT_BASE   the test's TOKEN, DAEMON_PORT and URL
#   lab_yaml DATA_DIR [KEY: VALUE]...   the lab: section of a lab.yaml
#   daemon_as_lab_user   the daemon runs as the lab's user (the tests
#                         that build in the lab's directories)
#   lab_yaml_machine NAME [KEY: VALUE]...   one local machine
#   lab_yaml_machine_dirs NAME [KEY: VALUE]...   one with its own dirs
#   lab_yaml_qemu_machine GUEST_DIR SSH_PORT [KEY: VALUE]...   one QEMU machine
#   qemu_test_kernel FILE quiet|spam   a 4 KiB x86 "kernel" QEMU boots at once
#   lab_yaml_builder [KEY: VALUE]...   builders: and trees: (b1, linux;
#                         LAB_TREE and LAB_TREE_URL name another tree)
#   lab_yaml_builder_unreachable PORT   the same, b1 reached over SSH
#   lab_yaml_mprotect_suite NAME TIMEOUT [KEY: VALUE]...   a suite entry
#   lab_yaml_hold_suite   a suite entry that holds its machine
#   fake_build_done [IMAGE]   the end of a stand-in build.sh: a build at once
#   fake_build_image IMAGE    a stand-in build.sh's body: IMAGE is the build
#   webhook_receiver DIR PORT   a webhook receiver on 127.0.0.1:PORT (HOOK_PID)
# A test writes its lab.yaml from these and appends what is its own:
#   { lab_yaml "$TMP/data" "tokens: [$TOKEN]"; echo machines:
#     lab_yaml_machine m1; lab_yaml_builder; echo suites:; ...; } >lab.yaml
# Needs DAEMON_PORT set (the listen port of the config); DAEMON_AGENT, when
# set, is the agent the daemon uploads (tests with QEMU guests set it to the
# static $GUEST_AGENT); DAEMON_ARGS, more options for it (split on spaces).
# shellcheck shell=sh

DAEMON_PID=
DAEMON_LOG=$TMP/tlblabd.log

# daemon_test PORT_BASE: sets TOKEN (the test's own, named after its
# script), DAEMON_PORT (PORT_BASE plus the pid modulo 3000: keep it below
# the ephemeral range, 32768-) and URL, the daemon's address
daemon_test() {
	TOKEN=$(basename "$0" .sh | cut -d- -f1)-token-0123456789abcdef
	DAEMON_PORT=$(($1 + $$ % 3000))
	URL=http://127.0.0.1:$DAEMON_PORT
}

daemon_start() {
	# shellcheck disable=SC2086
	"${DAEMON_BIN:-$BUILD/tlblabd}" -c "$1" ${DAEMON_AGENT:+-a "$DAEMON_AGENT"} ${DAEMON_ARGS:-} >>"$DAEMON_LOG" 2>&1 &
	DAEMON_PID=$!
	_i=0
	until curl -fs -m 2 "http://127.0.0.1:$DAEMON_PORT/api/v1/health" >/dev/null 2>&1; do
		_i=$((_i + 1))
		if [ $_i -gt 100 ] || ! kill -0 "$DAEMON_PID" 2>/dev/null; then
			echo "# tlblabd did not start:"
			sed 's/^/#   /' "$DAEMON_LOG" | tail -n 20
			return 1
		fi
		sleep 0.1
	done
}

daemon_kill9() {
	[ -n "$DAEMON_PID" ] && kill -9 "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
}

daemon_stop() {
	[ -n "$DAEMON_PID" ] || return 0
	kill "$DAEMON_PID" 2>/dev/null
	_i=0
	while kill -0 "$DAEMON_PID" 2>/dev/null && [ $_i -lt 100 ]; do
		_i=$((_i + 1))
		sleep 0.1
	done
	kill -9 "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
}

api() {
	_m=$1 _p=$2 _b=${3:-} _t=${4:-}
	set -- -s -m 10 -o "$TMP/api.body" -w '%{http_code}' -X "$_m"
	[ -n "$_t" ] && set -- "$@" -H "Authorization: Bearer $_t"
	[ -n "$_b" ] && set -- "$@" -H 'Content-Type: application/json' --data-binary "$_b"
	HTTP_STATUS=$(curl "$@" "http://127.0.0.1:$DAEMON_PORT/api/v1$_p")
	echo "$HTTP_STATUS" >"$TMP/api.status"
	cat "$TMP/api.body"
}

api_status() {
	cat "$TMP/api.status"
}

jq_py() {
	$PY -c "import json,sys; J=json.load(sys.stdin); print($1)"
}

job_wait() {
	_id=$1 _want=$2 _secs=$3
	_end=$(($(date +%s) + _secs)) _jw_pause=
	while :; do
		_st=$(curl -s -m 5 "http://127.0.0.1:$DAEMON_PORT/api/v1/jobs/$_id" | jq_py 'J["job"]["state"]' 2>/dev/null)
		case " $_want " in *" $_st "*) echo "$_st"; return 0 ;; esac
		[ "$(date +%s)" -ge $_end ] && { echo "${_st:-unreachable}"; return 1; }
		backoff _jw_pause 1000
	done
}

# daemon_seed CONFIG COMMAND...: the daemon makes the store of CONFIG, then
# COMMAND (its output in $TMP/seed.out) fills it while no daemon runs. When
# either does not work the test fails ("tlblabd starts", "the store is
# seeded") and ends here.
daemon_seed() {
	_cfg=$1
	shift
	daemon_start "$_cfg" || { fail "tlblabd starts" "see log"; exit 0; }
	daemon_stop
	if ! "$@" >"$TMP/seed.out" 2>&1; then
		fail "the store is seeded" "$(tail -n 3 "$TMP/seed.out")"
		exit 0
	fi
}

# daemon_sql SQLITE_FILE: the SQL on stdin (statements that both backends
# read alike) run in one transaction on the test's store: the SQLite file,
# or with DAEMON_STORE set its PostgreSQL database, whose identity columns
# then go on after the largest id stored (a seed gives its rows' ids)
daemon_sql() {
	if [ -z "${DAEMON_STORE:-}" ]; then
		$PY -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.executescript("BEGIN;" + sys.stdin.read() + ";COMMIT;")' "$1"
		return
	fi
	{
		echo "BEGIN;"
		cat
		cat <<'EOSQL'
;
DO $$
DECLARE r record;
BEGIN
	FOR r IN SELECT table_name AS t, pg_get_serial_sequence(table_name, column_name) AS s
		FROM information_schema.columns WHERE table_schema = 'public' AND is_identity = 'YES' LOOP
		EXECUTE format('SELECT setval(%L, (SELECT coalesce(max(id), 0) + 1 FROM %I), false)', r.s, r.t);
	END LOOP;
END $$;
COMMIT;
EOSQL
	} | "${PG_BIN:-/usr/lib/postgresql/15/bin}/psql" -X -q -v ON_ERROR_STOP=1 "$DAEMON_STORE" >/dev/null
}

# daemon_store_empty: with DAEMON_STORE set, its database made again,
# empty, for a lab that must start from nothing (no daemon may be on it);
# without, nothing: each lab of a test has a data_dir of its own
daemon_store_empty() {
	[ -n "${DAEMON_STORE:-}" ] || return 0
	_db=$(echo "$DAEMON_STORE" | sed -n 's|^postgres[a-z]*://[^/]*/\([A-Za-z0-9_]*\).*|\1|p')
	echo "DROP DATABASE $_db WITH (FORCE); CREATE DATABASE $_db;" | "${PG_BIN:-/usr/lib/postgresql/15/bin}/psql" -X -q \
		-v ON_ERROR_STOP=1 "$(echo "$DAEMON_STORE" | sed "s|/$_db|/postgres|")" >/dev/null
}

# The parts of a lab.yaml that tests share. Each KEY: VALUE argument is one
# more line of the entry, written as given (quote it in YAML if need be).

# lab_yaml DATA_DIR [KEY: VALUE]...: the lab: section, listening on
# 127.0.0.1:$DAEMON_PORT; with DAEMON_STORE set (a PostgreSQL URL), its
# store is there (lab.store: t0083 runs the API's tests so)
lab_yaml() {
	printf 'lab:\n  data_dir: %s\n  listen: 127.0.0.1:%s\n' "$1" "$DAEMON_PORT"
	[ -z "${DAEMON_LAB_USER:-}" ] || printf '  user: %s\n' "$DAEMON_LAB_USER"
	[ -z "${DAEMON_STORE:-}" ] || printf "  store: '%s'\n" "$DAEMON_STORE"
	shift
	for _kv; do printf '  %s\n' "$_kv"; done
}

# daemon_as_lab_user: the test's daemon becomes the lab's user (lab.user),
# as make demo's is, for the tests whose builder works in the lab's
# directories of $CACHE, where that user alone writes (docs/security.md).
# Makes $TMP/data and $TMP/vm that user's; lab_yaml then names the user.
daemon_as_lab_user() {
	for _d in "$TMP/data" "$TMP/vm"; do
		[ -d "$_d" ] || install -d -m 0700 -o "$LAB_USER" -g "$LAB_USER" "$_d"
	done
	DAEMON_LAB_USER=$LAB_USER
}

# lab_yaml_machine NAME [KEY: VALUE]...: an entry of machines:, transport local
lab_yaml_machine() {
	printf '  - name: %s\n    transport: local\n' "$1"
	shift
	for _kv; do printf '    %s\n' "$_kv"; done
}

# lab_yaml_machine_dirs NAME [KEY: VALUE]...: the same, with the agent and
# its work directory under $TMP/NAME
lab_yaml_machine_dirs() {
	lab_yaml_machine "$@" "agent_path: $TMP/$1/tlblab-agent" "workdir: $TMP/$1/work"
}

# lab_yaml_qemu_machine GUEST_DIR SSH_PORT [KEY: VALUE]...: an entry of
# machines:, vm1, a 2-vCPU QEMU machine the daemon boots (its files in
# $TMP/vm) with the initramfs and keys of GUEST_DIR and SSH forwarded from
# SSH_PORT; each KEY: VALUE is one more line of its qemu: section
lab_yaml_qemu_machine() {
	cat <<EOC
  - name: ${LAB_VM_NAME:-vm1}
    transport: local
    boot: qemu
    cpus: 2
    workdir: $TMP/vm
    qemu:
      initrd: $1/initramfs.cpio
      ssh_port: $2
      identity: $1/lab_key
      known_hosts: $1/known_hosts
EOC
	shift 2
	for _kv; do printf '      %s\n' "$_kv"; done
}

# lab_yaml_builder [KEY: VALUE]...: builders: b1 (by default local, its
# workdir $TMP/b1: never the lab's, whose owner is the lab's user), and
# trees: linux, which b1 builds and which does not exist (or, with
# LAB_TREE and LAB_TREE_URL set, the tree of that name and URL)
lab_yaml_builder() {
	[ $# -gt 0 ] || set -- "transport: local" "workdir: $TMP/b1"
	printf 'builders:\n  - name: b1\n'
	for _kv; do printf '    %s\n' "$_kv"; done
	printf 'trees:\n  - name: %s\n    url: %s\n    builder: b1\n' "${LAB_TREE:-linux}" \
		"${LAB_TREE_URL:-$TMP/no-such-tree}"
}

# lab_yaml_builder_unreachable PORT: the same with b1 reached over SSH at
# 127.0.0.1:PORT, where nobody listens: A/B jobs fail fast, as the lab's
# problem
lab_yaml_builder_unreachable() {
	lab_yaml_builder "transport: ssh" "host: 127.0.0.1" "port: $1" "user: nobody" \
		"identity: $TMP/no-such-key" "host_key: SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" \
		"workdir: $TMP/b1"
}

# lab_yaml_mprotect_suite NAME TIMEOUT [KEY: VALUE]...: an entry of suites:,
# NAME (with the suite's timeout TIMEOUT, "" for the default), of one
# mprotect workload with the given keys
lab_yaml_mprotect_suite() {
	printf '  - name: %s\n' "$1"
	if [ -n "$2" ]; then printf '    timeout: %s\n' "$2"; fi
	printf '    workloads:\n      - workload: mprotect\n'
	shift 2
	for _kv; do printf '        %s\n' "$_kv"; done
}

# lab_yaml_hold_suite: an entry of suites:, 'hold', whose one run holds its
# machine (sleep 900) until the job is cancelled or the daemon stops
lab_yaml_hold_suite() {
	cat <<EOC
  - name: hold
    timeout: 1200
    workloads:
      - workload: exec
        command: [sleep, "900"]
        parser: none
        iterations: 1
        warmup: 0
EOC
}

# fake_build_done [IMAGE]: the last lines of a stand-in for build.sh
# (tlblabd -k, after kernels_stub), which has set out (its --out) and id:
# a build made at once in $out/$id, whose bzImage is a copy of IMAGE (a
# path, expanded when the stand-in runs) or, without IMAGE, the id as text
# (an image of its own for each id), and the TLBLAB lines build.sh ends
# with. Printed, for a here-document that writes the stand-in (so its
# variables stay unexpanded here).
# shellcheck disable=SC2016
fake_build_done() {
	echo 'mkdir -p "$out/$id"'
	if [ $# -gt 0 ]; then
		printf 'cp "%s" "$out/$id/bzImage"\n' "$1"
	else
		echo 'echo "$id" >"$out/$id/bzImage"'
	fi
	cat <<'EOS'
for f in config System.map build.log meta.json; do echo "$id" >"$out/$id/$f"; done
printf 'TLBLAB status ok\nTLBLAB build_id %s\nTLBLAB commit %s\nTLBLAB config_hash %s\n' "$id" "$id" "$id"
printf 'TLBLAB dir %s\nTLBLAB arch x86_64\nTLBLAB image bzImage\nTLBLAB image_sha256 %s\n' "$out/$id" \
	"$(sha256sum <"$out/$id/bzImage" | cut -c1-64)"
EOS
}

# fake_build_image IMAGE: the lines of a stand-in for build.sh that take
# the kernel image IMAGE (a path; a qemu_test_kernel's) as the build, at
# once, whatever the job asks: its id is the image's sha256. Printed, for
# a here-document that writes the stand-in after its own first lines.
# shellcheck disable=SC2016
fake_build_image() {
	cat <<'EOS'
out=
while [ $# -gt 0 ]; do
	[ "$1" = --out ] && out=$2
	shift
done
EOS
	printf 'id=$(sha256sum <"%s" | cut -c1-64)\n' "$1"
	fake_build_done "$1"
}

# qemu_test_kernel FILE quiet|spam: writes FILE, the smallest image QEMU's
# x86 -kernel takes as a bzImage (a boot protocol 2.02 header, loaded high),
# whose real-mode entry writes to the serial port: "quiet" one line, then
# halts; "spam" an endless run of X (about 200 KB/s under TCG). For tests of
# how the daemon runs QEMU, without a kernel built.
qemu_test_kernel() {
	$PY - "$1" "$2" <<'PYEOF'
import struct, sys
img = bytearray(4096)
img[0x1f1] = 1                                   # setup_sects: 2 sectors of setup
img[0x1fe:0x200] = b"\x55\xaa"
img[0x200:0x202] = b"\xeb\x7e"                    # jmp to 0x280, past the header
img[0x202:0x206] = b"HdrS"
img[0x206:0x208] = struct.pack("<H", 0x202)      # boot protocol 2.02
img[0x211] = 0x01                                # LOADED_HIGH
if sys.argv[2] == "spam":
    # mov dx,0x3f8; l: mov al,'X'; out dx,al; jmp l
    code = bytes([0xba, 0xf8, 0x03, 0xb0, 0x58, 0xee, 0xeb, 0xfb])
else:
    # mov dx,0x3f8; mov si,msg; l: cs lodsb; test al,al; jz h; out dx,al;
    # jmp l; h: cli; hlt; jmp h (msg at 0x2c0, offset 0xc0 of the setup's cs)
    code = bytes([0xba, 0xf8, 0x03, 0xbe, 0xc0, 0x00, 0x2e, 0xac, 0x84, 0xc0, 0x74, 0x03,
                  0xee, 0xeb, 0xf7, 0xfa, 0xf4, 0xeb, 0xfd])
    msg = b"tlblab-test: a kernel that says this and halts\n\0"
    img[0x2c0:0x2c0 + len(msg)] = msg
img[0x280:0x280 + len(code)] = code
open(sys.argv[1], "wb").write(bytes(img))
PYEOF
}

# webhook_receiver DIR PORT: in the background (its pid in HOOK_PID: the
# test stops it), a server on 127.0.0.1:PORT that writes the body of each
# POST to DIR/NNN-EVENT.json (NNN counts from 000, EVENT is the
# X-Tlblab-Event header), whole: a file is there only once it is written
webhook_receiver() {
	mkdir -p "$1"
	$PY - "$2" "$1" <<'PYEOF' >"$1.log" 2>&1 &
import http.server, os, sys
port, out = int(sys.argv[1]), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        n = len(os.listdir(out))
        with open(out + ".tmp", "wb") as f:
            f.write(body)
        os.rename(out + ".tmp", os.path.join(out, "%03d-%s.json" % (n, self.headers.get("X-Tlblab-Event", "none"))))
        self.send_response(204)
        self.end_headers()
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
PYEOF
	HOOK_PID=$!
}

# Stops the daemon at exit too (composes with sshd.sh's trap).
daemon_cleanup() {
	daemon_stop
}
