#!/bin/sh
# tlblabd under the attacks of issue 12, on loopback: /health latency
# (median and p99, one probe every 50 ms from 127.0.0.1) and the daemon's
# resident set, (1) while 300 clients without a token hold connections
# whose headers trickle in (a header line a second, from 10 addresses, each
# reconnecting when cut), and (2) while 200 clients with a token read as
# the dashboard does (job list, job, machines, and a 15,000-sample run's
# samples page after page), each at most 5 requests a second to stay
# bounded on a shared machine, with their errors counted. Many clients
# reading one job's pages share the daemon's response cache, as dashboards
# do; pages at offsets of their own (no cache) saturate a shared 2-core
# machine at about 300 requests a second. Targets: /health p99 < 100 ms,
# RSS < 128 MB, 0 errors. Prints figures, asserts nothing.
set -u
SLOW=${SLOW:-300}
SLOW_SECS=${SLOW_SECS:-30}
CLIENTS=${CLIENTS:-200}
CLIENT_SECS=${CLIENT_SECS:-60}
PORT_BASE=11000
. "$(dirname "$0")/lib.sh"

fill /usr/bin/python3 - "$tmp/data/tlblab.db" <<'PYEOF'
import json, sqlite3, sys, time
c = sqlite3.connect(sys.argv[1])
now = time.time()
vals = json.dumps({"interrupts.TLB": 15, "interrupts.TLB.cpu0": 13, "interrupts.TLB.cpu1": 2,
                   "vmstat.nr_tlb_remote_flush": 40, "vmstat.nr_tlb_remote_flush_received": 41})
with c:
    c.execute("INSERT INTO jobs (id, kind, state, suite, suite_json, submitter, created, started, finished)"
              " VALUES (1, 'run', 'done', 'tlb', '[]', 'bench', ?, ?, ?)", (now, now, now))
    c.execute("INSERT INTO stages (id, job_id, seq, kind, state, machine) VALUES (1, 1, 0, 'run', 'done', 'm1')")
    c.executemany("INSERT INTO samples (stage_id, spec_index, case_index, iteration, warmup, in_window, t, dt, vals)"
                  " VALUES (1, 0, 0, 0, 0, 1, ?, 1.0, ?)", ((float(i), vals) for i in range(15000)))
PYEOF
start
/usr/bin/python3 - "$port" "$pid" "$SLOW" "$SLOW_SECS" "$CLIENTS" "$CLIENT_SECS" <<'PYEOF'
import http.client, json, multiprocessing, socket, statistics, sys, threading, time
port, pid, slow, slow_secs, clients, client_secs = map(int, sys.argv[1:7])
TOKEN = "bench-token-0123456789"


def rss_kib():
    with open("/proc/%d/status" % pid) as f:
        return max(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))


def probe(stop, out):
    """/health every 50 ms on a new connection from 127.0.0.1, in a process
    of its own (the load's 200 threads would delay it on Python's lock and
    count that as the daemon's latency); sends back latencies, errors and
    the daemon's peak RSS."""
    lat, errs, rss = [], 0, rss_kib()
    while not stop.is_set():
        t0 = time.monotonic()
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/api/v1/health")
            r = c.getresponse()
            r.read()
            c.close()
            if r.status == 200:
                lat.append(time.monotonic() - t0)
            else:
                errs += 1
        except OSError:
            errs += 1
        rss = max(rss, rss_kib())
        stop.wait(0.05)
    out.send((lat, errs, rss))


def slow_client(i, stop, cuts):
    """Holds a connection whose headers never end, a line a second."""
    src = "127.0.0.%d" % (2 + i % 10)
    while not stop.is_set():
        s = socket.socket()
        try:
            s.settimeout(2)
            s.bind((src, 0))
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET /api/v1/health HTTP/1.1\r\n")
            while not stop.is_set():
                s.sendall(b"X-Slow: 1\r\n")
                stop.wait(1)
        except OSError:
            cuts[0] += 1
        finally:
            s.close()
        stop.wait(0.2)


def client(i, stop, done, errs):
    """A token holder reading as the dashboard does: the job list, a job,
    the machines, and the job's samples page after page (following "next",
    500 a page, from the start again after the last)."""
    src = "127.0.1.%d" % (1 + i % 8)
    n, after = i, 0
    while not stop.is_set():
        t0 = time.monotonic()
        path = ["/api/v1/jobs?limit=20", "/api/v1/jobs/1/samples?limit=500&after=%d" % after,
                "/api/v1/jobs/1", "/api/v1/machines"][n % 4]
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(src, 0))
            c.request("GET", path, headers={"Authorization": "Bearer " + TOKEN})
            r = c.getresponse()
            body = r.read()
            c.close()
            if r.status == 200:
                done[0] += 1
                if "/samples" in path:
                    after = json.loads(body)["next"] or 0
            else:
                errs[0] += 1
        except (OSError, ValueError, KeyError):
            errs[0] += 1
        n += 1
        stop.wait(max(0, 0.2 - (time.monotonic() - t0)))


def phase(workers, secs, target, args):
    """Runs workers of target(i, stop, *args) and the probe for secs."""
    pstop, (rx, tx) = multiprocessing.Event(), multiprocessing.Pipe(False)
    p = multiprocessing.Process(target=probe, args=(pstop, tx))
    p.start()	# forked before the threads start
    stop = threading.Event()
    ts = [threading.Thread(target=target, args=(i, stop) + args) for i in range(workers)]
    for t in ts:
        t.start()
    stop.wait(secs)
    stop.set()
    pstop.set()
    lat, perrs, rss = rx.recv() if rx.poll(15) else ([], -1, 0)
    p.join(5)
    for t in ts:
        t.join(10)
    return lat, perrs, rss


def report(title, lat, perrs, rss):
    lat = sorted(lat)
    med = statistics.median(lat) * 1000 if lat else float("nan")
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000 if lat else float("nan")
    print(title)
    print("  /health: median %6.1f ms  p99 %6.1f ms  (target p99 < 100 ms; %d probes, %d errors)"
          % (med, p99, len(lat), perrs))
    print("  tlblabd RSS peak: %d MB (target < 128 MB)" % (rss // 1024))


print("idle: tlblabd RSS %d MB" % (rss_kib() // 1024))
cuts = [0]
lat, perrs, rss = phase(slow, slow_secs, slow_client, (cuts,))
report("%d clients without a token trickling headers from 10 addresses, %d s:" % (slow, slow_secs),
       lat, perrs, rss)
print("  slow connections cut or refused: %d (header_timeout 10 s, 64 per address)" % cuts[0])

done, errs = [0], [0]
lat, perrs, rss = phase(clients, client_secs, client, (done, errs))
report("%d clients with a token reading as the dashboard does, from 8 addresses, %d s:" % (clients, client_secs),
       lat, perrs, rss)
print("  their requests: %d answered 200, %d errors (target 0)" % (done[0], errs[0]))
PYEOF
