#!/usr/bin/env python3
"""What a token may change of what others made, and what a reader without a
token sees, against a real tlblabd (t0080, its second daemon):

  api-owners.py PORT A B C ADMIN

A, B and C are user tokens, ADMIN an admin token (lab.admin_tokens); the
lab has max_jobs_per_token 1 and max_boots_per_token 4, a machine m1, the
suite "hold" (a run that holds m1 until cancelled), a builder whose
build.sh prints the URL it would fetch and hangs (so a bisection stays
"asking the builder" and a build stays running), alert 1 (the tracker's)
and delivery 1, of a hook whose URL's path is its secret, seeded. Prints
TAP lines ("ok - ..." / "not ok - ... # why").
"""
import http.client
import json
import sys
import threading
import time

PORT = int(sys.argv[1])
A, B, C, ADMIN = sys.argv[2:6]
SECRET = "s3cret"


def ok(cond, name, why=""):
    print(("ok - %s" % name) if cond else ("not ok - %s # %s" % (name, why)), flush=True)


def request(method, path, body=None, token=None, raw=False):
    """(status, parsed JSON, or the text with raw) of one request."""
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=10)
    h = {"Content-Type": "application/json"}
    if token:
        h["Authorization"] = "Bearer " + token
    c.request(method, "/api/v1" + path, body=None if body is None else json.dumps(body), headers=h)
    r = c.getresponse()
    data = r.read().decode("utf-8", "replace")
    c.close()
    if raw:
        return r.status, data
    try:
        return r.status, json.loads(data)
    except ValueError:
        return r.status, None


def message(doc):
    return ((doc or {}).get("error") or {}).get("message", "")


def wait(what, cond, secs=30):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.2)
    print("# timed out waiting for %s" % what, flush=True)
    return False


def job(jid, token=None):
    return (request("GET", "/jobs/%d" % jid, token=token)[1] or {}).get("job") or {}


def bisection(bid):
    return request("GET", "/bisections/%d" % bid)[1] or {}


def running_bisections():
    return sorted(b["id"] for b in (request("GET", "/bisections?limit=500")[1] or {}).get("bisections", [])
                  if b["state"] == "running")


HOLD = {"suite": "hold"}
BISECT = {"tree": "linux", "good": "v1", "bad": "v2", "suite": "hold", "metric": "mprotect.ops_per_sec", "boots": 1}

# ---- 1. jobs: cancel needs the token that submitted it, or an admin's ----

st, doc = request("POST", "/jobs", HOLD, A)
ja = (doc or {}).get("job", {}).get("id", 0)
ok(st == 201, "token A submits a job", "%d %s" % (st, doc))
st, doc = request("POST", "/jobs/%d/cancel" % ja, {}, B)
after = job(ja)
ok(st == 403 and (doc or {}).get("error", {}).get("code") == "forbidden" and
   message(doc) == "job %d was submitted by another token; cancel needs that token or an admin token" % ja and
   after.get("state") in ("queued", "running") and not after.get("cancel_requested"),
   "token B cannot cancel A's job: 403 naming why, and the job goes on (%s)" % after.get("state"),
   "%d %s; job %s" % (st, message(doc), after.get("state")))
st, doc = request("POST", "/jobs/%d/cancel" % ja, {}, A)
ok(st == 200 and wait("job %d cancelled" % ja, lambda: job(ja).get("state") == "cancelled"),
   "token A cancels its own job", "%d %s" % (st, message(doc)))
st, doc = request("POST", "/jobs", HOLD, A)
ja2 = (doc or {}).get("job", {}).get("id", 0)
st, doc = request("POST", "/jobs/%d/cancel" % ja2, {}, ADMIN)
ok(st == 200 and wait("job %d cancelled" % ja2, lambda: job(ja2).get("state") == "cancelled"),
   "an admin token cancels A's job", "%d %s" % (st, message(doc)))

# ---- 2. bisections: recorded, counted in the token's limits, cancelled by their token or an admin ----

before = running_bisections()
st, doc = request("POST", "/bisections", BISECT, A)
ba = (doc or {}).get("bisection", {}).get("id", 0)
ok(st == 201 and ba, "token A asks for a bisection", "%d %s" % (st, doc))
st, doc = request("POST", "/jobs", HOLD, A)
ok(st == 429 and "lab.max_jobs_per_token" in message(doc),
   "A's running bisection counts as one of its jobs: a job over max_jobs_per_token 1 gets 429",
   "%d %s" % (st, message(doc)))
