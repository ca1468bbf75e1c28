#!/usr/bin/env python3
"""The attacks of issue 12 section 2 against a running tlblabd on loopback,
each one a check printed as a TAP line ("ok - ..." / "not ok - ... # why").
Used by tests/integration/t0080-api-limits.sh.

  api-attacks.py PORT PID TOKEN OTHER_TOKEN SAMPLES_JOB NSAMPLES

The daemon runs with header_timeout 2, max_connections_per_address 16,
max_jobs_per_token 2 and max_boots_per_token 9 (t0080's config); job
SAMPLES_JOB has NSAMPLES samples and job 1 was submitted by mallory.
Every wait is bounded; attackers come from 127.0.0.2 and up, the checks
that must still work from 127.0.0.1 (the per-address limit tells them apart).
"""
import http.client
import json
import select
import socket
import sys
import threading
import time

PORT, PID, TOKEN, OTHER, SJOB, NSAMPLES = sys.argv[1:7]
PORT, PID, SJOB, NSAMPLES = int(PORT), int(PID), int(SJOB), int(NSAMPLES)
MIB = 1 << 20


def ok(cond, name, why=""):
    print(("ok - %s" % name) if cond else ("not ok - %s # %s" % (name, why)), flush=True)


def vm(key):
    """VmRSS or VmHWM of the daemon, in KiB."""
    with open("/proc/%d/status" % PID) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def request(method, path, body=None, token=None, timeout=10):
    """(status, parsed JSON or None, seconds) of one request from 127.0.0.1."""
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=timeout)
    h = {"Content-Type": "application/json"}
    if token:
        h["Authorization"] = "Bearer " + token
    t0 = time.monotonic()
    try:
        c.request(method, "/api/v1" + path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        try:
            doc = json.loads(data)
        except ValueError:
            doc = None
        return r.status, doc, time.monotonic() - t0
    except OSError as e:
        return 0, {"exception": str(e)}, time.monotonic() - t0
    finally:
        c.close()


def raw(src, timeout=5):
    s = socket.socket()
    s.settimeout(timeout)
    s.bind((src, 0))
    s.connect(("127.0.0.1", PORT))
    return s


def status_of(s, deadline):
    """The status of the answer on s, 0 when closed without one, None when
    nothing came before the deadline."""
    data = b""
    while b"\r\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        s.settimeout(left)
        try:
            chunk = s.recv(4096)
        except socket.timeout:
            return None
        except OSError:
            return 0
        if not chunk:
            return 0
        data += chunk
    return int(data.split(b" ")[1])


def health_ok():
    st, doc, secs = request("GET", "/health", timeout=5)
    return st == 200 and doc and doc.get("status") == "ok", secs


# 1. an unauthenticated POST is answered from its headers, its body unread
s = raw("127.0.0.2")
s.sendall(b"POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          b"Content-Length: %d\r\n\r\n" % MIB + b"{" + b" " * 16383)
t0 = time.monotonic()
st = status_of(s, t0 + 3)
s.close()
ok(st == 401, "an unauthenticated 1 MiB POST is answered 401 before its body is sent",
   "status %s within 3 s of 16 KiB of the body" % st)


def upload(i, out, parked, done):
    """Sends all of a 1 MiB body but its last byte, waits for the others,
    then sends it and reads the answer."""
    body = b"{" + b" " * (MIB - 1)
    try:
        s = raw("127.0.0.%d" % (10 + i % 8), timeout=10)
        s.sendall(b"POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % MIB)
        for off in range(0, MIB - 1, 65536):
            s.sendall(body[off:min(off + 65536, MIB - 1)])
    except OSError:
        out[i] = "reset"	# the daemon closed while the body was still coming
    parked.release()
    done.wait(20)
    if out[i] is None:
        try:
            s.sendall(body[-1:])
            out[i] = status_of(s, time.monotonic() + 10)
        except OSError:
            out[i] = "reset"
    s.close()


# all 50 held open with their bodies sent (but a byte) while the daemon's
# memory is watched: a daemon that buffers them holds 50 MiB
hwm0, rss0 = vm("VmHWM"), vm("VmRSS")
out = [None] * 50
parked, done = threading.Semaphore(0), threading.Event()
threads = [threading.Thread(target=upload, args=(i, out, parked, done)) for i in range(50)]
for t in threads:
    t.start()
for t in threads:
    parked.acquire(timeout=20)
grew, t0 = 0, time.monotonic()
while time.monotonic() - t0 < 2:
    grew = max(grew, vm("VmHWM") - hwm0, vm("VmRSS") - rss0)
    time.sleep(0.05)	# pacing the samples of RSS, not waiting for an event
done.set()
for t in threads:
    t.join(30)
grew = max(grew, vm("VmHWM") - hwm0, vm("VmRSS") - rss0)
bad = [o for o in out if o not in (401, 0, "reset")]
ok(not bad and grew < 8 * 1024,
   "50 unauthenticated 1 MiB uploads held open together: all refused, the daemon's peak RSS grew %d KiB "
   "(bound 8 MiB)" % grew, "answers %s, grew %d KiB" % (sorted(set(map(str, out))), grew))

# 2. one address holds at most max_connections_per_address (16) connections
socks = []
for i in range(30):
    s = raw("127.0.0.3")
    s.sendall(b"GET /api/v1/health HTTP/1.1\r\n")	# and nothing more
    socks.append(s)
# those over the limit are closed at once; the rest stay open (until the
# 2 s header deadline): count the closed ones for 1 s
deadline = time.monotonic() + 1
open_ = list(socks)
closed = 0
while open_ and time.monotonic() < deadline:
    ready, _, _ = select.select(open_, [], [], max(0, deadline - time.monotonic()))
    for s in ready:
        open_.remove(s)
        try:
            closed += s.recv(4096) == b""
        except OSError:
            closed += 1
good, _ = health_ok()
ok(closed == 14 and good, "30 connections from one address: 14 over the limit of 16 are closed, "
   "/health from another still answers", "%d closed, health %s" % (closed, good))
for s in socks:
    s.close()

# 3. a request whose headers trickle in is cut at header_timeout (2 s)
s = raw("127.0.0.4", timeout=1)
s.sendall(b"GET /api/v1/health HTTP/1.1\r\n")
t0 = time.monotonic()
cut_at, lat = None, []
while time.monotonic() - t0 < 8 and cut_at is None:
    try:
        s.sendall(b"X-Slow: 1\r\n")
        s.settimeout(0.4)
        if s.recv(4096) == b"":
            cut_at = time.monotonic() - t0
    except socket.timeout:
        pass
    except OSError:
        cut_at = time.monotonic() - t0
    good, secs = health_ok()
    lat.append(secs if good else 99)
s.close()
ok(cut_at is not None and 1.5 <= cut_at <= 4.5 and max(lat) < 2,
   "a request sending a header line every 0.4 s is cut at the 2 s header deadline (after %.1f s), "
   "/health answering meanwhile" % (cut_at or -1),
   "cut after %s s, slowest /health %.2f s" % (cut_at, max(lat or [99])))

# 4. samples come in pages of at most 5000, with the next page's cursor
st, doc, _ = request("GET", "/jobs/%d/samples" % SJOB)
first = len(doc.get("samples", [])) if st == 200 and doc else -1
ok(first == 5000 and doc.get("next"), "GET samples of a job with %d gives 5000 and a next cursor"
   % NSAMPLES, "status %d, %d samples, next %s" % (st, first, (doc or {}).get("next")))
seen, after, pages = 0, 0, 0
while pages < 10:
    st, doc, _ = request("GET", "/jobs/%d/samples?after=%d" % (SJOB, after))
    if st != 200:
        break
    seen += len(doc.get("samples", []))
    pages += 1
    if doc.get("next") is None:
        break
    after = doc["next"]
ok(seen == NSAMPLES and pages == 3, "following next gives every sample once, in 3 pages",
   "%d samples in %d pages" % (seen, pages))
st, doc, _ = request("GET", "/jobs/%d/samples?limit=100" % SJOB)
st2, _, _ = request("GET", "/jobs/%d/samples?limit=5001" % SJOB)
ok(st == 200 and len(doc["samples"]) == 100 and st2 == 400, "limit=100 gives 100, limit=5001 is a 400",
   "%d (%d samples), %d" % (st, len((doc or {}).get("samples", [])), st2))

# 5. a query of too many arguments is answered 414 at once
res = []
for n in (64, 65, 460, 2000):
    q = "&".join("a%d=1" % i for i in range(n))
    st, _, secs = request("GET", "/jobs?" + q, timeout=5)
    res.append((n, st, round(secs, 2)))
ok([r[1] for r in res] == [200, 414, 414, 414] and max(r[2] for r in res) < 2,
   "64 query arguments are served, 65, 460 and 2000 answered 414 within 2 s", "%s" % res)

# 6. the response cache cannot be poisoned through an escaped '&'
st1, d1, _ = request("GET", "/jobs?submitter=mallory%26limit%3D1")
st2, d2, _ = request("GET", "/jobs?submitter=mallory&limit=1")
ok(st1 == 200 and d1["jobs"] == [] and st2 == 200 and [j["id"] for j in d2["jobs"]] == [1],
   "?submitter=mallory%26limit%3D1 does not answer for ?submitter=mallory&limit=1",
   "%s then %s" % (d1, d2))

# 7. what one token may queue
sts = [request("POST", "/jobs", json.dumps({"suite": "hold"}), TOKEN)[0] for _ in range(2)]
st, doc, _ = request("POST", "/jobs", json.dumps({"suite": "hold"}), TOKEN)
msg = ((doc or {}).get("error") or {}).get("message", "")
ok(sts == [201, 201] and st == 429 and "lab.max_jobs_per_token" in msg,
   "a token's third job over max_jobs_per_token 2 gets 429 naming the limit", "%s then %d: %s" % (sts, st, msg))
st, _, _ = request("POST", "/jobs", json.dumps({"suite": "hold"}), OTHER)
ok(st == 201, "another token still submits", "status %d" % st)
ab = {"suite": "hold", "tree": "linux", "base": "v6.1", "patch": "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"}
st, doc, _ = request("POST", "/jobs", json.dumps(dict(ab, boots=5)), OTHER)
msg = ((doc or {}).get("error") or {}).get("message", "")
ok(st == 429 and "lab.max_boots_per_token" in msg,
   "an A/B job of 10 boots over max_boots_per_token 9 gets 429 naming the limit", "%d: %s" % (st, msg))

# 8. a per-patch series counts every one of its jobs: OTHER has one job
# queued, so the second job of a series of 3 would be its third; the
# series is refused whole, and none of its jobs is stored
def series(n):
    mails = []
    for k in range(1, n + 1):
        mails.append("From %040d Mon Sep 17 00:00:00 2001\nFrom: t0080 <t@localhost>\n"
                     "Subject: [PATCH %d/%d] x%d: a change\n\n---\ndiff --git a/x%d b/x%d\n--- a/x%d\n+++ b/x%d\n"
                     "@@ -1 +1 @@\n-a\n+b\n-- \n2.39.5\n\n" % (k, k, n, k, k, k, k, k))
    return "".join(mails)
st0, before, _ = request("GET", "/jobs?limit=100")
st, doc, _ = request("POST", "/jobs", json.dumps(dict(ab, patch=series(3), per_patch=True, boots=1)), OTHER)
msg = ((doc or {}).get("error") or {}).get("message", "")
st1, after, _ = request("GET", "/jobs?limit=100")
ids = lambda d: sorted(j["id"] for j in (d or {}).get("jobs", []))
ok(st == 429 and msg.startswith("the series' jobs: this token has 2 jobs") and "lab.max_jobs_per_token" in msg,
   "a per-patch series of 3 whose second job would pass max_jobs_per_token gets 429, the series named", "%d: %s" % (st, msg))
ok(st0 == st1 == 200 and ids(before) == ids(after) and ids(before),
   "and none of the series' jobs is stored (%d jobs before and after)" % len(ids(before)),
   "%s then %s" % (ids(before), ids(after)))

# 9. a bisection's body is read as the job's is: boots is checked as the
# integer sent, not as what is left of it in an int (4294967298 was taken
# as 2), and a refusal names an unknown field in at most 64 characters
bis = {"tree": "linux", "good": "v6.1", "bad": "v6.2", "suite": "hold", "metric": "mprotect.ops_per_sec"}
st, doc, _ = request("POST", "/bisections", json.dumps(dict(bis, boots=4294967298)), TOKEN)
msg = ((doc or {}).get("error") or {}).get("message", "")
ok(st == 400 and msg == "boots: must be an integer from 1 to 20",
   "a bisection of 4294967298 boots per step is a 400", "%d: %s" % (st, msg or doc))
st, doc, _ = request("POST", "/bisections", json.dumps(dict(bis, **{"x" * 100000: 1})), TOKEN)
msg = ((doc or {}).get("error") or {}).get("message", "")
ok(st == 400 and msg.startswith("x" * 64 + ": not a field of a bisection") and len(msg) < 300,
   "a bisection with a field named by 100000 characters is a 400 that names 64 of them",
   "%d: %d characters: %.100s" % (st, len(msg), msg or doc))
