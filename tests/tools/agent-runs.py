#!/usr/bin/python3
"""Turns tlblab-agent output into the input of tests/tools/compare-cli: the
agent's iteration lines as the API's runs and metrics, each agent run
standing for one boot of a side.

usage: agent-runs.py BASE_SIDE PATCHED_SIDE [--drop-param NAME] SIDE:BOOT:FILE...
"""
import json
import sys


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    base_side, patched_side, rest = argv[0], argv[1], argv[2:]
    drop = None
    if rest[:1] == ["--drop-param"]:
        drop, rest = rest[1], rest[2:]
    runs, metrics = [], []
    for stage, arg in enumerate(rest, 1):
        side, boot, path = arg.split(":", 2)
        for line in open(path):
            o = json.loads(line)
            if o["type"] != "iteration":
                continue
            rid = len(runs) + 1
            params = {k: v for k, v in o["params"].items() if k != drop}
            runs.append({"id": rid, "stage": stage, "machine": "local", "side": side, "spec": 0,
                         "case": o["case"], "iteration": o["iteration"], "warmup": o["warmup"],
                         "workload": params["workload"], "params": params, "duration_s": o["duration_s"],
                         "build_id": None, "boot_id": boot})
            for name, value in o["metrics"].items():
                info = o["info"].get(name, {})
                metrics.append({"run": rid, "name": name, "value": value, "unit": info.get("unit"),
                                "direction": info.get("direction", "neutral")})
    doc = {"runs": runs, "metrics": metrics, "profiles": [], "provenance": {"host": "this machine"}}
    print(json.dumps({"base": doc, "patched": doc, "base_side": base_side, "patched_side": patched_side}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
