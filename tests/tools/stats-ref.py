#!/usr/bin/python3
"""Reference answers for daemon/stats, from scipy and numpy.

    stats-ref.py gen CASES.jsonl
        writes the test vectors (fixed seed, so every run checks the same ones)
    stats-ref.py compare CASES.jsonl C.jsonl [BOOT.jsonl RESAMPLES SEED]
        compares stats-cli's answers with scipy's and prints one line per
        family: "FAMILY<TAB>ok|fail<TAB>message"; exits 1 when one fails.
        With BOOT.jsonl (stats-cli --resamples RESAMPLES --seed SEED on the
        same cases), the bootstrap intervals are recomputed from the same
        random stream (xoshiro256** seeded by splitmix64) with numpy's median
        and percentile, which must agree to the last bits.

Run with /usr/bin/python3: Debian's python3-scipy (1.10) and python3-numpy.
Mann-Whitney: method="exact" where daemon/stats promises it (no ties in the
pooled sample, both sides <= 50); with ties and both sides <= 50, the
permutation test of |midrank sum - its mean| (scipy's midranks, every split
enumerated when there are at most 50,000, else 20,000 random ones with a
Monte-Carlo tolerance of 5 standard errors); else "asymptotic"
with continuity correction. Tolerances: 1e-9 relative for statistics, 1e-7 for p-values,
plus an absolute floor of 1e-12 times the data's magnitude where the exact
answer is 0 and both sides only see rounding noise (the std of a constant
sample: numpy says 1.7e-17 for seven 0.1s, stats says 0). Reported deviations are
relative to max(|reference|, floor / tolerance).
"""
import itertools
import json
import math
import random
import sys
import warnings

import numpy as np
from scipy import stats as st

EXACT_MAX = 50
REL_STAT = 1e-9
REL_P = 1e-7
M64 = (1 << 64) - 1


def gen(path):
    rng = random.Random(20240611)
    cases = []

    def add(kind, a, b):
        cases.append({"id": len(cases), "kind": kind, "a": a, "b": b})

    def draw(dist, n, loc=100.0, scale=5.0):
        if dist == "normal":
            return [rng.gauss(loc, scale) for _ in range(n)]
        if dist == "lognormal":
            return [loc * rng.lognormvariate(0, 0.3) for _ in range(n)]
        if dist == "cauchy":  # heavy tails, occasional wild values
            return [loc + scale * math.tan(math.pi * (rng.random() - 0.5)) for _ in range(n)]
        if dist == "pareto":
            return [loc * rng.paretovariate(1.5) for _ in range(n)]
        return [loc + scale * rng.random() for _ in range(n)]

    dists = ["normal", "lognormal", "cauchy", "pareto", "uniform"]
    # continuous, no ties: the exact path (sizes 2..50), shifted or not
    for _ in range(110):
        na, nb = rng.randint(2, 50), rng.randint(2, 50)
        d = rng.choice(dists)
        shift = rng.choice([0.0, 0.0, 0.02, 0.1, 0.5])
        add("exact", draw(d, na), draw(d, nb, loc=100.0 * (1 + shift)))
    # n = 2 against n = 2..5, and very small p with full separation
    for _ in range(20):
        add("tiny", draw("normal", 2), draw("normal", rng.randint(2, 5)))
    for n in (5, 10, 20, 35, 50):
        add("separated", [1.0 + i for i in range(n)], [1000.0 + i for i in range(n)])
    # beyond the exact range without ties (51..60 on at least one side)
    for _ in range(40):
        na, nb = rng.randint(2, 60), rng.randint(51, 60)
        if rng.random() < 0.5:
            na, nb = nb, na
        d = rng.choice(dists)
        add("large", draw(d, na), draw(d, nb, loc=rng.choice([100.0, 103.0, 130.0])))
    # ties: values rounded to a coarse grid (counters, integer timings)
    for _ in range(80):
        na, nb = rng.randint(2, 60), rng.randint(2, 60)
        grid = rng.choice([1.0, 0.5, 5.0])
        shift = rng.choice([0.0, 3.0, 10.0])
        add("ties", [round(x / grid) * grid for x in draw("normal", na)],
            [round(x / grid) * grid for x in draw("normal", nb, loc=100.0 + shift)])
    # the same sample on both sides, in the same order and shuffled
    for _ in range(15):
        a = draw(rng.choice(dists), rng.randint(2, 40))
        b = list(a)
        if rng.random() < 0.5:
            rng.shuffle(b)
        add("equal", a, b)
    # constant sides: one, both equal, both different; awkward constants
    for c in (0.1, 1234.5, 3.0, 1e6 + 0.1):
        add("constant", [c] * rng.randint(2, 9), draw("normal", rng.randint(2, 9), loc=c))
        add("constant", draw("normal", rng.randint(2, 9), loc=c), [c] * 7)
        add("constant", [c] * 5, [c] * 3)
        add("constant", [c] * 4, [c * 2] * 6)
    # big magnitudes with small relative spread (ops/sec), and negatives
    for _ in range(15):
        add("scale", draw("normal", rng.randint(3, 30), loc=2.5e6, scale=1e3),
            draw("normal", rng.randint(3, 30), loc=2.51e6, scale=1e3))
    for _ in range(10):
        add("negative", draw("normal", rng.randint(2, 30), loc=0.0, scale=1.0),
            draw("normal", rng.randint(2, 30), loc=0.5, scale=2.0))
    # sides of one value, or none
    add("small", [1.0], [2.0, 3.0])
    add("small", [5.0, 6.0], [7.0])
    add("small", [1.0], [1.0])
    add("small", [], [1.0, 2.0])
    add("small", [1.0, 2.0], [])
    with open(path, "w") as f:
        for c in cases:
            f.write(json.dumps(c) + "\n")