st, doc = request("POST", "/bisections", BISECT, A)
ok(st == 429 and "lab.max_jobs_per_token" in message(doc) and running_bisections() == before + [ba],
   "a second bisection over A's limit gets 429, and nothing is stored", "%d %s; running %s" %
   (st, message(doc), running_bisections()))
st, doc = request("POST", "/bisections/%d/cancel" % ba, {}, B)
ok(st == 403 and message(doc) == "bisection %d was asked for by another token; cancel needs that token or an "
   "admin token" % ba and bisection(ba).get("state") == "running",
   "token B cannot cancel A's bisection: 403, and it runs on", "%d %s; %s" % (st, message(doc), bisection(ba).get("state")))
st, doc = request("POST", "/bisections/%d/cancel" % ba, {}, A)
ok(st == 200 and bisection(ba).get("state") == "cancelled", "token A cancels its own bisection",
   "%d %s" % (st, message(doc)))
st, doc = request("POST", "/bisections", BISECT, A)
ba2 = (doc or {}).get("bisection", {}).get("id", 0)
ok(st == 201, "once it ended, A's limit has room for another", "%d %s" % (st, message(doc)))
st, doc = request("POST", "/bisections/%d/cancel" % ba2, {}, ADMIN)
ok(st == 200 and bisection(ba2).get("state") == "cancelled", "an admin token cancels A's bisection",
   "%d %s" % (st, message(doc)))
before = running_bisections()
st, doc = request("POST", "/bisections", dict(BISECT, boots=5), A)
ok(st == 429 and "lab.max_boots_per_token" in message(doc) and running_bisections() == before,
   "a bisection whose steps take 5 boots, over max_boots_per_token 4, gets 429 and is not stored",
   "%d %s" % (st, message(doc)))

# ---- 3. two bisections at once against a limit of one: exactly one is taken ----

before = running_bisections()
go = threading.Barrier(2)
got = []


def ask():
    go.wait()
    got.append(request("POST", "/bisections", BISECT, C)[0])


