"""Assertions on a JSON file for tests/export/run-export.sh.

usage: python3 tests/export/check.py FILE EXPR [EXPR...]

Each EXPR is a Python expression that must be true. Names available:
  j        the parsed file
  ops      j["ops"] (exported workloads)           tensors  j["tensors"]
  types    Counter of op types                     of(T)    the ops of type T
  op(N)    the op named N                          t(N)     the tensor named N
  attrs(o) the attrs of op o ({} if none)          w        j["workloads"][0] (kitsune info --format json)
Prints each false expression (with the values it compared where it can) and exits 1.
"""
import json
import sys
from collections import Counter


def main():
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    path = sys.argv[1]
    with open(path) as f:
        j = json.load(f)
    ops = j.get("ops", [])
    tensors = j.get("tensors", {})
    env = {
        "j": j, "ops": ops, "tensors": tensors,
        "types": Counter(o["type"] for o in ops),
        "of": lambda ty: [o for o in ops if o["type"] == ty],
        "op": lambda n: next(o for o in ops if o["name"] == n),
        "t": lambda n: tensors[n],
        "attrs": lambda o: o.get("attrs", {}),
        "w": (j.get("workloads") or [None])[0],
        "Counter": Counter,
    }
    bad = 0
    for e in sys.argv[2:]:
        try:
            ok = eval(e, env)
        except Exception as ex:  # a missing op or key is a failure, not a crash
            ok = False
            e = "%s  (%s: %s)" % (e, type(ex).__name__, ex)
        if not ok:
            detail = ""
            if "==" in e and "(" not in e.split("==")[0][:1]:
                try:
                    detail = "  [left = %r]" % (eval(e.split("==")[0], env),)
                except Exception:
                    pass
            print("%s: false: %s%s" % (path, e, detail))
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