class Family:
    def __init__(self, name):
        self.name = name
        self.against = "scipy"
        self.n = 0
        self.skipped = 0
        self.bad = []
        self.maxdev = {}

    def close(self, case, what, got, want, rel, floor=0.0):
        """got within rel of want, or within the absolute floor of it"""
        if got is None or want is None or not math.isfinite(want):
            if not (got is None and (want is None or not math.isfinite(want))):
                self.bad.append(f"case {case}: {what} = {got}, want {want}")
            return
        # floor: rounding noise of the inputs' magnitude, allowed on top
        # of the relative tolerance (answers that are exactly 0 in one
        # implementation and 1e-17 in the other)
        dev = abs(got - want) / max(abs(want), floor / rel, 1e-300)
        self.maxdev[what] = max(self.maxdev.get(what, 0.0), dev)
        if dev > rel:
            self.bad.append(f"case {case}: {what} = {got!r}, want {want!r} (rel {dev:.3g})")

    def same(self, case, what, got, want):
        if got != want:
            self.bad.append(f"case {case}: {what} = {got!r}, want {want!r}")

    def report(self):
        devs = ", ".join(f"{k} {v:.2g}" for k, v in sorted(self.maxdev.items()))
        msg = f"{self.name}: {self.n} vectors agree with {self.against}"
        if self.skipped:
            msg += f" ({self.skipped} skipped)"
        if devs:
            msg += f"; max relative deviation: {devs}"
        if self.bad:
            why = f"{len(self.bad)} mismatches of {self.n}: " + "; ".join(self.bad[:3])
            print(f"{self.name}\tfail\t{self.name}: {why}")
            return False
        print(f"{self.name}\tok\t{msg}")
        return True


def permutation_p(a, b):
    """P(|S - E S| >= |s - E S|) over the splits of the pooled values, S the
    midrank sum of the first side: (p, 0) when every split was enumerated
    (at most 50,000), else (p, tolerance) from 20,000 random splits."""
    na, n = len(a), len(a) + len(b)
    ranks = st.rankdata(np.array(a + b, dtype=float))
    mean = na * (n + 1) / 2.0
    obs = abs(ranks[:na].sum() - mean)
    total = math.comb(n, na)
    if total <= 50000:
        idx = np.array(list(itertools.combinations(range(n), na)))
        dev = np.abs(ranks[idx].sum(axis=1) - mean)
        return float(np.count_nonzero(dev >= obs - 1e-9)) / total, 0.0
    k = 20000
    rng = np.random.default_rng(1)
    idx = np.argsort(rng.random((k, n)), axis=1)[:, :na]
    dev = np.abs(ranks[idx].sum(axis=1) - mean)
    p = float(np.count_nonzero(dev >= obs - 1e-9)) / k
    return p, 5 * math.sqrt(max(p * (1 - p), 1e-4) / k) + 2.0 / k