threads = [threading.Thread(target=ask) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
now = running_bisections()
ok(sorted(got) == [201, 429] and len(now) == len(before) + 1,
   "two bisections of token C sent at once with max_jobs_per_token 1: one 201, one 429, one stored",
   "statuses %s; running before %s, after %s" % (got, before, now))

# ---- 4. alerts and machines are the lab's: an admin token's to change ----

st, doc = request("POST", "/alerts/1/state", {"state": "acknowledged", "by": "alice"}, A)
alert = request("GET", "/alerts/1")[1] or {}
ok(st == 403 and message(doc) == "alert 1 is the lab's (no token made it: a track, the tracker or a bisection "
   "did); setting its state needs an admin token" and alert.get("state") == "new",
   "a user token cannot acknowledge an alert: 403, still new", "%d %s; %s" % (st, message(doc), alert.get("state")))
st, doc = request("POST", "/alerts/1/state", {"state": "acknowledged", "by": "ops"}, ADMIN)
alert = request("GET", "/alerts/1")[1] or {}
ok(st == 200 and alert.get("state") == "acknowledged" and alert.get("state_by") == "ops",
   "an admin token acknowledges it", "%d %s; %s" % (st, message(doc), alert))
health = lambda: [m["health"] for m in request("GET", "/machines")[1]["machines"] if m["name"] == "m1"][0]
was = health()
st, doc = request("POST", "/machines/m1/health", {"health": "maintenance", "reason": "mine"}, A)
ok(st == 403 and message(doc) == "machine m1 is the lab's; setting its health needs an admin token" and
   health() == was, "a user token cannot take m1 out: 403, its health unchanged (%s)" % was,
   "%d %s; %s" % (st, message(doc), health()))
st, doc = request("POST", "/machines/m1/health", {"health": "maintenance", "reason": "ops"}, ADMIN)
ok(st == 200 and health() == "maintenance", "an admin token takes m1 out", "%d %s" % (st, message(doc)))
request("POST", "/machines/m1/health", {"health": "unknown"}, ADMIN)

# ---- 5. a URL the lab may not fetch from is refused when it is submitted ----

total = lambda: (request("GET", "/jobs?limit=1", token=ADMIN)[1] or {}).get("total")
n = total()
ab = {"suite": "hold", "tree": "linux", "base": "v1", "boots": 1}
st, doc = request("POST", "/jobs", dict(ab, branch={"url": "git://127.0.0.1:9418/linux.git", "ref": "tlb/fix"}), B)
ok(st == 400 and message(doc).startswith("branch.url: host 127.0.0.1: refused: 127.0.0.1 is a loopback address "
                                         "(not in lab.fetch_allow)") and total() == n,
   "a branch URL on loopback is refused (400 naming branch.url and its host), nothing stored",
   "%d %s" % (st, message(doc)))
st, doc = request("POST", "/jobs", dict(ab, url="http://10.1.2.3/fix.patch"), B)
ok(st == 400 and message(doc).startswith("url: host 10.1.2.3: refused: 10.1.2.3 is a private address") and
   total() == n, "a patch URL on a private address is refused the same way", "%d %s" % (st, message(doc)))

# ---- 6. a reader without a token sees URLs redacted; a token, all of them ----

url = "https://git.example.org/people/%s/linux.git" % SECRET
st, doc = request("POST", "/jobs", dict(ab, branch={"url": url, "ref": "tlb/fix"}), B)
jb = (doc or {}).get("job", {}).get("id", 0)
ok(st == 201, "a branch job of a public (or unresolved) host is taken", "%d %s" % (st, message(doc)))
# build.sh does not find the branch, and says so naming its URL
failed = wait("the branch job to fail", lambda: job(jb).get("state") == "failed", 60)


def build_log(token=None):
    """The log of the build of the patched side, the one that fetches."""
    sid = [s["id"] for s in job(jb, ADMIN).get("stages", []) if s["kind"] == "build" and s["side"] == "patched"]
    return request("GET", "/jobs/%d/stages/%s/log" % (jb, sid[0] if sid else 0), token=token, raw=True)[1]


st, text = request("GET", "/jobs/%d" % jb, raw=True)
pub = json.loads(text).get("job", {})
ok(failed and SECRET not in text and pub.get("patch_url") == "https://git.example.org/(redacted)" and
   pub.get("patch_subject") == "branch tlb/fix of https://git.example.org/(redacted)" and
   "cannot fetch tlb/fix from https://git.example.org/(redacted)" in (pub.get("error") or {}).get("message", ""),
   "GET /jobs/ID without a token: the branch URL redacted, in patch_url, the job's name and its error",
   "%s %d %s" % (failed, st, text[:600]))
ok(job(jb, C).get("patch_url") == url and url in json.dumps(job(jb, C)["error"]),
   "with any valid token, the whole URL", json.dumps(job(jb, C))[:300])
lists = [request("GET", "/jobs?limit=50", token=t, raw=True)[1] for t in (None, C, None)]
ok(SECRET not in lists[0] and SECRET in lists[1] and SECRET not in lists[2],
   "the job list: redacted without a token, whole with one, and the cached answers keep apart",
   "%s" % [SECRET in x for x in lists])
logs = [build_log(), build_log(C)]
ok(SECRET not in logs[0] and "fetching tlb/fix from https://git.example.org/(redacted)" in logs[0] and url in logs[1],
   "the build's log names the URL redacted without a token, whole with one", "%s" % logs)
st, text = request("GET", "/deliveries", raw=True)
d = (json.loads(text).get("deliveries") or [{}])[0]
ok(st == 200 and SECRET not in text and d.get("url") == "https://hooks.example.org/(redacted)" and
   "webhook https://hooks.example.org/(redacted): HTTP 500" in (d.get("last_error") or ""),
   "GET /deliveries without a token: the hook's URL redacted, in its errors too", text[:400])
st, text = request("GET", "/deliveries", token=C, raw=True)
ok(st == 200 and "https://hooks.example.org/services/T0/%s" % SECRET in text, "with a token, the whole hook URL",
   text[:300])
st, text = request("GET", "/tracks", raw=True)
ok(st == 200 and SECRET not in text and '"url":"https://git.example.org/(redacted)"' in text,
   "GET /tracks without a token: a track's tree URL redacted", text[:400])
st, doc = request("POST", "/jobs", dict(ab, url="https://lore.example.org/%s/raw" % SECRET), ADMIN)
ju = (doc or {}).get("job", {}).get("id", 0)
ended = wait("the mbox job to end", lambda: job(ju).get("state") in ("failed", "done", "cancelled"), 60)
st, text = request("GET", "/jobs/%d" % ju, raw=True)
pub = json.loads(text).get("job") or {}
ok(ended and SECRET not in text and pub.get("patch_url") == "https://lore.example.org/(redacted)" and
   pub.get("patch_subject") == "https://lore.example.org/(redacted)",
   "an mbox URL job (named by its URL until fetched): redacted without a token", "%s %s" % (ended, text[:500]))
