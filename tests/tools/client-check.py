#!/usr/bin/python3
"""Checks what `tlblab results` and `tlblab compare` printed against the
daemon's own answer, worked out here independently (t0020).

  client-check.py results TEXT JSON [--all]
      JSON is `tlblab results --json` ({"runs", "metrics"}). Every measured
      (spec, case) of every machine and side is a block, base blocks before
      patched ones, whose metric rows hold the median, min, max and count of
      the metric over the block's measured runs; per-CPU metrics (".cpu" in
      the name) only with --all, else counted in the "hidden" line.
  client-check.py compare TEXT JSON [--all]
      JSON is the daemon's {"comparison": ...}. The summary line is the
      daemon's text; every row that is not folded (same, context, or a counter that
      moved less than the counter threshold) is a table line with its
      workload, metric, change and verdict, and no other line is; the folded
      count, each sweep row, the boots per side and every note are shown.

Prints what does not match and exits 1; exits 0 when all does.
"""
import json
import math
import re
import sys


def fmt_number(v):
    """The client's client_fmt_number(): what a value looks like in a table."""
    a = abs(v)
    if not math.isfinite(v):
        return "%g" % v
    if a < 1e15 and v == round(v):
        return "%.0f" % v
    if a >= 1e15 or a < 1e-3:
        return "%.4g" % v
    if a >= 1000:
        return "%.1f" % v
    return "%.4g" % v


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def check_results(text, doc, show_all):
    errors = []
    runs = [r for r in doc["runs"] if not r["warmup"]]
    groups, of_run = [], {}
    for r in runs:
        key = (r["machine"], r["side"], r["spec"], r["case"])
        if key not in groups:
            groups.append(key)
        of_run[r["id"]] = key
    rank = {None: 0, "": 0, "base": 1, "patched": 2}
    groups.sort(key=lambda g: rank.get(g[1], 3))    # stable: appearance order within a side
    values, hidden = {}, set()
    for m in doc["metrics"]:
        if m["run"] not in of_run:
            continue
        if ".cpu" in m["name"] and not show_all:
            hidden.add(m["name"])
            continue
        values.setdefault(of_run[m["run"]], {}).setdefault(m["name"], []).append(m["value"])

    headers = [(i, l) for i, l in enumerate(text) if l.startswith("spec ")]
    if len(headers) != len(groups):
        errors.append("%d blocks printed, the daemon's runs make %d" % (len(headers), len(groups)))
    for (at, head), g in zip(headers, groups):
        machine, side, spec, case = g
        want = "spec %s, case %s: " % (spec, case)
        if not head.startswith(want) or (machine and " on %s" % machine not in head) or \
                (side and not head.endswith("(%s)" % side)):
            errors.append("block %r is not %r on %s (%s)" % (head, want, machine, side))
        rows = {}
        for line in text[at + 1:]:
            if line.startswith("  params:"):
                continue
            if not line.startswith("  "):
                break
            f = line.split()
            if f[0] != "METRIC":
                rows[f[0]] = f[1:]
        for name, xs in sorted(values.get(g, {}).items()):
            want = [fmt_number(median(xs)), fmt_number(min(xs)), fmt_number(max(xs)), str(len(xs))]
            got = rows.pop(name, None)
            if got is None or got[:4] != want:
                errors.append("%s: %s: printed %s, the daemon's runs give %s" % (head, name, got, want))
        for name in rows:
            errors.append("%s: %s printed, but the daemon has no such measured metric" % (head, name))
    n = len(hidden)
    line = "(%d per-CPU metric%s hidden; --all shows %s)" % (n, "" if n == 1 else "s", "it" if n == 1 else "them")
    if n and line not in text:
        errors.append("missing %r" % line)
    if not n and any("hidden" in l for l in text):
        errors.append("a hidden line, but no per-CPU metric is hidden")
    return errors


def pct(v):
    return "-" if v is None else "%+.1f%%" % v