def compare(cases_path, c_path):
    cases = [json.loads(l) for l in open(cases_path)]
    got = {o["id"]: o for o in (json.loads(l) for l in open(c_path))}
    exact, asym = Family("mann-whitney exact"), Family("mann-whitney asymptotic")
    perm = Family("mann-whitney permutation (ties)")
    perm.against = "the splits enumerated (or 20,000 drawn) in numpy"
    desc = Family("descriptive")
    missing = [c["id"] for c in cases if c["id"] not in got]
    if missing:
        for f in (exact, asym, perm, desc):
            f.bad.append(f"stats-cli gave no answer for {len(missing)} cases, e.g. {missing[:3]}")

    for c in cases:
        if c["id"] not in got:
            continue
        a, b, o, i = c["a"], c["b"], got[c["id"]], c["id"]
        scale = max([abs(x) for x in a + b] or [1.0])

        # -- Mann-Whitney --
        if not a or not b:
            asym.n += 1
            asym.same(i, "mw error", o["mw"].get("error"), "EINVAL")
        else:
            ties = len(set(a + b)) < len(a) + len(b)
            small = max(len(a), len(b)) <= EXACT_MAX
            method = ("permutation" if ties else "exact") if small else "asymptotic"
            fam = {"exact": exact, "permutation": perm}.get(method, asym)
            fam.n += 1
            if method == "permutation":
                r = st.mannwhitneyu(a, b, alternative="two-sided", method="asymptotic")
                fam.same(i, "mw method", o["mw"].get("method"), method)
                fam.close(i, "U", o["mw"].get("u"), float(r.statistic), REL_STAT)
                want, tol = permutation_p(a, b)
                gp = o["mw"].get("p")
                if tol == 0:
                    fam.close(i, "p", gp, want, REL_P)
                elif gp is None or abs(gp - want) > tol:
                    fam.bad.append(f"case {i}: p = {gp!r}, Monte-Carlo {want!r} +- {tol:.2g}")
                continue
            if method == "exact":
                r = st.mannwhitneyu(a, b, alternative="two-sided", method="exact")
            else:
                r = st.mannwhitneyu(a, b, alternative="two-sided", method="asymptotic",
                                    use_continuity=True)
            fam.same(i, "mw method", o["mw"].get("method"), method)
            fam.close(i, "U", o["mw"].get("u"), float(r.statistic), REL_STAT)
            fam.close(i, "p", o["mw"].get("p"), float(r.pvalue), REL_P)

        # -- descriptive --
        for side, v in (("a", a), ("b", b)):
            desc.n += 1
            d = o[side]
            desc.same(i, f"{side}.n", d["n"], len(v))
            if not v:
                for k in ("mean", "median", "std"):
                    desc.same(i, f"{side}.{k}", d[k], None)
                continue
            floor = 1e-12 * scale
            desc.close(i, "mean", d["mean"], float(np.mean(v)), REL_STAT, floor)
            desc.close(i, "median", d["median"], float(np.median(v)), REL_STAT)
            if len(v) < 2:
                desc.same(i, f"{side}.std", d["std"], None)
                continue
            sd = float(np.std(v, ddof=1))
            desc.close(i, "std", d["std"], sd, REL_STAT, floor)

    ok = [f.report() for f in (exact, perm, asym, desc)]
    return all(ok)


# -- the bootstrap's random stream, as daemon/analysis/stats.c draws it --

def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & M64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return x, z ^ (z >> 31)


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M64


class Xoshiro:
    def __init__(self, seed):
        self.s = []
        for _ in range(4):
            seed, z = splitmix64(seed)
            self.s.append(z)

    def next(self):
        s = self.s
        res = (rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return res

    def below(self, bound):
        lim = (1 << 64) % bound
        while True:
            x = self.next()
            if x >= lim:
                return x % bound


def boot_ci(a, b, resamples, seed, level=0.95):
    rng = Xoshiro(seed)
    a, b = np.array(a), np.array(b)
    ratios = []
    for _ in range(resamples):
        ia = [rng.below(len(a)) for _ in range(len(a))]
        ib = [rng.below(len(b)) for _ in range(len(b))]
        ma, mb = np.median(a[ia]), np.median(b[ib])
        if ma == 0:
            return None
        ratios.append(mb / ma)
    lo, hi = np.percentile(ratios, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    return float(lo), float(hi)


def compare_boot(cases_path, boot_path, resamples, seed):
    cases = {c["id"]: c for c in (json.loads(l) for l in open(cases_path))}
    fam = Family("bootstrap")
    fam.against = "a numpy replay of the same random stream"
    contains = 0
    for l in open(boot_path):
        o = json.loads(l)
        c = cases[o["id"]]
        if not c["a"] or not c["b"]:
            continue
        fam.n += 1
        want = boot_ci(c["a"], c["b"], resamples, seed)
        if want is None:
            fam.same(o["id"], "boot error", o["boot"].get("error"), "EDOM")
            continue
        if "error" in o["boot"]:
            fam.bad.append(f"case {o['id']}: boot error {o['boot']['error']}")
            continue
        fam.close(o["id"], "lo", o["boot"]["lo"], want[0], 1e-12)
        fam.close(o["id"], "hi", o["boot"]["hi"], want[1], 1e-12)
        ratio = np.median(c["b"]) / np.median(c["a"])
        contains += o["boot"]["lo"] <= ratio <= o["boot"]["hi"]
    fam.name = f"bootstrap ({resamples} resamples; observed ratio inside {contains}/{fam.n})"
    return fam.report()


def main():
    warnings.simplefilter("ignore")
    if len(sys.argv) == 3 and sys.argv[1] == "gen":
        gen(sys.argv[2])
        return 0
    if len(sys.argv) in (4, 7) and sys.argv[1] == "compare":
        ok = compare(sys.argv[2], sys.argv[3])
        if len(sys.argv) == 7:
            ok = compare_boot(sys.argv[2], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])) and ok
        return 0 if ok else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
