"""The shipped applications (hw/calibrate/apps/models.py) as kitsune-export model factories.

tests/export/run-export.sh exports each one with tools/kitsune-export and compares the result
with the shipped workloads/APP.json under `kitsune info` at the default parameters.

  tests/export/apps.py:NAME         a factory (NAME = the app with '-' as '_'): NAME(**params)
                                    builds the module at those parameters (the exporter passes
                                    its --size/--param values, so every trace gets a module built
                                    for its sizes: the app modules bake B, S... into views)
  python3 tests/export/apps.py args APP    the exporter's arguments, one per line
  python3 tests/export/apps.py sets APP    `kitsune --set` arguments for the default parameters

The batch-like parameters are traced at small values (SIZES) and written as parameters; the
model dimensions (D, F, L, ROWS...) are the defaults. The helpers that the app modules keep whole
with torch.fx.wrap (rms_norm, rope, attention, scatter_add_rows) are written as one kitsune op
each with --leaf, as the shipped JSON files have them.
"""
import importlib.util
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
APPS_PY = os.path.join(ROOT, "hw", "calibrate", "apps", "models.py")

# batch-like parameters and the small values the trace uses
SIZES = {
    "dlrm": {"B": 8},
    "nerf": {"B": 64},
    "mgn": {"N": 32, "E": 96},
    "graphcast": {"N": 32, "E": 96},
    "llama3-8b-ctx": {"B": 2, "S": 8},
    "llama3-8b-tok": {"B": 2, "P": 8},
}
LEAVES = {
    "mgn": ["scatter_add_rows=scatter_add"],
    "graphcast": ["scatter_add_rows=scatter_add"],
    "llama3-8b-ctx": ["rms_norm=rmsnorm", "rope=rope", "attention=attention"],
    "llama3-8b-tok": ["rms_norm=rmsnorm", "rope=rope", "attention=attention"],
}

_M = None


def models():
    global _M
    if _M is None:
        spec = importlib.util.spec_from_file_location("kitsune_apps_models", APPS_PY)
        _M = importlib.util.module_from_spec(spec)
        sys.modules["kitsune_apps_models"] = _M
        spec.loader.exec_module(_M)
    return _M


class _no_init:
    """Skip nn.init's random fills while the module is built: the exporter needs shapes only
    (it traces on the meta device), and initialising the 218M Llama weights four times takes
    most of a minute with Debian's reference BLAS build."""
    NAMES = ("kaiming_uniform_", "kaiming_normal_", "uniform_", "normal_", "xavier_uniform_",
             "xavier_normal_", "trunc_normal_")

    def __enter__(self):
        import torch.nn.init as init
        self.saved = {n: getattr(init, n) for n in self.NAMES if hasattr(init, n)}
        for n in self.saved:
            setattr(init, n, lambda t, *a, **k: t)

    def __exit__(self, *exc):
        import torch.nn.init as init
        for n, f in self.saved.items():
            setattr(init, n, f)
        return False


def factory(app):
    def build(**sizes):
        M = models()
        p = M.workload_params(app, "inference", sizes)
        with _no_init():
            return M.module_for(app, p)
    build.__name__ = app.replace("-", "_")
    return build


for _app in SIZES:
    globals()[_app.replace("-", "_")] = factory(_app)


def exporter_args(app):
    M = models()
    wl = M.load_workload(app)
    defaults = M.workload_params(app, "inference")
    sizes = SIZES[app]
    out = []
    for p, v in sizes.items():
        out.append("--size")
        out.append("%s=%d" % (p, v))
    for name in M.FORWARD_INPUTS[app]:
        t = wl["tensors"][name]
        dims = []
        for d in t["shape"]:
            if isinstance(d, int):
                dims.append(str(d))
                continue
            # model dimensions take their default values; batch-like ones stay parameters
            e = re.sub(r"[A-Za-z_]\w*",
                       lambda m: m.group(0) if m.group(0) in sizes else str(defaults[m.group(0)]), d)
            if not re.search(r"[A-Za-z_]", e):
                e = str(M.eval_expr(e, {}))
            dims.append(e)
        out.append("--input")
        out.append("%s=%s:%s" % (name, ",".join(dims) if dims else "scalar", t["dtype"]))
    for leaf in LEAVES.get(app, []):
        out.append("--leaf")
        out.append(leaf)
    return out


def kitsune_sets(app):
    M = models()
    defaults = M.workload_params(app, "inference")
    out = []
    for p in SIZES[app]:
        out.append("--set")
        out.append("%s=%d" % (p, defaults[p]))
    return out


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("args", "sets") or sys.argv[2] not in SIZES:
        sys.stderr.write("usage: apps.py args|sets APP  (APP: %s)\n" % " ".join(SIZES))
        sys.exit(2)
    import torch  # noqa: F401  (the app models need it)
    fn = exporter_args if sys.argv[1] == "args" else kitsune_sets
    print("\n".join(fn(sys.argv[2])))