def folded(row, counter_pct):
    if row["verdict"] in ("same", "context"):
        return True
    if row["headline"] or row["verdict"] != "inconclusive":
        return False
    return row["change_pct"] is not None and abs(row["change_pct"]) < counter_pct


def check_compare(text, doc, show_all):
    errors = []
    cmp = doc["comparison"]
    summary = [l for l in text if l.startswith("summary: ")]
    if summary[:1] != ["summary: " + cmp["summary"]["text"]]:
        errors.append("the summary line is not the daemon's summary: %r" % summary[:1])
    # the daemon's classes, each with its legend (rules.classes)
    want = "classes: " + "; ".join("%s: %s" % (c["name"], c["legend"]) for c in cmp["rules"]["classes"])
    if want not in text:
        errors.append("the classes line is not the daemon's: %r" % [l for l in text if l.startswith("classes")][:1])
    counter_pct = cmp["rules"]["min_change_counter"] * 100
    shown = [r for r in cmp["rows"] if show_all or not folded(r, counter_pct)]
    try:
        start = next(i for i, l in enumerate(text) if l.startswith("WORKLOAD "))
    except StopIteration:
        return errors + ["no table of rows"]
    table = []
    for line in text[start + 1:]:
        if not line or line.startswith("("):
            break
        table.append(line)
    if len(table) != len(shown):
        errors.append("%d table rows, the daemon's comparison has %d to show" % (len(table), len(shown)))
    for line, r in zip(table, shown):
        verdict = r["verdict"] + (" (%s)" % r["reason"] if r.get("reason") else "")
        pattern = r"^%s +.* +%s +%s +.* +%s +.*  %s$" % (re.escape(r["workload"]), re.escape(r["metric"]),
                                                       re.escape(r.get("class", "-")),
                                                       re.escape(pct(r["change_pct"])), re.escape(verdict))
        if not re.match(pattern, line):
            errors.append("row %r is not %s %s %s %s" % (line, r["workload"], r["metric"],
                                                          pct(r["change_pct"]), verdict))
    nfolded = len(cmp["rows"]) - len(shown)
    if nfolded:
        want = ("(%d rows folded: same, context (not tested), or counters that moved less than %g%%; "
                "--all shows them)" % (nfolded, counter_pct))
        if want not in text:
            errors.append("missing %r" % want)
    elif any("folded" in l for l in text):
        errors.append("a folded line, but nothing is folded")
    for sw in cmp["sweeps"]:
        for r in sw["rows"]:
            cells = [str(r["workers"]), "-" if r["base"] is None else fmt_number(r["base"]),
                     "-" if r["patched"] is None else fmt_number(r["patched"]), pct(r["change_pct"]), r["verdict"]]
            if not any(l.split() == cells for l in text):
                errors.append("no sweep row %s" % cells)
    for side in ("base", "patched"):
        n = cmp["provenance"]["boots"][side]
        if not any(l.startswith("  %-8s " % side) and " %d boot%s on " % (n, "" if n == 1 else "s") in l
                   for l in text):
            errors.append("no provenance line of %s with %d boots" % (side, n))
    for note in cmp["notes"]:
        if "  " + note not in text:
            errors.append("note not shown: %r" % note)
    symbols = [s["symbol"] for s in cmp["profile_diff"]["symbols"]]
    printed = [l.split()[0] for l in text if l.startswith("  ") and l.split() and l.split()[0] in symbols]
    if printed != symbols:
        errors.append("profile symbols %s, the daemon's order is %s" % (printed, symbols))
    return errors


def main():
    what, text_file, json_file = sys.argv[1:4]
    show_all = "--all" in sys.argv[4:]
    text = open(text_file, encoding="utf-8").read().splitlines()
    doc = json.load(open(json_file, encoding="utf-8"))
    errors = (check_results if what == "results" else check_compare)(text, doc, show_all)
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
