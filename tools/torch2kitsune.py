#!/usr/bin/env python3
"""torch2kitsune: export a PyTorch nn.Module to a kitsune workload graph (JSON).

The command-line front end is tools/kitsune-export; `kitsune-export --help` documents it.

Pipeline (one module, three stages):

  front end   torch.fx symbolic trace + a recording Interpreter (torch >= 1.13), or
              torch.export (torch >= 2.1)
                -> IR: a list of INode(op, args, outs) where `op` is an ATen operator name
                   ("linear", "transpose", "_softmax", ...), `args` are bound by the ATen
                   schema's argument names, and outs are ITensors with concrete shapes and a
                   flag saying whether PyTorch returned a view (aliases its input).
  mapper      IR -> kitsune ops (docs/formats.md), with the PyTorch memory semantics:
              views are free, .contiguous()/reshape copies fold into the transpose/slice they
              materialize, x @ W.t() folds into transpose_b, zero-initialised index_add
              destinations fold away.
  fitter      the model is traced again with each named batch-like dimension doubled (and
              once with all of them tripled); every integer in the graph (shape entries,
              integer attributes) is fitted as c * P1^e1 * P2^e2 ... or as a sum
              a1*P1 + a2*P2 + b over the params, and written as an expression ("B*S", "S+1").

Exit status: 0 written, 2 bad input / unsupported operators / tracing failed (nothing written).
"""

import argparse
import dis
import importlib
import importlib.util
import inspect
import json
import math
import operator
import os
import re
import sys
import tempfile
from fractions import Fraction

PROG = "kitsune-export"

# kitsune op types that the C side does not have yet (written anyway; --strict rejects them).
# Empty since conv2d, batchnorm, pool2d, topk, argmax, sort, cumsum and dropout landed in
# kitsune's op table (issue 15, part 3); kept for the next family the mapper writes first.
NOT_YET = set()
# kitsune op types that are free views
VIEW_TYPES = {"view", "reshape"}

torch = None  # imported lazily so that --help works without torch
nn = None
F = None


def _import_torch():
    global torch, nn, F
    if torch is None:
        try:
            import torch as _t
            import torch.nn as _nn
            import torch.nn.functional as _F
        except Exception as e:  # pragma: no cover - depends on the installation
            raise ExportError("cannot import torch (%s); install python3-torch or pip's torch" % e)
        torch, nn, F = _t, _nn, _F
    return torch


def torch_version():
    v = re.match(r"(\d+)\.(\d+)", torch.__version__)
    return (int(v.group(1)), int(v.group(2))) if v else (0, 0)


class ExportError(Exception):
    """Bad input or a failed trace: message, exit status 2, nothing written."""


class Unsupported(Exception):
    """A node the mapper cannot express; collected, reported together."""


class Poisoned(Exception):
    """A node reads the output of an unsupported node (reported once, at that node)."""


# ----------------------------------------------------------------------------------------------
# IR
# ----------------------------------------------------------------------------------------------

_DT = {}


def kdtype(td):
    """kitsune dtype name of a torch dtype."""
    if not _DT:
        _DT.update({torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16",
                    torch.float64: "fp64", torch.int64: "int64", torch.int32: "int32",
                    torch.int16: "int32", torch.int8: "int32", torch.uint8: "int32",
                    torch.bool: "bool"})
        for n in ("float8_e4m3fn", "float8_e5m2"):
            if hasattr(torch, n):
                _DT[getattr(torch, n)] = "fp8"
    if td not in _DT:
        return "?" + str(td).replace("torch.", "")  # complex etc.: an error where it is used
    return _DT[td]


FLOAT_KDT = {"fp32", "fp16", "bf16", "fp64", "fp8", "tf32"}


def is_float_kdt(d):
    return d in FLOAT_KDT


class ITensor:
    """A tensor of the traced program: concrete shape, traced dtype (kitsune name)."""

    __slots__ = ("name", "shape", "dtype", "kind", "is_view", "fqn", "decl")

    def __init__(self, name, shape, dtype, kind=None, is_view=False, fqn=None, decl=None):
        self.name = name
        self.shape = tuple(int(s) for s in shape)
        self.dtype = dtype
        self.kind = kind          # "input", "weight" or None
        self.is_view = is_view    # PyTorch returned a view of an input (shares its storage)
        self.fqn = fqn            # parameter/buffer qualified name
        self.decl = decl          # declared dtype (inputs, weights)

    def __repr__(self):
        return "ITensor(%s %s %s)" % (self.name, list(self.shape), self.dtype)


class DTypeOf:
    """The dtype of a tensor (x.dtype), resolved to its declared dtype by the mapper."""

    def __init__(self, t):
        self.t = t


class INode:
    __slots__ = ("op", "args", "outs", "name", "loc", "module", "desc")

    def __init__(self, op, args, outs, name, loc="", module="", desc=None):
        self.op = op
        self.args = args
        self.outs = outs
        self.name = name
        self.loc = loc
        self.module = module
        self.desc = desc or op

    def __repr__(self):
        return "INode(%s %s -> %s)" % (self.op, self.name, self.outs)


class IGraph:
    def __init__(self, frontend):
        self.frontend = frontend
        self.nodes = []
        self.inputs = []
        self.weights = {}
        self.outputs = []
        self.trace_unsupported = []  # (desc, loc, module) found by the front end itself


# ----------------------------------------------------------------------------------------------
# argument specs (Python signatures of torch functions, bound to ATen argument names)
# ----------------------------------------------------------------------------------------------

REQ = object()


class Spec:
    """'self|input, dim, keepdim=False, *, dtype=None' -> binder; first alias is the ATen name."""

    def __init__(self, text):
        self.params = []
        kwonly = False
        self.varkw = False
        for part in [p.strip() for p in text.split(",") if p.strip()]:
            if part == "*":
                kwonly = True
                continue
            if part == "**":
                self.varkw = True
                continue
            var = part.startswith("*")
            part = part.lstrip("*")
            if "=" in part:
                names, dflt = part.split("=", 1)
                default = eval(dflt, {"inf": math.inf})
            else:
                names, default = part, REQ
            self.params.append((names.split("|"), default, var, kwonly))

    def bind(self, args, kwargs):
        out = {}
        ai = 0
        kwargs = dict(kwargs)
        for names, default, var, kwonly in self.params:
            key = names[0]
            if var:
                rest = list(args[ai:])
                ai = len(args)
                if len(rest) == 1 and isinstance(rest[0], (list, tuple)):
                    rest = list(rest[0])
                for n in names:
                    if n in kwargs:
                        v = kwargs.pop(n)
                        rest = list(v) if isinstance(v, (list, tuple)) else [v]
                out[key] = rest
                continue
            if not kwonly and ai < len(args):
                out[key] = args[ai]
                ai += 1
                continue
            found = False
            for n in names:
                if n in kwargs:
                    out[key] = kwargs.pop(n)
                    found = True
                    break
            if not found:
                if default is REQ:
                    raise Unsupported("missing argument %r" % key)
                out[key] = default
        if ai < len(args):
            raise Unsupported("too many positional arguments")
        if kwargs and not self.varkw:
            raise Unsupported("unexpected keyword arguments %s" % ", ".join(sorted(kwargs)))
        out.update(kwargs)
        return out


# torch.* functions and Tensor methods: ATen-like signatures (method calls bind self first)
_UNARY = ["relu", "gelu", "silu", "sigmoid", "tanh", "exp", "log", "neg", "abs", "sqrt", "rsqrt",
          "square", "negative", "mish", "hardswish", "hardsigmoid"]
ATEN_SPECS = {
    "linear": "input, weight, bias=None",
    "matmul": "self|input, other",
    "mm": "self|input, mat2",
    "bmm": "self|input, mat2",
    "baddbmm": "self|input, batch1, batch2, *, beta=1, alpha=1",
    "addmm": "self|input, mat1, mat2, *, beta=1, alpha=1",
    "gelu": "self|input, approximate='none'",
    "add": "self|input, other, *, alpha=1",
    "sub": "self|input, other, *, alpha=1",
    "subtract": "self|input, other, *, alpha=1",
    "rsub": "self|input, other, *, alpha=1",
    "mul": "self|input, other",
    "multiply": "self|input, other",
    "div": "self|input, other, *, rounding_mode=None",
    "divide": "self|input, other, *, rounding_mode=None",
    "true_divide": "self|input, other",
    "floor_divide": "self|input, other",
    "pow": "self|input, exponent",
    "cat": "tensors, dim=0",
    "concat": "tensors, dim=0",
    "concatenate": "tensors, dim|axis=0",
    "stack": "tensors, dim=0",
    "softmax": "self|input, dim, dtype=None",
    "log_softmax": "self|input, dim, dtype=None",
    "layer_norm": "input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True",
    "rms_norm": "input, normalized_shape, weight=None, eps=None",
    "embedding": "weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False",
    "index_select": "self|input, dim, index",
    "scatter_add": "self|input, dim, index, src",
    "index_add": "self|input, dim, index, source, *, alpha=1",
    "index_copy": "self|input, dim, index, source",
    "transpose": "self|input, dim0, dim1",
    "swapaxes": "self|input, axis0|dim0, axis1|dim1",
    "permute": "self|input, *dims",
    "t": "self|input",
    "view": "self, *size",
    "reshape": "self|input, *shape",
    "view_as": "self, other",
    "reshape_as": "self, other",
    "flatten": "self|input, start_dim=0, end_dim=-1",
    "unflatten": "self|input, dim, sizes",
    "unsqueeze": "self|input, dim",
    "squeeze": "self|input, dim=None",
    "split": "self|tensor, split_size|split_size_or_sections, dim=0",
    "chunk": "self|input, chunks, dim=0",
    "tensor_split": "self|input, indices_or_sections, dim=0",
    "narrow": "self|input, dim, start, length",
    "unbind": "self|input, dim=0",
    "select": "self|input, dim, index",
    "expand": "self, *size",
    "expand_as": "self, other",
    "broadcast_to": "self|input, size",
    "sum": "self|input, dim=None, keepdim=False, *, dtype=None",
    "mean": "self|input, dim=None, keepdim=False, *, dtype=None",
    "amax": "self|input, dim=(), keepdim=False",
    "max": "self|input, dim=None, keepdim=False",
    "contiguous": "self, memory_format=None",
    "clone": "self|input, *, memory_format=None",
    "detach": "self|input",
    "to": "self, *args, **",
    "type_as": "self, other",
    "float": "self, memory_format=None",
    "half": "self, memory_format=None",
    "bfloat16": "self, memory_format=None",
    "double": "self, memory_format=None",
    "long": "self, memory_format=None",
    "int": "self, memory_format=None",
    "bool": "self, memory_format=None",
    "dropout": "input, p=0.5, train|training=False",
    "topk": "self|input, k, dim=-1, largest=True, sorted=True",
    "argmax": "self|input, dim=None, keepdim=False",
    "sort": "self|input, dim=-1, descending=False, *, stable=False",
    "argsort": "self|input, dim=-1, descending=False, *, stable=False",
    "cumsum": "self|input, dim, *, dtype=None",
    "zeros_like": "self|input, **",
    "ones_like": "self|input, **",
    "empty_like": "self|input, **",
    "full_like": "self|input, fill_value, **",
    "new_zeros": "self, *size, **",
    "new_ones": "self, *size, **",
    "new_empty": "self, *size, **",
    "new_full": "self, size, fill_value, **",
    "zeros": "*size, **",
    "ones": "*size, **",
    "empty": "*size, **",
    "full": "size, fill_value, **",
    "arange": "*args, **",
    "conv2d": "input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1",
    "conv1d": "input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1",
    "group_norm": "input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True",
    "upsample_nearest2d": "self|input, output_size=None, scales_h=None, scales_w=None",
    "upsample_bilinear2d": "self|input, output_size=None, align_corners=False, scales_h=None, scales_w=None",
    "max_pool2d": "self|input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False",
    "avg_pool2d": "self|input, kernel_size, stride=None, padding=0, ceil_mode=False, "
                  "count_include_pad=True, divisor_override=None",
    "adaptive_avg_pool2d": "self|input, output_size",
    "batch_norm": "input, weight, bias, running_mean, running_var, training, momentum, eps, "
                  "cudnn_enabled=True",
    "scaled_dot_product_attention": "query, key, value, attn_mask=None, dropout_p=0.0, "
                                    "is_causal=False, *, scale=None, enable_gqa=False",
    "leaky_relu": "self|input, negative_slope=0.01",
    "elu": "self|input, alpha=1, scale=1, input_scale=1",
    "softplus": "self|input, beta=1, threshold=20",
    "hardtanh": "self|input, min_val=-1, max_val=1",
}
for _u in _UNARY:
    ATEN_SPECS.setdefault(_u, "self|input")
# Python-level torch.nn.functional signatures that differ from ATen's
F_SPECS = {
    "linear": ("linear", "input, weight, bias=None"),
    "relu": ("relu", "input, inplace=False"),
    "relu_": ("relu", "input"),
    "gelu": ("gelu", "input, approximate='none'"),
    "silu": ("silu", "input, inplace=False"),
    "leaky_relu": ("leaky_relu", "input, negative_slope=0.01, inplace=False"),
    "elu": ("elu", "input, alpha=1.0, inplace=False"),
    "softplus": ("softplus", "input, beta=1.0, threshold=20.0"),
    "mish": ("mish", "input, inplace=False"),
    "hardswish": ("hardswish", "input, inplace=False"),
    "hardsigmoid": ("hardsigmoid", "input, inplace=False"),
    "hardtanh": ("hardtanh", "input, min_val=-1.0, max_val=1.0, inplace=False"),
    "relu6": ("hardtanh", "input, inplace=False"),
    "sigmoid": ("sigmoid", "input"),
    "tanh": ("tanh", "input"),
    "softmax": ("softmax", "input, dim=None, _stacklevel=3, dtype=None"),
    "log_softmax": ("log_softmax", "input, dim=None, _stacklevel=3, dtype=None"),
    "layer_norm": ("layer_norm", "input, normalized_shape, weight=None, bias=None, eps=1e-05"),
    "rms_norm": ("rms_norm", "input, normalized_shape, weight=None, eps=None"),
    "embedding": ("embedding_F", "input, weight, padding_idx=None, max_norm=None, norm_type=2.0, "
                                 "scale_grad_by_freq=False, sparse=False"),
    "dropout": ("dropout", "input, p=0.5, training=True, inplace=False"),
    "conv2d": ("conv2d", "input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1"),
    "conv1d": ("conv1d", "input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1"),
    "group_norm": ("group_norm", "input, num_groups, weight=None, bias=None, eps=1e-05"),
    "interpolate": ("interpolate", "input, size=None, scale_factor=None, mode='nearest', "
                                   "align_corners=None, recompute_scale_factor=None, antialias=False"),
    "conv_transpose2d": ("conv_transpose2d", "input, weight, bias=None, stride=1, padding=0, "
                                             "output_padding=0, groups=1, dilation=1"),
    "batch_norm": ("batch_norm_F", "input, running_mean, running_var, weight=None, bias=None, "
                                   "training=False, momentum=0.1, eps=1e-05"),
    "max_pool2d": ("max_pool2d", "input, kernel_size, stride=None, padding=0, dilation=1, "
                                 "ceil_mode=False, return_indices=False"),
    "max_pool2d_with_indices": ("max_pool2d", "input, kernel_size, stride=None, padding=0, "
                                              "dilation=1, ceil_mode=False, return_indices=False"),
    "avg_pool2d": ("avg_pool2d", "input, kernel_size, stride=None, padding=0, ceil_mode=False, "
                                 "count_include_pad=True, divisor_override=None"),
    "adaptive_avg_pool2d": ("adaptive_avg_pool2d", "input, output_size"),
    "scaled_dot_product_attention": ("scaled_dot_product_attention",
                                     ATEN_SPECS["scaled_dot_product_attention"]),
}
OPERATOR_OPS = {
    operator.add: ("add", "self, other"), operator.iadd: ("add", "self, other"),
    operator.sub: ("sub", "self, other"), operator.isub: ("sub", "self, other"),
    operator.mul: ("mul", "self, other"), operator.imul: ("mul", "self, other"),
    operator.truediv: ("div", "self, other"), operator.itruediv: ("div", "self, other"),
    operator.floordiv: ("floor_divide", "self, other"),
    operator.matmul: ("matmul", "self, other"),
    operator.neg: ("neg", "self"),
    operator.pow: ("pow", "self, exponent"),
}
ALIASES = {"negative": "neg", "multiply": "mul", "subtract": "sub", "divide": "div",
           "true_divide": "div", "concat": "cat", "concatenate": "cat", "swapaxes": "transpose"}


# ----------------------------------------------------------------------------------------------
# source locations
# ----------------------------------------------------------------------------------------------

_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')


def _is_tool_file(f):
    here = os.path.dirname(os.path.abspath(__file__))
    a = os.path.abspath(f)
    return os.path.dirname(a) == here and os.path.basename(a) in ("torch2kitsune.py", "kitsune-export")


def location_from_stack(st):
    """'file:line' of the innermost user frame of a recorded stack trace ('' if none)."""
    if not st:
        return ""
    frames = _FRAME.findall(st)
    tdir = os.path.dirname(os.path.abspath(torch.__file__))
    keep = [i for i, (f, _, _) in enumerate(frames)
            if not os.path.abspath(f).startswith(tdir + os.sep) and not _is_tool_file(f)
            and not f.startswith("<")]
    if not keep:
        return ""
    mine = [i for i, (f, _, _) in enumerate(frames) if _is_tool_file(f)]
    # torch 1.13 records innermost-first, later versions outermost-first (the usual order)
    pick = keep[0] if (mine and keep[0] < mine[0]) else keep[-1]
    f, line, _ = frames[pick]
    try:
        rel = os.path.relpath(f)
        if not rel.startswith(".."):
            f = rel
    except ValueError:
        pass
    return "%s:%s" % (f, line)


def _callable_name(fn):
    """A readable, qualified name of a callable ('torch.fft.fft', 'operator.add')."""
    if isinstance(fn, str):
        return fn
    name = getattr(fn, "__name__", None) or repr(fn)
    if torch is not None:
        for mod, pre in ((torch.nn.functional, "torch.nn.functional"), (torch, "torch"),
                         (getattr(torch, "fft", None), "torch.fft"),
                         (getattr(torch, "linalg", None), "torch.linalg"),
                         (getattr(torch, "special", None), "torch.special")):
            if mod is None:
                continue
            for cand in (name, name.split("_", 1)[-1]):
                if getattr(mod, cand, None) is fn:
                    return "%s.%s" % (pre, cand)
    if getattr(operator, name, None) is fn:
        return "operator." + name
    mod = getattr(fn, "__module__", None)
    qn = getattr(fn, "__qualname__", name)
    return "%s.%s" % (mod, qn) if mod else qn


# ----------------------------------------------------------------------------------------------
# front end 1: torch.fx symbolic trace + recording interpreter
# ----------------------------------------------------------------------------------------------

def _patched_proxy_iter(self):
    """Proxy.__iter__ of torch >= 2.0: torch 1.13's indexes bytecode by f_lasti // 2, which is
    wrong on Python >= 3.11 (inline caches), so `a, b = x.split(...)` fails to trace there."""
    from bisect import bisect_left
    frame = inspect.currentframe()
    calling = frame.f_back
    insts = list(dis.get_instructions(calling.f_code))
    if sys.version_info >= (3, 11):
        idx = bisect_left([i.offset for i in insts], calling.f_lasti)
    else:
        idx = calling.f_lasti // 2
    inst = insts[idx] if idx < len(insts) else None
    if inst is not None and inst.opname == "UNPACK_SEQUENCE":
        return (self[i] for i in range(inst.argval))
    return self.tracer.iter(self)


class _TMeta:
    __slots__ = ("shape", "dtype", "alias")

    def __init__(self, t, ins=()):
        self.shape = tuple(t.shape)
        self.dtype = t.dtype
        self.alias = _aliases(t, ins)


def _aliases(o, ins):
    """Does tensor o share memory with one of the tensors ins (a view, or the same tensor)?
    Uses autograd's view tracking (_base), which meta tensors have too, then storage pointers."""
    ob = o._base if o._base is not None else o
    for i in ins:
        ib = i._base if i._base is not None else i
        if o is i or ob is ib:
            return True
    if o.device.type == "meta" or not o.numel():
        return False
    try:
        ptr = (o.untyped_storage() if hasattr(o, "untyped_storage") else o.storage()).data_ptr()
        for i in ins:
            if i.device == o.device and i.numel() and ptr == (
                    i.untyped_storage() if hasattr(i, "untyped_storage") else i.storage()).data_ptr():
                return True
    except Exception:
        pass
    return False


def _summarize(v, ins=()):
    if torch.is_tensor(v):
        return _TMeta(v, ins)
    if isinstance(v, torch.Size):
        return tuple(int(x) for x in v)
    if isinstance(v, (tuple, list)):
        return type(v)(_summarize(x, ins) for x in v)
    return v


def _materialize(v):
    """A CPU tensor for a meta one (random floats, zero integers), recursively."""
    if torch.is_tensor(v) and v.device.type == "meta":
        if v.dtype.is_floating_point:
            return torch.randn(tuple(v.shape)).to(v.dtype)
        return torch.zeros(tuple(v.shape), dtype=v.dtype)
    if isinstance(v, (list, tuple)):
        return type(v)(_materialize(x) for x in v)
    if isinstance(v, dict):
        return {k: _materialize(x) for k, x in v.items()}
    return v


def _to_meta(v):
    if torch.is_tensor(v):
        return torch.empty(tuple(v.shape), dtype=v.dtype, device="meta")
    if isinstance(v, (list, tuple)):
        return type(v)(_to_meta(x) for x in v)
    return v


def _cpu_fallback(interp, n, rec):
    """A function/method node with no meta kernel (e.g. repeat_interleave on torch 1.13): run
    that one node on CPU tensors of the same shapes, record it, hand meta tensors on."""
    if n.op not in ("call_function", "call_method"):
        return None
    a, k = interp.fetch_args_kwargs_from_env(n)
    ins = _tensors_in([a, k], [])
    if not ins or not all(t.device.type == "meta" for t in ins):
        return None
    a2, k2 = _materialize(a), _materialize(k)
    try:
        r = getattr(interp, n.op)(n.target, a2, k2)
    except Exception:
        return None
    rec[n] = _summarize(r, _tensors_in([a2, k2], []))
    return _to_meta(r)


def _meta_copy(module, float_dtype=None):
    """A copy of module whose parameters and buffers live on the meta device (no data copied),
    floating-point ones in float_dtype (the declared --dtype)."""
    import copy
    memo = {}
    for t in list(module.parameters()) + list(module.buffers()):
        dt = float_dtype if (float_dtype is not None and t.dtype.is_floating_point) else t.dtype
        mt = torch.empty(tuple(t.shape), dtype=dt, device="meta")
        if isinstance(t, nn.Parameter):
            mt = nn.Parameter(mt, requires_grad=t.requires_grad)
        memo[id(t)] = mt
    return copy.deepcopy(module, memo)


def _tensors_in(v, out):
    if torch.is_tensor(v):
        out.append(v)
    elif isinstance(v, (list, tuple)):
        for x in v:
            _tensors_in(x, out)
    elif isinstance(v, dict):
        for x in v.values():
            _tensors_in(x, out)
    return out


def _has_tmeta(v):
    if isinstance(v, _TMeta):
        return True
    if isinstance(v, (tuple, list)):
        return any(_has_tmeta(x) for x in v)
    return False


_VALUES_INDICES = {"topk", "sort", "max", "min", "kthvalue", "mode", "median", "aminmax"}


def tuple_out_name(op, name, i):
    """Readable names of the outputs of a multi-output op."""
    base = op.split(".")[0].rstrip("_") if op else ""
    if base in _VALUES_INDICES:
        return "%s_%s" % (name, ("values", "indices")[i] if i < 2 else str(i))
    if i == 0 and base not in ("split", "chunk", "unbind", "split_with_sizes", "tensor_split"):
        return name  # the main result of native_layer_norm, native_dropout, sdpa variants...
    return "%s_%d" % (name, i)


class FxFrontEnd:
    """Traces once (torch.fx), then runs the graph on example inputs as often as asked."""

    name = "torch.fx symbolic trace + shape propagation"

    def __init__(self, module, input_names, leaf_classes):
        import torch.fx as fx
        self.fx = fx
        self.module = module
        leaf_names = set(leaf_classes)

        class Tracer(fx.Tracer):
            def __init__(s):
                super().__init__()
                s.record_stack_traces = True
                s.kt_stack = [""]

            def is_leaf_module(s, m, qualname):
                if type(m).__name__ in leaf_names:
                    return True
                return super().is_leaf_module(m, qualname)

            def call_module(s, m, forward, args, kwargs):
                try:
                    q = s.path_of_module(m)
                except Exception:
                    q = s.kt_stack[-1]
                s.kt_stack.append(q)
                try:
                    return super().call_module(m, forward, args, kwargs)
                finally:
                    s.kt_stack.pop()

            def create_node(s, *a, **k):
                n = super().create_node(*a, **k)
                n.meta["kt_module"] = s.kt_stack[-1]
                return n

        sig = inspect.signature(module.forward)
        concrete = {}
        for p in sig.parameters.values():
            if p.name in input_names:
                continue
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            if p.default is p.empty:
                raise ExportError("forward() argument %r has no --input and no default" % p.name)
            concrete[p.name] = p.default
        unknown = [n for n in input_names if n not in sig.parameters]
        if unknown:
            raise ExportError("--input %s: forward() has no such argument (its arguments: %s)"
                              % (", ".join(unknown), ", ".join(sig.parameters)))
        self.order = [p for p in sig.parameters if p in input_names]
        tracer = Tracer()
        patch = torch_version() < (2, 0) and sys.version_info >= (3, 11)
        old = fx.Proxy.__iter__
        if patch:
            fx.Proxy.__iter__ = _patched_proxy_iter
        try:
            graph = tracer.trace(module, concrete_args=concrete or None)
        except Exception as e:
            raise ExportError("torch.fx could not trace the model: %s: %s%s"
                              % (type(e).__name__, e, _trace_hint(e)))
        finally:
            fx.Proxy.__iter__ = old
        self.gm = fx.GraphModule(tracer.root, graph)
        self.frontend_name = self.name

    def run(self, inputs):
        """inputs: dict name -> (tensor, declared dtype). Returns an IGraph."""
        fx = self.fx
        rec = {}

        class Recorder(fx.Interpreter):
            def run_node(s, n):
                try:
                    r = super().run_node(n)
                except ExportError:
                    raise
                except Exception as e:
                    r = _cpu_fallback(s, n, rec)
                    if r is not None:
                        return r
                    loc = location_from_stack(getattr(n, "stack_trace", None))
                    raise ExportError("running the traced model on the example inputs failed at %s"
                                      "(node %s): %s: %s"
                                      % (loc + " " if loc else "", n.name, type(e).__name__,
                                         str(e).split("\n")[0]))
                ins = []
                if n.op in ("call_function", "call_method", "call_module"):
                    a, k = s.fetch_args_kwargs_from_env(n)
                    _tensors_in([a, k], ins)
                rec[n] = _summarize(r, ins)
                return r

        args = [inputs[n][0] for n in self.order]
        with torch.no_grad():
            try:
                Recorder(self.gm).run(*args)
            except ExportError as e:  # fx appends the node and a traceback to the message
                raise ExportError(str(e).split("\n")[0])
            except Exception as e:
                raise ExportError("running the traced model on the example inputs failed: %s: %s"
                                  % (type(e).__name__, str(e).split("\n")[0]))
        return self._to_ir(rec, inputs)

    # -- conversion of the fx graph (+ recorded values) to the IR ----------------------------
    def _to_ir(self, rec, inputs):
        ir = IGraph("fx")
        env = {}
        cur = {}  # node -> ITensor after in-place updates

        def value(a):
            if isinstance(a, self.fx.Node):
                if a in cur:
                    return cur[a]
                return env[a]
            if isinstance(a, (list, tuple)):
                return type(a)(value(x) for x in a)
            if isinstance(a, dict):
                return {k: value(v) for k, v in a.items()}
            if isinstance(a, slice):
                return slice(value(a.start), value(a.stop), value(a.step))
            return a

        for n in self.gm.graph.nodes:
            loc = location_from_stack(getattr(n, "stack_trace", None) or n.meta.get("stack_trace"))
            modpath = n.meta.get("kt_module", "")
            if n.op == "placeholder":
                m = rec[n]
                t = ITensor(n.target, m.shape, kdtype(m.dtype), kind="input",
                            decl=inputs[n.target][1])
                ir.inputs.append(t)
                env[n] = t
                continue
            if n.op == "get_attr":
                obj = _getattr_path(self.gm, n.target)
                if torch.is_tensor(obj):
                    env[n] = self._weight(ir, n.target, obj)
                else:
                    env[n] = obj
                continue
            if n.op == "output":
                outs = []
                _flatten_tensors(value(n.args[0]), outs)
                ir.outputs = outs
                continue
            r = rec.get(n)
            args = value(n.args)
            kwargs = value(n.kwargs)
            if not _has_tmeta(r):
                # a Python value (shape arithmetic, dtypes, sizes): evaluate, do not emit
                if (n.op == "call_function" and n.target is getattr and len(args) == 2
                        and args[1] == "dtype" and isinstance(args[0], ITensor)):
                    env[n] = DTypeOf(args[0])
                elif n.op == "call_method" and n.target == "type" and not args[1:] and not kwargs:
                    env[n] = r
                else:
                    env[n] = r
                continue
            if (n.op == "call_function" and n.target is getattr and isinstance(args[0], (tuple, list))
                    and args[1] in ("values", "indices")):  # torch.return_types fields
                env[n] = args[0][0 if args[1] == "values" else 1]
                continue
            if n.op == "call_function" and n.target is operator.getitem and isinstance(args[0], (tuple, list)):
                env[n] = args[0][args[1]]
                continue
            try:
                if any(isinstance(a, ITensor) and a.kind == "poison"
                       for a in _iter_args([args, kwargs])):
                    raise Poisoned()
                produced = self._convert(ir, n, args, kwargs, r, loc, modpath)
            except Poisoned:
                produced = _fresh_outputs(n.name, r)
            except Unsupported as e:
                ir.trace_unsupported.append((str(e), loc, modpath))
                produced = _fresh_outputs(n.name, r)
            env[n] = produced
            inplace = self._inplace_target(n, args, kwargs)
            if inplace is not None and isinstance(produced, ITensor):
                src = n.args[0] if n.args else None
                if isinstance(src, self.fx.Node):
                    cur[src] = produced
        return ir

    def _inplace_target(self, n, args, kwargs):
        if n.op == "call_method" and n.target.endswith("_") and not n.target.endswith("__"):
            return args[0] if args else None
        if kwargs.get("inplace") is True:
            return args[0] if args else None
        if n.op == "call_function" and getattr(n.target, "__name__", "").endswith("_") \
                and not getattr(n.target, "__name__", "").endswith("__"):
            return args[0] if args else None
        if n.op == "call_module":
            m = _getattr_path(self.gm, n.target)
            if getattr(m, "inplace", False) is True:
                return args[0] if args else None
        return None

    def _weight(self, ir, fqn, t):
        if fqn not in ir.weights:
            w = ITensor(fqn.replace(".", "_"), t.shape, kdtype(t.dtype), kind="weight", fqn=fqn)
            ir.weights[fqn] = w
        return ir.weights[fqn]

    def _outs(self, n, r, args):
        """ITensors for the recorded result r of node n (view flag from storage sharing)."""
        def mk(m, name):
            return ITensor(name, m.shape, kdtype(m.dtype), is_view=m.alias)
        if isinstance(r, _TMeta):
            return mk(r, n.name)
        outs = []
        for i, m in enumerate(r):
            tn = n.target if isinstance(n.target, str) else getattr(n.target, "__name__", "")
            outs.append(mk(m, tuple_out_name(tn, n.name, i)) if isinstance(m, _TMeta) else m)
        return tuple(outs)

    def _convert(self, ir, n, args, kwargs, r, loc, modpath):
        """One fx call node -> IR nodes; returns the produced ITensor or tuple."""
        if n.op == "call_module":
            mod = _getattr_path(self.gm, n.target)
            op, bound = self._module_call(ir, n, mod, args, kwargs)
            desc = ("nn.%s (module %r)" % (type(mod).__name__, n.target)
                    if type(mod).__module__.startswith("torch.nn") else
                    "%s.%s (module %r)" % (type(mod).__module__, type(mod).__name__, n.target))
        elif n.op == "call_method":
            name = n.target
            base = name[:-1] if name.endswith("_") and not name.endswith("__") else name
            desc = "Tensor.%s" % name
            op = ALIASES.get(base, base)
            spec = ATEN_SPECS.get(base)
            if spec is None:
                raise Unsupported(desc)
            bound = Spec(spec).bind(args, kwargs)
        else:
            tgt = n.target
            desc = _callable_name(tgt)
            if tgt in OPERATOR_OPS:
                op, spec = OPERATOR_OPS[tgt]
                a = list(args)
                # scalar (op) tensor: swap to tensor-first forms
                if op in ("add", "mul") and len(a) == 2 and not isinstance(a[0], ITensor):
                    a = [a[1], a[0]]
                elif op in ("sub", "div") and len(a) == 2 and not isinstance(a[0], ITensor):
                    op = "rsub" if op == "sub" else "rdiv"
                    a = [a[1], a[0]]
                bound = Spec(spec).bind(a, kwargs)
            else:
                name = getattr(tgt, "__name__", "")
                fmod0 = getattr(tgt, "__module__", "") or ""
                if name in LEAF_TYPES and not fmod0.startswith("torch"):
                    op, bound = "kitsune_leaf", self._leaf_args(LEAF_TYPES[name], args, kwargs, [])
                    desc = "%s (--leaf %s=%s)" % (desc, name, LEAF_TYPES[name])
                    outs = self._outs(n, r, args)
                    ir.nodes.append(INode(op, bound, [outs] if not isinstance(outs, tuple) else list(outs),
                                          n.name, loc, modpath, desc))
                    return outs
                if name == "getitem" or tgt is operator.getitem:
                    return self._getitem(ir, n, args, r, loc, modpath)
                if tgt is getattr and len(args) == 2 and isinstance(args[1], str) and \
                        args[1] not in ("T", "mT", "data"):
                    raise Unsupported("Tensor.%s" % args[1])
                if tgt is getattr and len(args) == 2 and args[1] in ("T", "mT", "data"):
                    x = args[0]
                    if args[1] == "data":
                        op, bound = "alias", {"self": x}
                    elif args[1] == "T":
                        op, bound = "permute", {"self": x, "dims": list(range(len(x.shape)))[::-1]}
                    else:
                        op, bound = "transpose", {"self": x, "dim0": -2, "dim1": -1}
                    desc = "Tensor.%s" % args[1]
                    outs = self._outs(n, r, args)
                    ir.nodes.append(INode(op, bound, [outs], n.name, loc, modpath, desc))
                    return outs
                fmod = getattr(tgt, "__module__", "") or ""
                if name in F_SPECS and (fmod.startswith("torch.nn.functional")
                                        or getattr(F, name, None) is tgt):
                    op, spec = F_SPECS[name]
                    bound = Spec(spec).bind(args, kwargs)
                    if op == "embedding_F":
                        op = "embedding"
                        bound = {"weight": bound["weight"], "indices": bound["input"],
                                 "sparse": bound.get("sparse", False)}
                    elif op == "batch_norm_F":
                        op = "batch_norm"
                elif desc.startswith("torch.") and desc.count(".") == 1:
                    base = desc.split(".", 1)[1]
                    if base.endswith("_") and not base.endswith("__"):
                        base = base[:-1]
                    spec = ATEN_SPECS.get(base)
                    if spec is None:
                        raise Unsupported(desc)
                    op = ALIASES.get(base, base)
                    bound = Spec(spec).bind(args, kwargs)
                elif getattr(torch.Tensor, name, None) is tgt and name in ATEN_SPECS:
                    op = ALIASES.get(name, name)
                    bound = Spec(ATEN_SPECS[name]).bind(args, kwargs)
                elif inspect.isfunction(tgt) and not fmod.startswith("torch"):
                    raise Unsupported("%s (a function kept whole by torch.fx.wrap: --leaf %s=TYPE "
                                      "writes each call as one kitsune op)" % (desc, name))
                else:
                    raise Unsupported(desc)
        if op == "to" or op == "type":
            bound = _bind_to(bound)
            op = "to"
        outs = self._outs(n, r, args)
        ir.nodes.append(INode(op, bound, list(outs) if isinstance(outs, tuple) else [outs],
                              n.name, loc, modpath, desc))
        return outs

    def _module_call(self, ir, n, mod, args, kwargs):
        T = type(mod).__name__
        x = args[0] if args else kwargs.get("input")

        def W(attr):
            p = getattr(mod, attr, None)
            if p is None:
                return None
            return self._weight(ir, "%s.%s" % (n.target, attr), p)
        if isinstance(mod, nn.Linear):
            return "linear", {"input": x, "weight": W("weight"), "bias": W("bias")}
        if isinstance(mod, nn.LayerNorm):
            return "layer_norm", {"input": x, "normalized_shape": list(mod.normalized_shape),
                                  "weight": W("weight"), "bias": W("bias"), "eps": mod.eps}
        if hasattr(nn, "RMSNorm") and isinstance(mod, nn.RMSNorm):
            return "rms_norm", {"input": x, "normalized_shape": list(mod.normalized_shape),
                                "weight": W("weight"), "eps": mod.eps}
        if isinstance(mod, nn.Embedding):
            return "embedding", {"weight": W("weight"), "indices": x, "sparse": mod.sparse}
        if isinstance(mod, nn.Upsample):
            return "interpolate", {"input": x, "size": mod.size, "scale_factor": mod.scale_factor,
                                   "mode": mod.mode}
        if isinstance(mod, nn.GroupNorm):
            return "group_norm", {"input": x, "num_groups": mod.num_groups,
                                  "weight": W("weight"), "bias": W("bias")}
        if isinstance(mod, (nn.InstanceNorm1d, nn.InstanceNorm2d)):
            if mod.track_running_stats and not mod.training:
                raise Unsupported("nn.%s with running statistics in eval mode (module %r)" % (T, n.target))
            return "group_norm", {"input": x, "num_groups": -1, "weight": W("weight"), "bias": W("bias")}
        if isinstance(mod, nn.ConvTranspose2d):
            if mod.padding_mode != "zeros":
                raise Unsupported("nn.ConvTranspose2d with padding_mode=%r (module %r)" % (mod.padding_mode, n.target))
            return "conv_transpose2d", {"input": x, "weight": W("weight"), "bias": W("bias"),
                                        "stride": list(mod.stride), "padding": list(mod.padding),
                                        "output_padding": list(mod.output_padding),
                                        "groups": mod.groups, "dilation": list(mod.dilation)}
        if isinstance(mod, nn.Conv1d):
            if mod.padding_mode != "zeros":
                raise Unsupported("nn.Conv1d with padding_mode=%r (module %r)" % (mod.padding_mode, n.target))
            return "conv1d", {"input": x, "weight": W("weight"), "bias": W("bias"),
                              "stride": mod.stride[0], "padding": (mod.padding if isinstance(mod.padding, str)
                                                                   else mod.padding[0]),
                              "dilation": mod.dilation[0], "groups": mod.groups}
        if isinstance(mod, nn.Conv2d):
            if mod.padding_mode != "zeros":
                raise Unsupported("nn.Conv2d with padding_mode=%r (module %r)" % (mod.padding_mode, n.target))
            return "conv2d", {"input": x, "weight": W("weight"), "bias": W("bias"),
                              "stride": list(mod.stride), "padding": mod.padding,
                              "dilation": list(mod.dilation), "groups": mod.groups}
        if isinstance(mod, (nn.BatchNorm1d, nn.BatchNorm2d)):
            training = mod.training or not mod.track_running_stats
            return "batch_norm", {"input": x, "weight": W("weight"), "bias": W("bias"),
                                  "running_mean": None, "running_var": None,
                                  "training": training, "momentum": mod.momentum, "eps": mod.eps}
        if isinstance(mod, nn.MaxPool2d):
            if mod.return_indices:
                raise Unsupported("nn.MaxPool2d with return_indices (module %r)" % n.target)
            return "max_pool2d", {"self": x, "kernel_size": mod.kernel_size, "stride": mod.stride,
                                  "padding": mod.padding, "dilation": mod.dilation,
                                  "ceil_mode": mod.ceil_mode}
        if isinstance(mod, nn.AvgPool2d):
            return "avg_pool2d", {"self": x, "kernel_size": mod.kernel_size, "stride": mod.stride,
                                  "padding": mod.padding, "ceil_mode": mod.ceil_mode}
        if isinstance(mod, nn.AdaptiveAvgPool2d):
            return "adaptive_avg_pool2d", {"self": x, "output_size": mod.output_size}
        if isinstance(mod, nn.Dropout):
            return "dropout", {"input": x, "p": mod.p, "train": mod.training}
        if isinstance(mod, nn.MultiheadAttention):
            names = ("query", "key", "value", "key_padding_mask", "need_weights", "attn_mask",
                     "average_attn_weights", "is_causal")
            b = dict(zip(names, args))
            b.update(kwargs)
            for k, d in (("key_padding_mask", None), ("need_weights", True), ("attn_mask", None),
                         ("average_attn_weights", True), ("is_causal", False)):
                b.setdefault(k, d)
            b.update(self._mha_params(ir, n.target, mod))
            return "multi_head_attention", b
        if isinstance(mod, nn.TransformerEncoderLayer):
            b = dict(zip(("src", "src_mask", "src_key_padding_mask", "is_causal"), args))
            b.update(kwargs)
            b["layer"] = self._tel_params(ir, n.target, mod)
            return "transformer_encoder_layer", b
        if isinstance(mod, nn.TransformerEncoder):
            b = dict(zip(("src", "mask", "src_key_padding_mask", "is_causal"), args))
            b.update(kwargs)
            b["layers"] = [self._tel_params(ir, "%s.layers.%d" % (n.target, i), m)
                           for i, m in enumerate(mod.layers)]
            nm = mod.norm
            if nm is not None and not isinstance(nm, nn.LayerNorm):
                raise Unsupported("nn.TransformerEncoder with a final %s (module %r)" % (type(nm).__name__, n.target))
            b["norm_w"] = self._weight(ir, "%s.norm.weight" % n.target, nm.weight) if nm is not None and nm.weight is not None else None
            b["norm_b"] = self._weight(ir, "%s.norm.bias" % n.target, nm.bias) if nm is not None and nm.bias is not None else None
            b["final_norm"] = nm is not None
            return "transformer_encoder", b
        for cls, op in ((nn.ReLU, "relu"), (nn.SiLU, "silu"), (nn.Sigmoid, "sigmoid"),
                        (nn.Tanh, "tanh"), (nn.LeakyReLU, "leaky_relu"), (nn.ELU, "elu"),
                        (nn.Softplus, "softplus"), (nn.Mish, "mish"), (nn.Hardswish, "hardswish"),
                        (nn.Hardsigmoid, "hardsigmoid"), (nn.Hardtanh, "hardtanh")):
            if isinstance(mod, cls):
                return op, {"self": x}
        if isinstance(mod, nn.GELU):
            return "gelu", {"self": x, "approximate": getattr(mod, "approximate", "none")}
        if isinstance(mod, nn.Softmax):
            return "softmax", {"self": x, "dim": mod.dim}
        if isinstance(mod, nn.Identity):
            return "alias", {"self": x}
        if isinstance(mod, nn.Flatten):
            return "flatten", {"self": x, "start_dim": mod.start_dim, "end_dim": mod.end_dim}
        if isinstance(mod, nn.Unflatten):
            return "view", {"self": x}
        # a user leaf (--leaf CLASS=TYPE)
        kt = LEAF_TYPES.get(T)
        if kt is not None:
            tens = [a for a in args if isinstance(a, ITensor)]
            tens += [a for a in kwargs.values() if isinstance(a, ITensor)]
            params = [self._weight(ir, "%s.%s" % (n.target, pn), p)
                      for pn, p in mod.named_parameters(recurse=False)]
            return "kitsune_leaf", self._leaf_args(kt, args, kwargs, params)
        raise Unsupported("nn.%s (module %r)" % (T, n.target) if type(mod).__module__.startswith("torch.nn")
                          else "%s (module %r)" % (T, n.target))

    def _tel_params(self, ir, target, mod):
        """An nn.TransformerEncoderLayer's weights and settings, for _tel."""
        act = mod.activation
        act_name = None
        if isinstance(act, nn.ReLU):
            act_name = "relu"
        elif isinstance(act, nn.GELU):
            act_name = "gelu"
        elif act is F.relu:
            act_name = "relu"
        elif act is F.gelu:
            act_name = "gelu"
        if act_name is None:
            raise Unsupported("nn.TransformerEncoderLayer with activation %r (module %r)" % (act, target))

        def P(m, attr, name):
            t = getattr(m, attr, None)
            return self._weight(ir, "%s.%s" % (target, name), t) if t is not None else None
        return {"mha": self._mha_params(ir, target + ".self_attn", mod.self_attn),
                "norm_first": bool(mod.norm_first), "act": act_name,
                "n1_w": P(mod.norm1, "weight", "norm1.weight"), "n1_b": P(mod.norm1, "bias", "norm1.bias"),
                "n2_w": P(mod.norm2, "weight", "norm2.weight"), "n2_b": P(mod.norm2, "bias", "norm2.bias"),
                "l1_w": P(mod.linear1, "weight", "linear1.weight"), "l1_b": P(mod.linear1, "bias", "linear1.bias"),
                "l2_w": P(mod.linear2, "weight", "linear2.weight"), "l2_b": P(mod.linear2, "bias", "linear2.bias")}

    def _mha_params(self, ir, target, mod):
        """An nn.MultiheadAttention's weights and settings, for _mha."""
        if mod.bias_k is not None or mod.add_zero_attn:
            raise Unsupported("nn.MultiheadAttention with add_bias_kv or add_zero_attn (module %r)" % target)
        E = mod.embed_dim

        def W(attr, t=None):
            t = getattr(mod, attr, None) if t is None else t
            return self._weight(ir, "%s.%s" % (target, attr), t) if t is not None else None
        # slices of the packed weight and bias: q, k, v, and k and v together (one GEMM when
        # key is value, as _in_projection_packed does)
        rows = {"q": (0, E), "k": (E, 2 * E), "v": (2 * E, 3 * E), "kv": (E, 3 * E)}

        def part(attr, c):
            t = getattr(mod, attr)
            lo, hi = rows[c]
            return self._weight(ir, "%s.%s.%s" % (target, attr, c), t[lo:hi]) if t is not None else None
        if mod._qkv_same_embed_dim:
            packed = W("in_proj_weight")
            w3 = [part("in_proj_weight", c) for c in "qkv"]
            kv_w, kv_b = part("in_proj_weight", "kv"), part("in_proj_bias", "kv")
        else:
            packed = kv_w = kv_b = None
            w3 = [W("%s_proj_weight" % c) for c in "qkv"]
        b3 = [part("in_proj_bias", c) for c in "qkv"]
        out_b = mod.out_proj.bias
        return {"num_heads": mod.num_heads, "batch_first": bool(mod.batch_first),
                "dropout": mod.dropout, "train": mod.training, "in_proj_weight": packed,
                "in_proj_bias": W("in_proj_bias") if packed is not None else None,
                "q_w": w3[0], "k_w": w3[1], "v_w": w3[2], "q_b": b3[0], "k_b": b3[1], "v_b": b3[2],
                "kv_w": kv_w, "kv_b": kv_b,
                "out_w": self._weight(ir, "%s.out_proj.weight" % target, mod.out_proj.weight),
                "out_b": (self._weight(ir, "%s.out_proj.bias" % target, out_b)
                          if out_b is not None else None)}

    @staticmethod
    def _leaf_args(ktype, args, kwargs, params):
        """A --leaf call: its tensor arguments (in order), then the module's parameters; for
        attention a True boolean argument (or causal=/is_causal=) sets causal."""
        tens = [a for a in list(args) + list(kwargs.values()) if isinstance(a, ITensor)]
        attrs = {}
        if ktype == "attention":
            flags = [a for a in args if isinstance(a, bool)]
            flags += [v for k, v in kwargs.items() if k in ("causal", "is_causal")]
            if any(flags):
                attrs["causal"] = True
        return {"type": ktype, "tensors": tens + params, "attrs": attrs}

    def _getitem(self, ir, n, args, r, loc, modpath):
        """x[...] on a tensor: a chain of slice/select/unsqueeze views and one tensor index."""
        x, idx = args[0], args[1]
        if not isinstance(x, ITensor):
            raise Unsupported("getitem on %s" % type(x).__name__)
        if not isinstance(idx, tuple):
            idx = (idx,)
        nreal = sum(1 for i in idx if i is not None and i is not Ellipsis and not isinstance(i, bool))
        items = []
        for i in idx:
            if i is Ellipsis:
                items.extend([slice(None)] * (len(x.shape) - nreal))
            else:
                items.append(i)
        cur = x
        dim = 0
        k = 0
        final = r

        steps = []

        def step(op, args_, shape, is_view, dtype=None):
            nonlocal cur, k
            k += 1
            t = ITensor("%s_%d" % (n.name, k), shape, dtype or cur.dtype, is_view=is_view)
            node = INode(op, args_, [t], "%s_%d" % (n.name, k), loc, modpath, "getitem")
            ir.nodes.append(node)
            steps.append(node)
            cur = t
        tensor_idx = [i for i in items if isinstance(i, ITensor)]
        if len(tensor_idx) > 1:
            raise Unsupported("indexing with several index tensors")
        for i in items:
            if i is None:
                shape = cur.shape[:dim] + (1,) + cur.shape[dim:]
                step("unsqueeze", {"self": cur, "dim": dim}, shape, True)
                dim += 1
            elif isinstance(i, slice):
                size = cur.shape[dim]
                st, en, sp = i.indices(size)
                if sp != 1:
                    raise Unsupported("strided slice (step %d)" % sp)
                en = max(en, st)
                if (st, en) != (0, size):
                    shape = cur.shape[:dim] + (en - st,) + cur.shape[dim + 1:]
                    step("slice", {"self": cur, "dim": dim, "start": st, "end": en, "step": 1},
                         shape, True)
                dim += 1
            elif isinstance(i, int) and not isinstance(i, bool):
                size = cur.shape[dim]
                ii = i + size if i < 0 else i
                shape = cur.shape[:dim] + cur.shape[dim + 1:]
                step("select", {"self": cur, "dim": dim, "index": ii}, shape, True)
            elif isinstance(i, ITensor):
                if i.dtype == "bool":
                    raise Unsupported("boolean mask indexing (data-dependent shape)")
                shape = cur.shape[:dim] + i.shape + cur.shape[dim + 1:]
                step("index", {"self": cur, "indices": [None] * dim + [i]}, shape, False)
                dim += len(i.shape)
            else:
                raise Unsupported("indexing with %r" % (i,))
        if cur is x:
            return x
        if isinstance(final, _TMeta) and tuple(final.shape) != cur.shape:
            raise Unsupported("indexing pattern (shape %s, expected %s)" % (cur.shape, final.shape))
        cur.name = n.name
        steps[-1].name = n.name
        return cur


def _trace_hint(e):
    s = str(e)
    if "symbolically traced variables cannot be used as inputs to control flow" in s:
        return (" (the model branches on a tensor value or shape; torch.fx cannot trace that: "
                "make the branch depend on a constructor argument, or use torch >= 2.1 "
                "with --frontend export)")
    return ""


def _getattr_path(obj, path):
    for p in path.split("."):
        obj = getattr(obj, p)
    return obj


def _flatten_tensors(v, out):
    if isinstance(v, ITensor):
        out.append(v)
    elif isinstance(v, (list, tuple)):
        for x in v:
            _flatten_tensors(x, out)
    elif isinstance(v, dict):
        for x in v.values():
            _flatten_tensors(x, out)


def _iter_args(v):
    if isinstance(v, dict):
        for x in v.values():
            yield from _iter_args(x)
    elif isinstance(v, (list, tuple)):
        for x in v:
            yield from _iter_args(x)
    else:
        yield v


def _fresh_outputs(name, r):
    if isinstance(r, _TMeta):
        return ITensor(name, r.shape, kdtype(r.dtype), kind="poison")
    if isinstance(r, (tuple, list)):
        return tuple(_fresh_outputs("%s_%d" % (name, i), x) for i, x in enumerate(r))
    return r


def _bind_to(b):
    """Tensor.to(...)/type(...) -> {'self', 'dtype'} (dtype None = unchanged)."""
    dtype = b.get("dtype")
    for a in b.get("args", []):
        if isinstance(a, (DTypeOf,)) or (torch is not None and isinstance(a, torch.dtype)):
            dtype = a
        elif isinstance(a, ITensor):
            dtype = DTypeOf(a)
        elif isinstance(a, str) and a.startswith("torch."):
            dtype = getattr(torch, a.split(".", 1)[1], None)
    return {"self": b["self"], "dtype": dtype}


LEAF_TYPES = {}  # class name -> kitsune op type (--leaf)


# ----------------------------------------------------------------------------------------------
# front end 2: torch.export (torch >= 2.1)
# ----------------------------------------------------------------------------------------------

# ATen op name -> canonical op of the mapper, with an argument rename
EXPORT_RENAME = {
    "_softmax": "softmax", "_log_softmax": "log_softmax", "native_layer_norm": "layer_norm",
    "_unsafe_view": "view", "_to_copy": "to", "max_pool2d_with_indices": "max_pool2d",
    "native_dropout": "dropout", "lift_fresh_copy": "alias", "alias": "alias",
    "_scaled_dot_product_flash_attention_for_cpu": "scaled_dot_product_attention",
    "_scaled_dot_product_flash_attention": "scaled_dot_product_attention",
    "_scaled_dot_product_efficient_attention": "scaled_dot_product_attention",
    "_scaled_dot_product_cudnn_attention": "scaled_dot_product_attention",
    "_native_batch_norm_legit_no_training": "batch_norm",
    "_native_batch_norm_legit": "batch_norm",
    "_native_batch_norm_legit_functional": "batch_norm",
    "native_batch_norm": "batch_norm", "convolution": "convolution",
    "split_with_sizes": "split", "concat": "cat", "true_divide": "div",
    "negative": "neg", "multiply": "mul", "subtract": "sub", "divide": "div",
    "rsub": "rsub", "expand_copy": "expand",
}


class ExportFrontEnd:
    name = "torch.export"

    def __init__(self, module, input_names, leaf_classes):
        if leaf_classes:
            raise ExportError("--leaf needs --frontend fx (torch.export has no leaf modules)")
        if not hasattr(torch, "export") or not hasattr(torch.export, "export"):
            raise ExportError("torch %s has no torch.export (needs torch >= 2.1); use --frontend fx"
                              % torch.__version__)
        self.module = module
        sig = inspect.signature(module.forward)
        unknown = [n for n in input_names if n not in sig.parameters]
        if unknown:
            raise ExportError("--input %s: forward() has no such argument (its arguments: %s)"
                              % (", ".join(unknown), ", ".join(sig.parameters)))
        self.order = [p for p in sig.parameters if p in input_names]
        self.frontend_name = "torch.export (torch %s)" % torch.__version__

    def run(self, inputs):
        kwargs = {n: inputs[n][0] for n in self.order}
        try:
            ep = torch.export.export(self.module, (), kwargs)
        except Exception as e:
            raise ExportError("torch.export could not export the model: %s: %s"
                              % (type(e).__name__, str(e).split("\n")[0]))
        return self._to_ir(ep, inputs)

    def _to_ir(self, ep, inputs):
        ir = IGraph("export")
        sig = ep.graph_signature
        p2fqn = {}
        for attr in ("inputs_to_parameters", "inputs_to_buffers", "inputs_to_lifted_tensor_constants"):
            p2fqn.update(getattr(sig, attr, {}) or {})
        user_inputs = list(getattr(sig, "user_inputs", []))
        nuser_out = len(getattr(sig, "user_outputs", []) or [])
        env = {}
        uin = 0
        # nodes whose only use is a buffer mutation (BatchNorm's num_batches_tracked += 1):
        # bookkeeping of the training loop, not part of the model's dataflow
        out_node = [n for n in ep.graph.nodes if n.op == "output"][0]
        outs0 = list(out_node.args[0]) if isinstance(out_node.args[0], (list, tuple)) else [out_node.args[0]]
        mutated = set(outs0[:len(outs0) - nuser_out]) if nuser_out else set()
        skip = set()
        for n in reversed(list(ep.graph.nodes)):
            if n.op == "call_function" and n.users and all(
                    u in skip or (u is out_node and n in mutated) for u in n.users):
                skip.add(n)
        for n in ep.graph.nodes:
            if n in skip:
                continue
            loc = location_from_stack(n.meta.get("stack_trace"))
            stack = n.meta.get("nn_module_stack") or {}
            modpath = ""
            if stack:
                last = list(stack.values())[-1]
                modpath = last[0] if isinstance(last, tuple) else str(last)
            if n.op == "placeholder":
                val = n.meta.get("val")
                if n.name in p2fqn or n.target in p2fqn:
                    fqn = p2fqn.get(n.name, p2fqn.get(n.target))
                    t = ITensor(fqn.replace(".", "_"), val.shape, kdtype(val.dtype), kind="weight", fqn=fqn)
                    ir.weights[fqn] = t
                    env[n] = t
                elif torch.is_tensor(val) or hasattr(val, "shape"):
                    name = n.name if n.name in inputs else (self.order[uin] if uin < len(self.order) else n.name)
                    uin += 1
                    t = ITensor(name, val.shape, kdtype(val.dtype), kind="input",
                                decl=inputs.get(name, (None, None))[1])
                    ir.inputs.append(t)
                    env[n] = t
                else:
                    env[n] = val
                continue
            if n.op == "get_attr":
                obj = _getattr_path(ep.graph_module, n.target)
                if torch.is_tensor(obj):
                    t = ITensor(n.target.replace(".", "_"), obj.shape, kdtype(obj.dtype), kind="weight", fqn=n.target)
                    ir.weights[n.target] = t
                    env[n] = t
                else:
                    env[n] = obj
                continue
            if n.op == "output":
                outs = list(n.args[0]) if isinstance(n.args[0], (list, tuple)) else [n.args[0]]
                if nuser_out:
                    outs = outs[len(outs) - nuser_out:]
                res = []
                _flatten_tensors([env.get(o) if isinstance(o, type(n)) else o for o in outs], res)
                ir.outputs = res
                continue
            args = _export_value(n.args, env)
            kwargs = _export_value(n.kwargs, env)
            val = n.meta.get("val")
            tgt = n.target
            if tgt is operator.getitem and isinstance(args[0], (tuple, list)):
                env[n] = args[0][args[1]]
                continue
            schema = getattr(tgt, "_schema", None)
            if schema is None:
                if not _has_fake(val):
                    env[n] = val  # symbolic-int arithmetic and the like
                    continue
                ir.trace_unsupported.append((_callable_name(tgt), loc, modpath))
                outs = _export_outs(n, val, modpath, False)
                for t in outs if isinstance(outs, tuple) else [outs]:
                    if isinstance(t, ITensor):
                        t.kind = "poison"
                env[n] = outs
                continue
            aten = schema.name.split("::", 1)[-1]
            if not schema.returns or (val is None and aten.startswith("_assert")):
                continue  # assertions, profiler markers: nothing to cost
            is_write = any(r.alias_info is not None and r.alias_info.is_write for r in schema.returns)
            target0 = env.get(n.args[0]) if (n.args and isinstance(n.args[0], type(n))) else None
            if is_write and not n.users and isinstance(target0, ITensor) and target0.kind == "weight":
                continue  # in-place buffer bookkeeping (BatchNorm's num_batches_tracked += 1)
            desc = "aten.%s.%s" % (aten, getattr(tgt, "_overloadname", "default") or "default")
            bound = {}
            for i, a in enumerate(schema.arguments):
                if i < len(args) and not a.kwarg_only:
                    bound[a.name] = args[i]
                elif a.name in kwargs:
                    bound[a.name] = kwargs[a.name]
                elif a.has_default_value():
                    bound[a.name] = a.default_value
                else:
                    bound[a.name] = None
            is_view = any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)
            if aten in ("_unsafe_view", "_reshape_alias", "lift_fresh_copy", "alias", "detach"):
                is_view = True
            if aten in ("contiguous", "reshape", "flatten", "unflatten", "reshape_as") and n.args:
                # "may alias" in the schema: a view when the input is contiguous, else a copy
                src = n.args[0].meta.get("val") if hasattr(n.args[0], "meta") else None
                if torch.is_tensor(src):
                    try:
                        is_view = bool(src.is_contiguous())
                    except Exception:
                        is_view = True
            if aten.endswith("_") and not aten.endswith("__") and aten[:-1] in ATEN_SPECS:
                aten = aten[:-1]
            op = EXPORT_RENAME.get(aten, aten)
            bound = _export_normalize(op, aten, bound)
            outs = _export_outs(n, val, modpath, is_view)
            ir.nodes.append(INode(op, bound, list(outs) if isinstance(outs, tuple) else [outs],
                                  _export_name(n, modpath), loc, modpath, desc))
            env[n] = outs
            if is_write and target0 is not None and isinstance(outs, ITensor):
                env[n.args[0]] = outs  # later reads of the mutated tensor see the new version
        return ir


def _has_fake(v):
    if torch.is_tensor(v):
        return True
    if isinstance(v, (tuple, list)):
        return any(_has_fake(x) for x in v)
    return False


def _export_name(n, modpath):
    return n.name


def _export_value(a, env):
    import torch.fx as fx
    if isinstance(a, fx.Node):
        return env.get(a)
    if isinstance(a, (list, tuple)):
        return type(a)(_export_value(x, env) for x in a)
    if isinstance(a, dict):
        return {k: _export_value(v, env) for k, v in a.items()}
    return a


def _export_outs(n, val, modpath, is_view):
    name = _export_name(n, modpath)
    if torch.is_tensor(val):
        return ITensor(name, val.shape, kdtype(val.dtype), is_view=is_view)
    if isinstance(val, (tuple, list)):
        op = n.target._schema.name.split("::")[-1] if hasattr(n.target, "_schema") else ""
        return tuple(ITensor(tuple_out_name(op, name, i), v.shape, kdtype(v.dtype), is_view=is_view)
                     if torch.is_tensor(v) else v for i, v in enumerate(val))
    return val


def _export_normalize(op, aten, b):
    """Bring ATen-schema arguments of the export graph to the forms the mapper reads."""
    if op == "softmax" or op == "log_softmax":
        return {"self": b.get("self"), "dim": b.get("dim")}
    if op == "layer_norm":
        return {"input": b.get("input"), "normalized_shape": b.get("normalized_shape"),
                "weight": b.get("weight"), "bias": b.get("bias"), "eps": b.get("eps")}
    if op == "to":
        return {"self": b.get("self"), "dtype": b.get("dtype")}
    if op == "dropout":
        return {"input": b.get("input"), "p": b.get("p"), "train": b.get("train")}
    if op == "batch_norm":
        tr = b.get("training", aten == "_native_batch_norm_legit_functional" or False)
        if aten == "_native_batch_norm_legit_no_training":
            tr = False
        return {"input": b.get("input"), "weight": b.get("weight"), "bias": b.get("bias"),
                "training": bool(tr), "eps": b.get("eps")}
    if op == "scaled_dot_product_attention":
        return {"query": b.get("query"), "key": b.get("key"), "value": b.get("value"),
                "attn_mask": b.get("attn_mask", b.get("attn_bias")),
                "is_causal": b.get("is_causal", False), "enable_gqa": b.get("enable_gqa", False)}
    if op == "split":
        return {"self": b.get("self"), "split_size": b.get("split_size", b.get("split_sizes")),
                "dim": b.get("dim", 0)}
    if op == "view" or op == "reshape":
        return {"self": b.get("self"), "size": b.get("size", b.get("shape"))}
    if op == "expand":
        return {"self": b.get("self"), "size": b.get("size")}
    if op == "sort" or op == "argsort":
        return {"self": b.get("self"), "dim": b.get("dim", -1), "descending": b.get("descending", False)}
    if op == "squeeze":
        d = b.get("dim", b.get("dims"))
        return {"self": b.get("self"), "dim": d}
    if op == "convolution":
        return b
    return b


# ----------------------------------------------------------------------------------------------
# the mapper: IR -> kitsune ops
# ----------------------------------------------------------------------------------------------

class KOp:
    __slots__ = ("name", "type", "inputs", "outputs", "attrs", "loc", "module", "flags", "dst", "src_op")

    def __init__(self, name, type_, inputs, outputs, attrs, loc, module, src_op):
        self.name = name
        self.type = type_
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.attrs = dict(attrs or {})
        self.loc = loc
        self.module = module
        self.flags = set()
        self.dst = None
        self.src_op = src_op


def _norm_dim(d, n):
    d = int(d)
    if d < 0:
        d += n
    if not 0 <= d < max(n, 1):
        raise Unsupported("dimension %d out of range for %d dimensions" % (d, n))
    return d


def _broadcast(a, b):
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            return None
        out.append(max(x, y))
    return tuple(out)


def _pair(v):
    if isinstance(v, (list, tuple)):
        v = list(v)
        return [int(v[0]), int(v[-1])] if len(v) else [0, 0]
    return [int(v), int(v)]


class Mapper:
    def __init__(self, ir, default_dtype, train=False):
        self.ir = ir
        self.default_dtype = default_dtype
        self.train = train
        self.tensors = {}      # kitsune name -> {"shape", "dtype", "kind"}
        self.ops = []
        self.kt = {}           # id(ITensor) -> kitsune name
        self.names = set()
        self.opnames = set()
        self.unsupported = []  # (desc, loc, module)
        self.warnings = []
        self.consts = {}
        self.notes = {}

    # -- tensors ------------------------------------------------------------------------------
    def _unique(self, base, pool):
        base = re.sub(r"[^A-Za-z0-9_]", "_", base) or "t"
        if base[0].isdigit():
            base = "t" + base
        name = base
        i = 1
        while name in pool:
            name = "%s_%d" % (base, i)
            i += 1
        pool.add(name)
        return name

    def new_tensor(self, base, shape, dtype, kind=None):
        name = self._unique(base, self.names)
        self.tensors[name] = {"shape": [int(s) for s in shape], "dtype": dtype, "kind": kind}
        return name

    def get(self, t):
        """kitsune name of IR tensor t (graph inputs and weights are created on first use)."""
        if not isinstance(t, ITensor):
            raise Unsupported("expected a tensor argument, got %r" % (t,))
        k = self.kt.get(id(t))
        if k is not None:
            return k
        if t.kind == "poison":
            raise Poisoned()
        if t.kind == "input":
            dt = t.decl if is_float_kdt(t.dtype) else t.dtype
            k = self.new_tensor(t.name, t.shape, dt or self.default_dtype, "input")
        elif t.kind == "weight":
            dt = self.default_dtype if is_float_kdt(t.dtype) else t.dtype
            k = self.new_tensor(t.name, t.shape, dt, "weight")
        else:
            raise Unsupported("tensor %s is not produced by any mapped op" % t.name)
        self.kt[id(t)] = k
        return k

    def dt(self, k):
        return self.tensors[k]["dtype"]

    def shape(self, k):
        return tuple(self.tensors[k]["shape"])

    def resolve_dtype(self, d):
        if d is None:
            return None
        if isinstance(d, DTypeOf):
            return self.dt(self.get(d.t))
        if isinstance(d, str):
            return d
        return kdtype(d)

    def out(self, node, i=0, like=(), dtype=None, shape=None, t=None):
        """Create the kitsune tensor of node.outs[i] (declared dtype from `like`)."""
        t = t if t is not None else node.outs[i]
        if is_float_kdt(t.dtype):
            d = dtype
            if d is None:
                fl = [self.dt(k) for k in like if is_float_kdt(self.dt(k))]
                if not fl:
                    d = self.default_dtype
                elif len(set(fl)) == 1:
                    d = fl[0]
                else:
                    d = "fp32"
        else:
            d = t.dtype
        k = self.new_tensor(t.name, shape if shape is not None else t.shape, d)
        self.kt[id(t)] = k
        return k

    def alias(self, t, k):
        self.kt[id(t)] = k

    def tmp(self, node, suffix, shape, dtype):
        return self.new_tensor("%s_%s" % (node.name, suffix), shape, dtype)

    def const(self, value, dtype):
        key = (value, dtype)
        if key not in self.consts:
            txt = ("%g" % value).replace("-", "m").replace(".", "p").replace("+", "")
            self.consts[key] = self.new_tensor("scalar_%s_%s" % (txt, dtype), [], dtype, "input")
        return self.consts[key]

    def emit(self, node, type_, inputs, outputs, attrs=None, suffix=None):
        base = node.name if suffix is None else "%s_%s" % (node.name, suffix)
        op = KOp(self._unique(base, self.opnames), type_, inputs, outputs, attrs, node.loc,
                 node.module, node.desc)
        self.ops.append(op)
        return op

    # -- driver -------------------------------------------------------------------------------
    def run(self):
        for desc, loc, mod in self.ir.trace_unsupported:
            self.unsupported.append((desc, loc, mod))
        for node in self.ir.nodes:
            h = getattr(self, "h_" + node.op, None)
            if h is None and node.op in UNARY_MAP:
                h = self.h_unary
            try:
                if h is None:
                    if any(isinstance(a, ITensor) and a.kind == "poison" for a in _iter_args(node.args)):
                        raise Poisoned()
                    raise Unsupported(node.desc)
                h(node)
            except Poisoned:
                for t in node.outs:
                    if isinstance(t, ITensor) and id(t) not in self.kt:
                        t.kind = "poison"
            except Unsupported as e:
                msg = str(e)
                if msg != node.desc and not msg.startswith(node.desc):
                    msg = "%s: %s" % (node.desc, msg)
                self.unsupported.append((msg, node.loc, node.module))
                for t in node.outs:
                    if isinstance(t, ITensor) and id(t) not in self.kt:
                        t.kind = "poison"
        outs = []
        for t in self.ir.outputs:
            if id(t) not in self.kt and t.kind in (None, "poison"):
                continue
            k = self.get(t)
            if self.tensors[k]["kind"] in ("input", "weight"):
                self.warnings.append("output %s is a graph input or weight; not marked as an output" % k)
                continue
            outs.append(k)
        self.outputs = outs
        for op in self.ops if not self.unsupported else []:
            for k in op.inputs + op.outputs:
                if self.tensors[k]["dtype"].startswith("?"):
                    self.unsupported.append(("%s: dtype %s has no kitsune equivalent"
                                             % (op.src_op, self.tensors[k]["dtype"][1:]), op.loc, op.module))
                    break
        if self.unsupported:
            return
        self.fold_copies()
        self.fold_matmul_transposes()
        self.fold_expands()
        self.lower_index_add()
        for k in outs:
            self.tensors[k]["kind"] = "output"
        self.dce()

    # -- post passes --------------------------------------------------------------------------
    def producers(self):
        return {o: op for op in self.ops for o in op.outputs}

    def consumers(self):
        c = {}
        for op in self.ops:
            for i in op.inputs:
                c.setdefault(i, []).append(op)
            if op.dst:
                c.setdefault(op.dst, []).append(op)
        return c

    def fold_copies(self):
        """copy (.contiguous()/clone/reshape copy) of a free transpose/slice/expand with no other
        reader -> that op materializes (transpose "copy": true), the copy disappears."""
        changed = True
        while changed:
            changed = False
            prod, cons = self.producers(), self.consumers()
            for op in list(self.ops):
                if op.type != "copy" or "contig" not in op.flags:
                    continue
                x = op.inputs[0]
                p = prod.get(x)
                if p is None or len(cons.get(x, [])) != 1 or x in self.outputs:
                    continue
                if p.type == "transpose" and p.attrs.get("copy") is False:
                    p.attrs["copy"] = True
                elif p.type in ("slice", "expand") and "free" in p.flags:
                    p.flags.discard("free")
                else:
                    continue
                p.outputs[0] = op.outputs[0]
                del self.tensors[x]
                self.ops.remove(op)
                changed = True
                break

    def fold_matmul_transposes(self):
        prod = self.producers()
        for op in self.ops:
            if op.type != "matmul":
                continue
            for i, key in ((0, "transpose_a"), (1, "transpose_b")):
                p = prod.get(op.inputs[i])
                if p is None or p.type != "transpose" or p.attrs.get("copy") is not False:
                    continue
                perm = p.attrs["perm"]
                n = len(perm)
                if n < 2 or list(perm) != list(range(n - 2)) + [n - 1, n - 2]:
                    continue
                op.inputs[i] = p.inputs[0]
                op.attrs[key] = not op.attrs.get(key, False)
            # torch.matmul folds [..., K] x [K, N] into one mm: that is kitsune's linear
            a, b = self.shape(op.inputs[0]), self.shape(op.inputs[1])
            if len(b) == 2 and len(a) >= 2 and not op.attrs.get("transpose_a"):
                op.type = "linear"
                tb = op.attrs.get("transpose_b", False)
                op.attrs = {"transpose_b": True} if tb else {}
            else:
                op.attrs = {k: v for k, v in op.attrs.items() if v}

    def fold_expands(self):
        """A free expand read only by broadcasting elementwise ops is not needed at all."""
        prod = self.producers()
        for op in self.ops:
            if op.type not in ("add", "sub", "mul", "div"):
                continue
            y = self.shape(op.outputs[0])
            for i in (0, 1):
                p = prod.get(op.inputs[i])
                if p is None or p.type != "expand" or "free" not in p.flags:
                    continue
                other = self.shape(op.inputs[1 - i])
                if _broadcast(self.shape(p.inputs[0]), other) == y:
                    op.inputs[i] = p.inputs[0]

    def lower_index_add(self):
        prod, cons = self.producers(), self.consumers()
        for op in list(self.ops):
            if op.dst is None:
                continue
            d = op.dst
            op.dst = None
            p = prod.get(d)
            if (p is not None and p.type == "fill" and p.attrs.get("value", 0) == 0
                    and len(cons.get(d, [])) == 1 and d not in self.outputs):
                # zero-initialised destination: kitsune's index_add/scatter_add starts from zero
                self.ops.remove(p)
                del self.tensors[d]
                continue
            # accumulate into a live tensor: out = dst + index_add(src) (an extra add kernel)
            y = op.outputs[0]
            t = self.new_tensor(y + "_part", self.shape(y), self.dt(y))
            op.outputs[0] = t
            i = self.ops.index(op)
            add = KOp(self._unique(op.name + "_acc", self.opnames), "add", [d, t], [y], {},
                      op.loc, op.module, op.src_op)
            self.ops.insert(i + 1, add)
            self.warnings.append("%s: index_add/scatter_add into a non-zero destination written as "
                                 "a zero-initialised %s plus an add (%s)" % (op.name, op.type, add.name))

    def dce(self):
        removable = {"view", "reshape", "transpose", "slice", "expand", "fill"}
        changed = True
        while changed:
            changed = False
            cons = self.consumers()
            for op in list(self.ops):
                if "optional" in op.flags:
                    if not any(o in cons or o in self.outputs for o in op.outputs):
                        self.ops.remove(op)
                        for o in op.outputs:
                            self.tensors.pop(o, None)
                        changed = True
                    continue
                if op.type not in removable:
                    continue
                if op.type == "transpose" and op.attrs.get("copy") is not False:
                    continue
                if op.type in ("slice", "expand") and "free" not in op.flags:
                    continue
                if op.type == "fill" and "exporter" not in op.flags:
                    continue
                if any(o in cons or o in self.outputs for o in op.outputs):
                    continue
                self.ops.remove(op)
                for o in op.outputs:
                    self.tensors.pop(o, None)
                changed = True
        used = set()
        for op in self.ops:
            used.update(op.inputs)
            used.update(op.outputs)
        for k in list(self.tensors):
            if k not in used and self.tensors[k]["kind"] not in ("input", "output"):
                del self.tensors[k]
            elif k not in used and self.tensors[k]["kind"] == "input" and k in self.consts.values():
                del self.tensors[k]

    # -- helpers for handlers -----------------------------------------------------------------
    def X(self, node, key="self"):
        if key not in node.args:
            for alt in ("self", "input"):
                if alt in node.args:
                    key = alt
                    break
        return self.get(node.args[key])

    def view_to(self, node, k, shape, suffix, final_t=None):
        """A free view of k to shape (no op if the shape is unchanged)."""
        if tuple(shape) == self.shape(k) and final_t is None:
            return k
        if final_t is not None:
            if tuple(final_t.shape) == self.shape(k):
                self.alias(final_t, k)
                return k
            y = self.out(node, t=final_t, dtype=self.dt(k))
        else:
            y = self.tmp(node, suffix, shape, self.dt(k))
        self.emit(node, "view", [k], [y], suffix=None if final_t is not None else suffix)
        return y

    # -- handlers -----------------------------------------------------------------------------
    def h_unary(self, node):
        x = self.X(node, "self") if "self" in node.args else self.X(node, "input")
        attrs = {}
        if node.op == "gelu":
            ap = node.args.get("approximate", "none")
            if ap and ap != "none":
                attrs["approximate"] = ap
        self.emit(node, UNARY_MAP[node.op], [x], [self.out(node, like=[x])], attrs)

    def h_alias(self, node):
        self.alias(node.outs[0], self.X(node))

    h_detach = h_alias

    def h_pow(self, node):
        x, e = node.args["self"], node.args["exponent"]
        if not isinstance(x, ITensor):
            raise Unsupported("scalar ** tensor")
        kx = self.get(x)
        m = {2: "square", 0.5: "sqrt", -0.5: "rsqrt", 1: None}
        if isinstance(e, ITensor) or e not in m:
            raise Unsupported("pow with exponent %r (only 2, 0.5, -0.5)" % (e,))
        if m[e] is None:
            self.alias(node.outs[0], kx)
            return
        self.emit(node, m[e], [kx], [self.out(node, like=[kx])])

    def _binary(self, node, ktype, a, b):
        ta, tb = isinstance(a, ITensor), isinstance(b, ITensor)
        if ta and tb:
            ka, kb = self.get(a), self.get(b)
            self.emit(node, ktype, [ka, kb], [self.out(node, like=[ka, kb])])
            return
        if not ta and not tb:
            raise Unsupported("scalar arithmetic produced a tensor")
        k = self.get(a if ta else b)
        s = b if ta else a
        if isinstance(s, bool) or not isinstance(s, (int, float)):
            raise Unsupported("operand %r" % (s,))
        intdiv = ktype == "div" and not is_float_kdt(self.dt(k))
        if ktype == "mul" or (ktype == "div" and ta and not intdiv):
            v = s if ktype == "mul" else (1.0 / s if s else math.inf)
            if float(v).is_integer() and abs(v) < 2 ** 62:
                attrs = {"value": int(v)}
            else:  # kitsune's scale takes a real constant (not costed)
                attrs = {"value": float(v)} if math.isfinite(v) else {}
            self.emit(node, "scale", [k], [self.out(node, like=[k])], attrs)
            return
        c = self.const(s, self.dt(k) if is_float_kdt(self.dt(k)) or isinstance(s, int) else self.default_dtype)
        ins = [k, c] if ta else [c, k]
        self.emit(node, ktype, ins, [self.out(node, like=[k])])

    def h_add(self, node):
        self._binary(node, "add", node.args["self"], node.args["other"])

    def h_sub(self, node):
        self._binary(node, "sub", node.args["self"], node.args["other"])

    def h_rsub(self, node):
        self._binary(node, "sub", node.args["other"], node.args["self"])

    def h_mul(self, node):
        self._binary(node, "mul", node.args["self"], node.args["other"])

    def h_div(self, node):
        self._binary(node, "div", node.args["self"], node.args["other"])

    def h_rdiv(self, node):
        self._binary(node, "div", node.args["other"], node.args["self"])

    def h_floor_divide(self, node):
        self._binary(node, "div", node.args["self"], node.args["other"])

    # matmuls
    def _matmul(self, node, ka, kb, t_out, attrs=None, suffix=None, out_k=None, kc=None):
        """A matmul of ka and kb into t_out (kc: a C operand added in the epilogue, already of a
        shape that broadcasts to the product)."""
        extra = [kc] if kc is not None else []
        a, b = self.shape(ka), self.shape(kb)
        if len(a) == 1:
            ka = self.view_to(node, ka, (1,) + a, "a2d")
        if len(b) == 1:
            kb = self.view_to(node, kb, b + (1,), "b2d")
        a2, b2 = self.shape(ka), self.shape(kb)
        m, n = a2[-2], b2[-1]
        batch = _broadcast(a2[:-2], b2[:-2])
        if batch is None:
            raise Unsupported("matmul batch dims do not broadcast")
        full = tuple(batch) + (m, n)
        if out_k is not None:
            y = out_k
        elif full == tuple(t_out.shape):
            y = self.out(node, t=t_out, like=[ka, kb])
            self.emit(node, "matmul", [ka, kb] + extra, [y], attrs, suffix)
            return y
        else:
            y = self.tmp(node, "mm", full, self.dt(ka))
        self.emit(node, "matmul", [ka, kb] + extra, [y], attrs, suffix)
        if out_k is None:
            self.view_to(node, y, t_out.shape, None, final_t=t_out)
        return y

    def h_matmul(self, node):
        ka, kb = self.get(node.args["self"]), self.get(node.args["other"])
        self._matmul(node, ka, kb, node.outs[0])

    def h_mm(self, node):
        ka, kb = self.get(node.args["self"]), self.get(node.args["mat2"])
        self._matmul(node, ka, kb, node.outs[0])

    h_bmm = h_mm

    def h_baddbmm(self, node):
        """beta*self + alpha*(batch1 @ batch2): one GEMM in PyTorch (alpha and beta in its
        epilogue). alpha and beta are free here too; a non-zero self is kitsune's matmul C
        operand (read in the epilogue) when it broadcasts to the product, else an add."""
        ka, kb = self.get(node.args["batch1"]), self.get(node.args["batch2"])
        beta = node.args.get("beta", 1)
        c = node.args.get("self")
        kc = self.get(c) if isinstance(c, ITensor) else None
        p = self.producers().get(kc) if kc is not None else None
        zero = p is not None and p.type == "fill" and p.attrs.get("value", 0) == 0
        if beta == 0 or kc is None or zero:
            self._matmul(node, ka, kb, node.outs[0])
            return
        a2, b2 = self.shape(ka), self.shape(kb)
        full = (tuple(_broadcast(a2[:-2], b2[:-2]) or ()) + (a2[-2], b2[-1])) if len(a2) >= 2 and len(b2) >= 2 else None
        if full is not None and _broadcast(self.shape(kc), full) == full and is_float_kdt(self.dt(kc)):
            self._matmul(node, ka, kb, node.outs[0], kc=kc)
            return
        y = self.tmp(node, "mm", node.outs[0].shape, self.dt(ka))
        self._matmul(node, ka, kb, node.outs[0], out_k=y, suffix="mm")
        self.emit(node, "add", [kc, y], [self.out(node, like=[y])])
        self.warnings.append("%s: baddbmm/addmm written as a matmul plus an add (kitsune's matmul "
                             "takes no C operand)" % node.name)

    def h_addmm(self, node):
        c, a, b = node.args["self"], node.args["mat1"], node.args["mat2"]
        kc, ka, kb = self.get(c), self.get(a), self.get(b)
        beta, alpha = node.args.get("beta", 1), node.args.get("alpha", 1)
        prod = self.producers()
        p = prod.get(kb)
        n = self.shape(kb)[-1]
        if (beta == 1 and alpha == 1 and self.shape(kc) == (n,) and len(self.shape(ka)) == 2
                and p is not None and p.type == "transpose" and p.attrs.get("copy") is False
                and len(self.shape(p.inputs[0])) == 2):
            y = self.out(node, like=[ka])
            self.emit(node, "linear", [ka, p.inputs[0], kc], [y], {"transpose_b": True})
            return
        node.args = {"self": c, "batch1": a, "batch2": b, "beta": beta, "alpha": alpha}
        self.h_baddbmm(node)

    def h_linear(self, node):
        x, w, b = node.args["input"], node.args["weight"], node.args.get("bias")
        kx, kw = self.get(x), self.get(w)
        if len(self.shape(kw)) != 2:
            raise Unsupported("linear with a %d-D weight" % len(self.shape(kw)))
        ins = [kx, kw]
        if b is not None:
            ins.append(self.get(b))
        if len(self.shape(kx)) == 1:
            ins[0] = self.view_to(node, kx, (1,) + self.shape(kx), "x2d")
            y = self.tmp(node, "2d", (1, self.shape(kw)[0]), self.dt(kx))
            self.emit(node, "linear", ins, [y], {"transpose_b": True})
            self.view_to(node, y, node.outs[0].shape, None, final_t=node.outs[0])
            return
        self.emit(node, "linear", ins, [self.out(node, like=[kx])], {"transpose_b": True})

    # concat / stack
    def h_cat(self, node):
        ts = [t for t in node.args["tensors"] if isinstance(t, ITensor)]
        ks = [self.get(t) for t in ts]
        ks = [k for k in ks if 0 not in self.shape(k)]
        nd = len(node.outs[0].shape)
        axis = _norm_dim(node.args.get("dim", 0), nd)
        if len(ks) == 1:
            self.alias(node.outs[0], ks[0])
            return
        self.emit(node, "concat", ks, [self.out(node, like=ks)], {"axis": axis})

    def h_stack(self, node):
        ts = node.args["tensors"]
        nd = len(node.outs[0].shape)
        axis = _norm_dim(node.args.get("dim", 0), nd)
        ks = []
        for i, t in enumerate(ts):
            k = self.get(t)
            s = self.shape(k)
            ks.append(self.view_to(node, k, s[:axis] + (1,) + s[axis:], "u%d" % i))
        self.emit(node, "concat", ks, [self.out(node, like=ks)], {"axis": axis})

    # softmax & norms
    def h_softmax(self, node):
        x = self.X(node)
        axis = _norm_dim(node.args.get("dim", -1) if node.args.get("dim") is not None else -1,
                         len(self.shape(x)))
        dt = self.resolve_dtype(node.args.get("dtype"))
        self.emit(node, "softmax", [x], [self.out(node, like=[x], dtype=dt)], {"axis": axis})

    def h_log_softmax(self, node):
        self.warnings.append("%s: log_softmax written as softmax (same kernel shape and cost)" % node.name)
        self.h_softmax(node)

    def h_layer_norm(self, node):
        x = self.X(node, "input")
        ns = node.args.get("normalized_shape")
        ns = list(ns) if isinstance(ns, (list, tuple)) else [ns]
        if len(ns) != 1:
            raise Unsupported("layer_norm over %d dimensions (kitsune normalizes the last one)" % len(ns))
        ins = [x]
        w, b = node.args.get("weight"), node.args.get("bias")
        if w is not None:
            ins.append(self.get(w))
        if b is not None:
            if w is None:
                raise Unsupported("layer_norm with a bias but no weight")
            ins.append(self.get(b))
        self.emit(node, "layernorm", ins, [self.out(node, like=[x])])

    def h_group_norm(self, node):
        """group_norm (and instance norm: a group per channel, num_groups -1) as ATen computes
        it: statistics and normalization over each group's C/G x spatial elements (a layer norm
        over a [N, G, C/G x spatial] view), then the per-channel scale and shift (a batchnorm
        with running statistics: one elementwise kernel)."""
        x = self.X(node, "input")
        s = self.shape(x)
        if len(s) < 2:
            raise Unsupported("group_norm on a %d-D input" % len(s))
        G = node.args["num_groups"]
        G = s[1] if G == -1 else int(G)
        if s[1] % G:
            raise Unsupported("group_norm: %d channels in %d groups" % (s[1], G))
        K = s[1] // G
        for d in s[2:]:
            K *= d
        v = self.view_to(node, x, (s[0], G, K), "grouped")
        n = self.tmp(node, "norm", (s[0], G, K), self.dt(x))
        self.emit(node, "layernorm", [v], [n], None, "norm")
        w, b = node.args.get("weight"), node.args.get("bias")
        if w is None and b is None:
            self.view_to(node, n, node.outs[0].shape, None, final_t=node.outs[0])
            return
        if w is None:
            raise Unsupported("group_norm with a bias but no weight")
        back = self.view_to(node, n, s, "ungrouped")
        ins = [back, self.get(w)] + ([self.get(b)] if b is not None else [])
        self.emit(node, "batchnorm", ins, [self.out(node, like=[x])], {"training": 0, "axis": 1})

    def h_rms_norm(self, node):
        x = self.X(node, "input")
        ns = node.args.get("normalized_shape")
        ns = list(ns) if isinstance(ns, (list, tuple)) else [ns]
        if len(ns) != 1:
            raise Unsupported("rms_norm over %d dimensions" % len(ns))
        ins = [x]
        if node.args.get("weight") is not None:
            ins.append(self.get(node.args["weight"]))
        self.emit(node, "rmsnorm", ins, [self.out(node, like=[x])])

    def h_scaled_dot_product_attention(self, node):
        q, k, v = (self.get(node.args[a]) for a in ("query", "key", "value"))
        for kk in (q, k, v):
            if len(self.shape(kk)) != 4:
                raise Unsupported("scaled_dot_product_attention on %d-D tensors (kitsune's attention "
                                  "takes [B, heads, seq, head_dim])" % len(self.shape(kk)))
        ins = [q, k, v]
        m = node.args.get("attn_mask")
        if isinstance(m, ITensor):  # read by the kernel, one element per score
            ins.append(self.get(m))
        elif m is not None:
            raise Unsupported("scaled_dot_product_attention with a %s mask" % type(m).__name__)
        if node.args.get("dropout_p"):
            self.warnings.append("%s: attention dropout ignored" % node.name)
        attrs = {"causal": True} if node.args.get("is_causal") else {}
        self.emit(node, "attention", ins, [self.out(node, like=[q])], attrs)

    def h_multi_head_attention(self, node):
        """nn.MultiheadAttention (see _mha)."""
        a = node.args
        kq, kk, kv = (self.get(a[x]) for x in ("query", "key", "value"))
        weights = node.outs[1] if len(node.outs) > 1 and isinstance(node.outs[1], ITensor) else None
        self._mha(node, a, kq, kk, kv, node.outs[0], weights, "")

    def _mha(self, node, a, kq, kk, kv, t_out, weights, pre):
        """nn.MultiheadAttention as PyTorch 2's forward runs it: the input projections (one GEMM
        with the packed weight when query, key and value are one tensor, one for q and one for
        k and v together when key is value; else one per input),
        one copy that lays the projections out as [B, heads, seq, head_dim], fused attention
        (need_weights=False) or, with need_weights=True, the unfused path that materializes the
        probabilities (scale, Q K^T, softmax, P V, and their mean over the heads), the heads
        copied back to [seq, B, E], the output projection; batch_first's result is a transposed
        view. Its result goes to t_out (None: a new tensor, returned); pre prefixes the names."""
        H, bf = a["num_heads"], a["batch_first"]
        if a.get("key_padding_mask") is not None:
            raise Unsupported("nn.MultiheadAttention with key_padding_mask")
        sq, sk = self.shape(kq), self.shape(kk)
        if len(sq) != 3 or len(sk) != 3:
            raise Unsupported("nn.MultiheadAttention on unbatched (2-D) inputs")
        if bf:
            B, L, E = sq
            S = sk[1]
        else:
            L, B, E = sq
            S = sk[0]
        hd = E // H
        dt = self.dt(kq)

        def linear(x, w, bias, suffix):
            ins = [x, self.get(w)] + ([self.get(bias)] if bias is not None else [])
            y = self.tmp(node, pre + suffix, self.shape(x)[:-1] + (self.shape(ins[1])[0],), self.dt(x))
            self.emit(node, "linear", ins, [y], {"transpose_b": True}, pre + suffix)
            return y

        def heads(y, groups, suffix):
            """[B, T, groups*E] (seq-first: [T, B, ...]) -> one copy [groups, B, H, T, hd]."""
            s = self.shape(y)
            T = s[1] if bf else s[0]
            v = self.view_to(node, y, s[:-1] + (groups, H, hd), pre + suffix + "_v")
            t = self.tmp(node, pre + suffix + "_t", (groups, B, H, T, hd), self.dt(y))
            self.emit(node, "transpose", [v], [t], {"perm": [2, 0, 3, 1, 4] if bf else [2, 1, 3, 0, 4]},
                      pre + suffix + "_t")
            return t

        def pick(t, g, suffix):
            s = self.shape(t)
            if s[0] > 1:
                one = self.tmp(node, pre + suffix + "_s", (1,) + s[1:], self.dt(t))
                op = self.emit(node, "slice", [t], [one], {"axis": 0, "start": g, "end": g + 1},
                               pre + suffix + "_s")
                op.flags.add("free")  # proj[0], proj[1], proj[2]: views
                t = one
            return self.view_to(node, t, s[1:], pre + suffix)

        if a.get("in_proj_weight") is not None and kq == kk == kv:
            qkv = heads(linear(kq, a["in_proj_weight"], a.get("in_proj_bias"), "in_proj"), 3, "qkv")
            q, k, v = (pick(qkv, i, c) for i, c in enumerate("qkv"))
        elif a.get("kv_w") is not None and kk == kv:
            q = pick(heads(linear(kq, a["q_w"], a["q_b"], "q_proj"), 1, "q"), 0, "q_h")
            kvh = heads(linear(kk, a["kv_w"], a["kv_b"], "kv_proj"), 2, "kv")
            k, v = pick(kvh, 0, "k"), pick(kvh, 1, "v")
        else:
            q, k, v = (pick(heads(linear(x, a[c + "_w"], a[c + "_b"], c + "_proj"), 1, c), 0, c + "_h")
                       for x, c in ((kq, "q"), (kk, "k"), (kv, "v")))
        mask = a.get("attn_mask")
        if mask is not None and not isinstance(mask, ITensor):
            raise Unsupported("nn.MultiheadAttention with a %s attn_mask" % type(mask).__name__)
        km = self.get(mask) if mask is not None else None
        if a.get("dropout") and a.get("train"):
            self.warnings.append("%s: attention dropout ignored" % node.name)
        o = self.tmp(node, pre + "attn", (B, H, L, hd), dt)
        if not a.get("need_weights"):
            attrs = {"causal": True} if a.get("is_causal") and km is None else {}
            self.emit(node, "attention", [q, k, v] + ([km] if km is not None else []), [o], attrs,
                      pre + "attn")
        else:
            qs = self.tmp(node, pre + "q_scaled", (B, H, L, hd), dt)
            self.emit(node, "scale", [q], [qs], {"value": float(hd) ** -0.5}, pre + "q_scaled")
            sc = self.tmp(node, pre + "scores", (B, H, L, S), dt)
            self.emit(node, "matmul", [qs, k] + ([km] if km is not None else []), [sc],
                      {"transpose_b": True}, pre + "scores")
            pr = self.tmp(node, pre + "probs", (B, H, L, S), dt)
            self.emit(node, "softmax", [sc], [pr], {"axis": 3}, pre + "probs")
            self.emit(node, "matmul", [pr, v], [o], None, pre + "pv")
            if weights is not None:
                if a.get("average_attn_weights", True):
                    y = self.out(node, 1, like=[pr])
                    self.emit(node, "reduce", [pr], [y], {"op": "mean", "axes": [1]}, pre + "weights")
                else:
                    self.alias(weights, pr)
        # [B, H, L, hd] -> [L, B, H, hd] (a copy) -> [L*B, E] -> out_proj -> [L, B, E]
        ot = self.tmp(node, pre + "heads_out", (L, B, H, hd), dt)
        self.emit(node, "transpose", [o], [ot], {"perm": [2, 0, 1, 3]}, pre + "heads_out")
        flat = self.view_to(node, ot, (L * B, E), pre + "flat")
        y = linear(flat, a["out_w"], a.get("out_b"), "out_proj")
        y3 = self.view_to(node, y, (L, B, E), pre + "out3")
        if bf:  # attn_output.transpose(1, 0): a view
            r = (self.out(node, t=t_out, dtype=dt) if t_out is not None
                 else self.tmp(node, pre + "out", (B, L, E), dt))
            self.emit(node, "transpose", [y3], [r], {"perm": [1, 0, 2], "copy": False},
                      None if t_out is not None else pre + "out")
            return r
        if t_out is not None:
            return self.view_to(node, y3, t_out.shape, None, final_t=t_out)
        return y3

    def h_transformer_encoder_layer(self, node):
        a = node.args
        y = self._tel(node, a["layer"], self.get(a["src"]), a.get("src_mask"),
                      a.get("src_key_padding_mask"), a.get("is_causal", False), "")
        self.alias(node.outs[0], y)

    def h_transformer_encoder(self, node):
        """nn.TransformerEncoder: its layers in turn (_tel), then its final layer norm."""
        a = node.args
        x = self.get(a["src"])
        for i, layer in enumerate(a["layers"]):
            x = self._tel(node, layer, x, a.get("mask"), a.get("src_key_padding_mask"),
                          a.get("is_causal", False), "l%d_" % i)
        if a.get("final_norm"):
            ins = [x] + [self.get(a[k]) for k in ("norm_w", "norm_b") if a.get(k) is not None]
            y = self.tmp(node, "norm", self.shape(x), self.dt(x))
            self.emit(node, "layernorm", ins, [y], None, "norm")
            x = y
        self.alias(node.outs[0], x)

    def _tel(self, node, a, x, mask, kpm, causal, pre):
        """nn.TransformerEncoderLayer's standard path: self-attention (_mha), the residual add,
        layer norm, linear, activation, linear, add, layer norm (norm_first: each norm before
        its block). Dropout is the identity in eval mode. PyTorch's inference fast path
        (torch._transformer_encoder_layer_fwd, taken without gradients when its conditions
        hold) fuses more; this is the path training and most inference take."""
        dt = self.dt(x)
        shape = self.shape(x)

        def norm(t, which, suffix):
            ins = [t] + [self.get(a[which + k]) for k in ("_w", "_b") if a.get(which + k) is not None]
            y = self.tmp(node, pre + suffix, shape, dt)
            self.emit(node, "layernorm", ins, [y], None, pre + suffix)
            return y

        def add(p, q, suffix):
            y = self.tmp(node, pre + suffix, shape, dt)
            self.emit(node, "add", [p, q], [y], None, pre + suffix)
            return y

        def lin(t, w, b, suffix):
            kw = self.get(w)
            y = self.tmp(node, pre + suffix, self.shape(t)[:-1] + (self.shape(kw)[0],), dt)
            self.emit(node, "linear", [t, kw] + ([self.get(b)] if b is not None else []), [y],
                      {"transpose_b": True}, pre + suffix)
            return y

        def ff(t):
            h = lin(t, a["l1_w"], a.get("l1_b"), "ff1")
            g = self.tmp(node, pre + "ff_act", self.shape(h), dt)
            self.emit(node, a["act"], [h], [g], None, pre + "ff_act")
            return lin(g, a["l2_w"], a.get("l2_b"), "ff2")

        mha = dict(a["mha"], attn_mask=mask, key_padding_mask=kpm, need_weights=False,
                   is_causal=causal)
        if a["norm_first"]:
            h = norm(x, "n1", "norm1")
            x = add(x, self._mha(node, mha, h, h, h, None, None, pre + "sa_"), "res1")
            return add(x, ff(norm(x, "n2", "norm2")), "res2")
        x = norm(add(x, self._mha(node, mha, x, x, x, None, None, pre + "sa_"), "res1"), "n1", "norm1")
        return norm(add(x, ff(x), "res2"), "n2", "norm2")

    # index ops
    def h_embedding(self, node):
        w, idx = self.get(node.args["weight"]), self.get(node.args["indices"])
        # sparse=True: the table's gradient is the looked-up rows (kitsune's sparse_grad)
        attrs = {"sparse_grad": 1} if node.args.get("sparse") else None
        self.emit(node, "embedding", [w, idx], [self.out(node, like=[w])], attrs)

    def h_index_select(self, node):
        x, idx = self.X(node), self.get(node.args["index"])
        axis = _norm_dim(node.args["dim"], len(self.shape(x)))
        if len(self.shape(idx)) == 0:
            idx = self.view_to(node, idx, (1,), "idx1d")
        self.emit(node, "index_select", [x, idx], [self.out(node, like=[x])], {"axis": axis})

    def h_index(self, node):
        x = self.X(node)
        inds = list(node.args["indices"])
        pos = [i for i, t in enumerate(inds) if t is not None]
        if len(pos) != 1:
            raise Unsupported("advanced indexing with %d index tensors" % len(pos))
        d = pos[0]
        it = inds[d]
        if it.dtype == "bool":
            raise Unsupported("boolean mask indexing (data-dependent shape)")
        idx = self.get(it)
        ishape = self.shape(idx)
        if len(ishape) != 1:
            n = 1
            for s in ishape:
                n *= s
            idx = self.view_to(node, idx, (n,), "idx1d")
        xs = self.shape(x)
        gshape = xs[:d] + (self.shape(idx)[0],) + xs[d + 1:]
        if gshape == tuple(node.outs[0].shape):
            self.emit(node, "index_select", [x, idx], [self.out(node, like=[x])], {"axis": d})
            return
        y = self.tmp(node, "sel", gshape, self.dt(x))
        self.emit(node, "index_select", [x, idx], [y], {"axis": d}, suffix="sel")
        self.view_to(node, y, node.outs[0].shape, None, final_t=node.outs[0])

    def _index_1d(self, node, k, axis, src_shape):
        """The 1-D index under a scatter_add index (x.view(-1,1).expand_as(src) patterns)."""
        s = self.shape(k)
        if len(s) == 1:
            return k
        prod = self.producers()
        cur, seen = k, []
        for _ in range(6):  # walk back through the expand/view chain
            p = prod.get(cur)
            if p is None or p.type not in ("expand", "view"):
                break
            cur = p.inputs[0]
            seen.append(cur)
        for c in reversed(seen):  # the earliest 1-D tensor of the right length
            cs = self.shape(c)
            if len(cs) == 1 and cs[0] == src_shape[axis]:
                return c
        for c in seen:
            cs = self.shape(c)
            nontriv = [i for i, v in enumerate(cs) if v != 1]
            if len(nontriv) == 1 and cs[nontriv[0]] == src_shape[axis]:
                return self.view_to(node, c, (cs[nontriv[0]],), "idx1d")
        raise Unsupported("scatter_add with a general index (kitsune's scatter_add takes a 1-D row "
                          "index: use index_add, or an index of the form idx.view(-1, 1).expand_as(src))")

    def _scatter(self, node, ktype, src, index, axis):
        ks, ki = self.get(src), self.get(index)
        axis = _norm_dim(axis, len(self.shape(ks)))
        ki = self._index_1d(node, ki, axis, self.shape(ks))
        dst = self.X(node)
        y = self.out(node, like=[dst, ks])
        op = self.emit(node, ktype, [ks, ki], [y], {"axis": axis})
        op.dst = dst

    def h_index_add(self, node):
        if node.args.get("alpha", 1) != 1:
            self.warnings.append("%s: index_add alpha ignored" % node.name)
        self._scatter(node, "index_add", node.args["source"], node.args["index"], node.args["dim"])

    def h_scatter_add(self, node):
        self._scatter(node, "scatter_add", node.args["src"], node.args["index"], node.args["dim"])

    # views and copies
    def _is_view(self, node):
        return node.outs[0].is_view

    def h_view(self, node):
        x = self.X(node)
        t = node.outs[0]
        if tuple(t.shape) == self.shape(x) and self._is_view(node):
            self.alias(t, x)
            return
        if not self._is_view(node):
            # reshape of a non-contiguous tensor: PyTorch copies (contiguous), then views
            c = self.tmp(node, "contig", self.shape(x), self.dt(x))
            op = self.emit(node, "copy", [x], [c], suffix="contig")
            op.flags.add("contig")
            x = c
            if tuple(t.shape) == self.shape(x):
                self.alias(t, x)
                return
        self.emit(node, "view", [x], [self.out(node, dtype=self.dt(x))])

    h_reshape = h_view
    h_flatten = h_view
    h_unflatten = h_view
    h_unsqueeze = h_view
    h_squeeze = h_view
    h_view_as = h_view
    h_reshape_as = h_view
    h__reshape_alias = h_view

    def h_contiguous(self, node):
        x = self.X(node)
        if self._is_view(node):
            self.alias(node.outs[0], x)
            return
        op = self.emit(node, "copy", [x], [self.out(node, dtype=self.dt(x))])
        op.flags.add("contig")

    def h_clone(self, node):
        x = self.X(node)
        op = self.emit(node, "copy", [x], [self.out(node, dtype=self.dt(x))])
        op.flags.add("contig")

    def _transpose(self, node, perm):
        x = self.X(node)
        if list(perm) == list(range(len(perm))):
            self.alias(node.outs[0], x)
            return
        copy = not self._is_view(node)
        self.emit(node, "transpose", [x], [self.out(node, dtype=self.dt(x))],
                  {"perm": list(perm), "copy": copy})

    def h_transpose(self, node):
        n = len(node.args["self"].shape)
        a, b = _norm_dim(node.args["dim0"], n), _norm_dim(node.args["dim1"], n)
        perm = list(range(n))
        perm[a], perm[b] = perm[b], perm[a]
        self._transpose(node, perm)

    def h_t(self, node):
        n = len(node.args["self"].shape)
        if n < 2:
            self.alias(node.outs[0], self.X(node))
            return
        self._transpose(node, [1, 0])

    def h_permute(self, node):
        n = len(node.args["self"].shape)
        dims = node.args.get("dims")
        self._transpose(node, [_norm_dim(d, n) for d in dims])

    def _slice(self, node, t_out, x, axis, start, end, suffix=None):
        size = self.shape(x)[axis]
        if start == 0 and end == size:
            self.alias(t_out, x)
            return x
        y = self.out(node, t=t_out, dtype=self.dt(x))
        op = self.emit(node, "slice", [x], [y], {"axis": axis, "start": int(start), "end": int(end)}, suffix)
        if t_out.is_view:
            op.flags.add("free")
        return y

    def h_slice(self, node):
        x = self.X(node)
        n = len(self.shape(x))
        axis = _norm_dim(node.args.get("dim", 0), n)
        size = self.shape(x)[axis]
        start, end, step = node.args.get("start"), node.args.get("end"), node.args.get("step", 1)
        st, en, sp = slice(start, end, step).indices(size)
        if sp != 1:
            raise Unsupported("strided slice (step %d)" % sp)
        self._slice(node, node.outs[0], x, axis, st, max(st, en))

    def h_narrow(self, node):
        x = self.X(node)
        axis = _norm_dim(node.args["dim"], len(self.shape(x)))
        st = int(node.args["start"])
        if st < 0:
            st += self.shape(x)[axis]
        self._slice(node, node.outs[0], x, axis, st, st + int(node.args["length"]))

    def h_select(self, node):
        x = self.X(node)
        axis = _norm_dim(node.args["dim"], len(self.shape(x)))
        i = int(node.args["index"])
        if i < 0:
            i += self.shape(x)[axis]
        s = self.shape(x)
        tmp = ITensor(node.outs[0].name + "_sl", s[:axis] + (1,) + s[axis + 1:], node.outs[0].dtype,
                      is_view=node.outs[0].is_view)
        k = self._slice(node, tmp, x, axis, i, i + 1, suffix="sl")
        self.emit(node, "view", [k], [self.out(node, dtype=self.dt(k))])

    def _split_outs(self, node, x, axis, sizes):
        start = 0
        for i, (t, sz) in enumerate(zip(node.outs, sizes)):
            if isinstance(t, ITensor):
                self._slice(node, t, x, axis, start, start + sz, suffix=None if i == 0 else str(i))
            start += sz

    def h_split(self, node):
        x = self.X(node)
        axis = _norm_dim(node.args.get("dim", 0), len(self.shape(x)))
        self._split_outs(node, x, axis, [t.shape[axis] for t in node.outs])

    h_chunk = h_split
    h_tensor_split = h_split

    def h_unbind(self, node):
        x = self.X(node)
        axis = _norm_dim(node.args.get("dim", 0), len(self.shape(x)))
        s = self.shape(x)
        for i, t in enumerate(node.outs):
            tmp = ITensor(t.name + "_sl", s[:axis] + (1,) + s[axis + 1:], t.dtype, is_view=True)
            k = self._slice(node, tmp, x, axis, i, i + 1, suffix="sl%d" % i)
            y = self.out(node, t=t, dtype=self.dt(k))
            self.emit(node, "view", [k], [y], suffix=str(i))

    def h_expand(self, node):
        x = self.X(node)
        t = node.outs[0]
        if tuple(t.shape) == self.shape(x):
            self.alias(t, x)
            return
        op = self.emit(node, "expand", [x], [self.out(node, dtype=self.dt(x))])
        if t.is_view:
            op.flags.add("free")

    h_expand_as = h_expand
    h_broadcast_to = h_expand

    # reductions
    def _reduce(self, node, rop):
        x = self.X(node)
        n = len(self.shape(x))
        dim = node.args.get("dim")
        if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
            axes = list(range(n))
        elif isinstance(dim, (list, tuple)):
            axes = sorted(_norm_dim(d, n) for d in dim)
        else:
            axes = [_norm_dim(dim, n)]
        keep = bool(node.args.get("keepdim", False))
        dt = self.resolve_dtype(node.args.get("dtype"))
        attrs = {"op": rop, "axes": axes}
        if keep:
            attrs["keepdim"] = True
        want = tuple(1 if i in axes else s for i, s in enumerate(self.shape(x)) if keep or i not in axes)
        if want == tuple(node.outs[0].shape):
            self.emit(node, "reduce", [x], [self.out(node, like=[x], dtype=dt)], attrs)
        else:  # e.g. a full reduction to a 0-d tensor
            y = self.tmp(node, "red", want if want else (1,), dt or self.dt(x))
            if not want:
                attrs["keepdim"] = True
                y = self.tmp(node, "red", (1,) * n, dt or self.dt(x))
            self.emit(node, "reduce", [x], [y], attrs, suffix="red")
            self.view_to(node, y, node.outs[0].shape, None, final_t=node.outs[0])

    def h_sum(self, node):
        self._reduce(node, "sum")

    def h_mean(self, node):
        self._reduce(node, "mean")

    def h_amax(self, node):
        self._reduce(node, "max")

    def h_max(self, node):
        if node.args.get("dim") is None:
            self._reduce(node, "max")
            return
        self._reduce(node, "max")
        if len(node.outs) > 1 and isinstance(node.outs[1], ITensor):
            x = self.X(node)
            axis = _norm_dim(node.args["dim"], len(self.shape(x)))
            n0 = len(self.ops)
            self._argmax_out(node, x, axis, bool(node.args.get("keepdim")), node.outs[1], "idx")
            for op in self.ops[n0:]:
                op.flags.add("optional")  # only if the indices are read

    # casts
    def h_to(self, node):
        x = self.X(node)
        d = self.resolve_dtype(node.args.get("dtype"))
        if d is None or d == self.dt(x):
            self.alias(node.outs[0], x)
            return
        self.emit(node, "cast", [x], [self.out(node, dtype=d)])

    def _cast_to(self, node, d):
        node.args = {"self": node.args["self"], "dtype": d}
        self.h_to(node)

    def h_float(self, node):
        self._cast_to(node, "fp32")

    def h_half(self, node):
        self._cast_to(node, "fp16")

    def h_bfloat16(self, node):
        self._cast_to(node, "bf16")

    def h_double(self, node):
        self._cast_to(node, "fp32")

    def h_long(self, node):
        self._cast_to(node, "int64")

    def h_int(self, node):
        self._cast_to(node, "int32")

    def h_bool(self, node):
        self._cast_to(node, "bool")

    def h_type_as(self, node):
        self._cast_to(node, DTypeOf(node.args["other"]))

    # creation
    def _fill(self, node, value):
        like = node.args.get("self") if isinstance(node.args.get("self"), ITensor) else None
        dt = self.resolve_dtype(node.args.get("dtype"))
        if dt is None and like is not None:
            dt = self.dt(self.get(like))
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            value = 0
        attrs = {"value": int(value)} if float(value).is_integer() else {}
        op = self.emit(node, "fill", [], [self.out(node, dtype=dt)], attrs)
        op.flags.add("exporter")

    def h_zeros(self, node):
        self._fill(node, 0)

    h_zeros_like = h_zeros
    h_new_zeros = h_zeros
    h_empty = h_zeros
    h_empty_like = h_zeros
    h_new_empty = h_zeros

    def h_ones(self, node):
        self._fill(node, 1)

    h_ones_like = h_ones
    h_new_ones = h_ones

    def h_full(self, node):
        self._fill(node, node.args.get("fill_value", 0))

    h_full_like = h_full
    h_new_full = h_full

    def h_arange(self, node):
        self.notes["arange"] = "torch.arange is written as a fill (one write per element)"
        self._fill(node, 0)

    # dropout
    def h_dropout(self, node):
        x = self.X(node, "input")
        train = bool(node.args.get("train"))
        p = float(node.args.get("p") or 0)
        if not train or p == 0:
            self.alias(node.outs[0], x)
            return
        y = self.out(node, like=[x])
        mt = node.outs[1] if len(node.outs) > 1 and isinstance(node.outs[1], ITensor) else None
        if mt is not None:
            mask = self.out(node, t=mt, dtype="bool")
        else:
            mask = self.tmp(node, "mask", self.shape(x), "bool")
        self.emit(node, "dropout", [x], [y, mask], {"p_permille": int(round(p * 1000))})

    # not-yet-supported families (kitsune's op table will get them)
    def h_conv2d(self, node):
        x, w = self.X(node, "input"), self.get(node.args["weight"])
        if len(self.shape(x)) != 4:
            raise Unsupported("conv2d on a %d-D input (kitsune's conv2d takes [N, C, H, W])" % len(self.shape(x)))
        kh, kw = self.shape(w)[2], self.shape(w)[3]
        dil = _pair(node.args.get("dilation", 1))
        pad = node.args.get("padding", 0)
        if isinstance(pad, str):
            if pad == "valid":
                pad = [0, 0]
            elif pad == "same":
                pad = [dil[0] * (kh - 1) // 2, dil[1] * (kw - 1) // 2]
            else:
                raise Unsupported("conv2d padding %r" % pad)
        ins = [x, w]
        if node.args.get("bias") is not None:
            ins.append(self.get(node.args["bias"]))
        attrs = {"stride": _pair(node.args.get("stride", 1)), "padding": _pair(pad),
                 "dilation": dil, "groups": int(node.args.get("groups", 1)), "layout": "nchw"}
        self.emit(node, "conv2d", ins, [self.out(node, like=[x])], attrs)

    def h_conv1d(self, node):
        """A 1-D convolution as cuDNN runs it: a 2-D one over a height-1 image ([N, C, L] ->
        [N, C, 1, L], the weight [Cout, C/g, K] -> [Cout, C/g, 1, K]: free views)."""
        x, w = self.X(node, "input"), self.get(node.args["weight"])
        sx, sw = self.shape(x), self.shape(w)
        if len(sx) != 3:
            raise Unsupported("conv1d on a %d-D input (batched [N, C, L] only)" % len(sx))
        k = sw[2]
        dil = int(_pair(node.args.get("dilation", 1))[0])
        pad = node.args.get("padding", 0)
        if isinstance(pad, str):
            if pad == "valid":
                pad = 0
            elif pad == "same":
                pad = dil * (k - 1) // 2
            else:
                raise Unsupported("conv1d padding %r" % pad)
        pad = int(_pair(pad)[0])
        x4 = self.view_to(node, x, (sx[0], sx[1], 1, sx[2]), "x4d")
        w4 = self.view_to(node, w, (sw[0], sw[1], 1, k), "w4d")
        ins = [x4, w4]
        if node.args.get("bias") is not None:
            ins.append(self.get(node.args["bias"]))
        t_out = node.outs[0]
        y4 = self.tmp(node, "y4d", (t_out.shape[0], t_out.shape[1], 1, t_out.shape[2]), self.dt(x))
        self.emit(node, "conv2d", ins, [y4],
                  {"stride": [1, int(_pair(node.args.get("stride", 1))[0])], "padding": [0, pad],
                   "dilation": [1, dil], "groups": int(node.args.get("groups", 1)), "layout": "nchw"})
        self.view_to(node, y4, t_out.shape, None, final_t=t_out)

    def h_interpolate(self, node):
        """Upsampling by integer factors as nearest-neighbour upsampling is computed: every input
        element written factor_h x factor_w times (a view [N, C, H, 1, W, 1], a materialized
        expand to [N, C, H, fh, W, fw], a view to the output; its gradient sums each block
        back). Other modes (bilinear, bicubic) move the same bytes; their few FLOPs per output
        element are not costed (warned)."""
        x = self.X(node, "input")
        s, t = self.shape(x), tuple(node.outs[0].shape)
        if len(s) not in (3, 4) or len(t) != len(s) or t[:2] != s[:2]:
            raise Unsupported("interpolate from %s to %s" % (list(s), list(t)))
        f = [t[i] // s[i] for i in range(2, len(s))]
        if any(t[i] % s[i] or t[i] < s[i] for i in range(2, len(s))):
            raise Unsupported("interpolate by a non-integer factor or downsampling (%s to %s)" % (list(s), list(t)))
        mode = node.args.get("mode", "nearest")
        if mode not in ("nearest", "nearest-exact"):
            self.warnings.append("%s: %s interpolation costed as nearest (the same bytes; its "
                                 "arithmetic is not costed)" % (node.name, mode))
        split = s[:2]
        for i in range(2, len(s)):
            split += (s[i], 1)
        wide = s[:2]
        for i, fi in enumerate(f):
            wide += (s[2 + i], fi)
        v = self.view_to(node, x, split, "split")
        e = self.tmp(node, "rep", wide, self.dt(x))
        self.emit(node, "expand", [v], [e], None, "rep")
        self.view_to(node, e, t, None, final_t=node.outs[0])

    h_upsample_nearest2d = h_interpolate
    h_upsample_bilinear2d = h_interpolate

    def h_conv_transpose2d(self, node):
        """A transposed convolution as cuDNN runs it: the data gradient of the convolution it
        inverts (conv2d_dgrad: x plays the output gradient, the [C_in, C_out/groups, KH, KW]
        weight the forward weight), then the bias added by its own kernel (PyTorch adds it
        after cuDNN's call). Training derives its gradients (docs/training.md)."""
        x, w = self.X(node, "input"), self.get(node.args["weight"])
        if len(self.shape(x)) != 4:
            raise Unsupported("conv_transpose2d on a %d-D input ([N, C, H, W] only)" % len(self.shape(x)))
        attrs = {"stride": _pair(node.args.get("stride", 1)), "padding": _pair(node.args.get("padding", 0)),
                 "dilation": _pair(node.args.get("dilation", 1)), "groups": int(node.args.get("groups", 1)),
                 "layout": "nchw"}
        b = node.args.get("bias")
        if b is None:
            self.emit(node, "conv2d_dgrad", [x, w], [self.out(node, like=[x])], attrs)
            return
        t_out = node.outs[0]
        y = self.tmp(node, "conv", t_out.shape, self.dt(x))
        self.emit(node, "conv2d_dgrad", [x, w], [y], attrs, "conv")
        kb = self.get(b)
        bv = self.view_to(node, kb, (self.shape(kb)[0], 1, 1), "bias3d")
        self.emit(node, "add", [y, bv], [self.out(node, like=[x])])

    def h_convolution(self, node):
        if node.args.get("transposed"):
            if len(node.args["input"].shape) != 4:
                raise Unsupported("transposed convolution on a %d-D input" % len(node.args["input"].shape))
            self.h_conv_transpose2d(node)
            return
        n = len(node.args["input"].shape)
        if n == 3:
            self.h_conv1d(node)
            return
        if n != 4:
            raise Unsupported("convolution on a %d-D input (1-D and 2-D convolutions only)" % n)
        self.h_conv2d(node)

    def h_batch_norm(self, node):
        x = self.X(node, "input")
        ins = [x]
        if node.args.get("weight") is not None:
            ins.append(self.get(node.args["weight"]))
            if node.args.get("bias") is not None:
                ins.append(self.get(node.args["bias"]))
        tr = 1 if node.args.get("training") else 0
        self.emit(node, "batchnorm", ins, [self.out(node, like=[x])], {"training": tr, "axis": 1})

    def _pool(self, node, kind):
        x = self.X(node)
        k = _pair(node.args["kernel_size"])
        st = node.args.get("stride")
        st = k if st is None or (isinstance(st, (list, tuple)) and len(st) == 0) else _pair(st)
        attrs = {"op": kind, "kernel": k, "stride": st, "padding": _pair(node.args.get("padding", 0))}
        dil = _pair(node.args.get("dilation", 1))
        if dil != [1, 1]:
            raise Unsupported("dilated pooling")
        if node.args.get("ceil_mode"):
            self.warnings.append("%s: ceil_mode pooling (the output shape is written as traced)" % node.name)
        self.emit(node, "pool2d", [x], [self.out(node, like=[x])], attrs)

    def h_max_pool2d(self, node):
        self._pool(node, "max")

    def h_avg_pool2d(self, node):
        self._pool(node, "avg")

    def h_adaptive_avg_pool2d(self, node):
        x = self.X(node)
        s = self.shape(x)
        if len(s) != 4:
            raise Unsupported("adaptive_avg_pool2d on a %d-D input" % len(s))
        oh, ow = node.outs[0].shape[-2:]
        if (oh, ow) == (1, 1):
            self.emit(node, "reduce", [x], [self.out(node, like=[x])],
                      {"op": "mean", "axes": [2, 3], "keepdim": True})
        elif (oh, ow) == s[-2:]:
            self.alias(node.outs[0], x)
        elif s[2] % oh == 0 and s[3] % ow == 0:
            k = [s[2] // oh, s[3] // ow]
            self.emit(node, "pool2d", [x], [self.out(node, like=[x])],
                      {"op": "avg", "kernel": k, "stride": k, "padding": [0, 0]})
        else:
            raise Unsupported("adaptive_avg_pool2d to %dx%d from %dx%d" % (oh, ow, s[2], s[3]))

    def h_topk(self, node):
        x = self.X(node)
        axis = _norm_dim(node.args.get("dim", -1), len(self.shape(x)))
        vals = self.out(node, 0, like=[x])
        idx = self.out(node, 1, dtype="int64")
        self.emit(node, "topk", [x], [vals, idx], {"k": int(node.args["k"]), "axis": axis})

    def _argmax_out(self, node, x, axis, keep, t, suffix=None):
        s = self.shape(x)
        flat = s[:axis] + s[axis + 1:]
        if keep:
            y = self.tmp(node, "argmax", flat, "int64")
            self.emit(node, "argmax", [x], [y], {"axis": axis}, suffix=suffix or "argmax")
            self.view_to(node, y, t.shape, None, final_t=t)
        else:
            self.emit(node, "argmax", [x], [self.out(node, t=t, dtype="int64")], {"axis": axis}, suffix=suffix)

    def h_argmax(self, node):
        x = self.X(node)
        if node.args.get("dim") is None:
            raise Unsupported("argmax over all elements (give dim=)")
        axis = _norm_dim(node.args["dim"], len(self.shape(x)))
        self._argmax_out(node, x, axis, bool(node.args.get("keepdim")), node.outs[0])

    def h_sort(self, node):
        x = self.X(node)
        axis = _norm_dim(node.args.get("dim", -1), len(self.shape(x)))
        vals = self.out(node, 0, like=[x])
        idx = self.out(node, 1, dtype="int64")
        self.emit(node, "sort", [x], [vals, idx], {"axis": axis})

    def h_argsort(self, node):
        x = self.X(node)
        axis = _norm_dim(node.args.get("dim", -1), len(self.shape(x)))
        vals = self.tmp(node, "values", self.shape(x), self.dt(x))
        idx = self.out(node, 0, dtype="int64")
        self.emit(node, "sort", [x], [vals, idx], {"axis": axis})

    def h_cumsum(self, node):
        x = self.X(node)
        axis = _norm_dim(node.args["dim"], len(self.shape(x)))
        dt = self.resolve_dtype(node.args.get("dtype"))
        self.emit(node, "cumsum", [x], [self.out(node, like=[x], dtype=dt)], {"axis": axis})

    def h_kitsune_leaf(self, node):
        ks = [self.get(t) for t in node.args["tensors"]]
        self.emit(node, node.args["type"], ks, [self.out(node, like=ks[:1])], node.args.get("attrs"))

    def h_index_copy(self, node):
        dst, idx, src = self.X(node), self.get(node.args["index"]), self.get(node.args["source"])
        axis = _norm_dim(node.args["dim"], len(self.shape(dst)))
        self.emit(node, "index_copy", [dst, idx, src], [self.out(node, like=[dst])], {"axis": axis})


UNARY_MAP = {"relu": "relu", "gelu": "gelu", "silu": "silu", "sigmoid": "sigmoid", "tanh": "tanh",
             "exp": "exp", "log": "log", "neg": "neg", "abs": "abs", "sqrt": "sqrt",
             "rsqrt": "rsqrt", "square": "square", "leaky_relu": "leaky_relu", "elu": "elu",
             "softplus": "softplus", "mish": "mish", "hardswish": "hardswish",
             "hardsigmoid": "hardsigmoid", "hardtanh": "hardtanh"}


# ----------------------------------------------------------------------------------------------
# parameters: fit every integer of the graph over the runs
# ----------------------------------------------------------------------------------------------

def _structure(g):
    """Everything of a mapped graph except its integers (shape entries, integer attrs)."""
    def attr_skel(v):
        if isinstance(v, bool) or isinstance(v, str):
            return v
        if isinstance(v, int):
            return "#"
        if isinstance(v, list):
            return [attr_skel(x) for x in v]
        return v
    ts = [(k, len(v["shape"]), v["dtype"], v["kind"]) for k, v in g["tensors"].items()]
    ops = [(o["name"], o["type"], tuple(o["inputs"]), tuple(o["outputs"]),
            json.dumps({k: attr_skel(v) for k, v in o["attrs"].items()}, sort_keys=True))
           for o in g["ops"]]
    return ts, ops


def _fmt_frac(c):
    return str(c.numerator) if c.denominator == 1 else "%d/%d" % (c.numerator, c.denominator)


def fit_value(vals, runs, names):
    """vals[r]: the integer in run r; runs[r]: dict param -> value; returns int or expression."""
    v0 = vals[0]
    if all(v == v0 for v in vals):
        return v0
    base = runs[0]
    # run j+1 doubles param j; the last run (if present) triples all of them
    per = {}
    for j, p in enumerate(names):
        per[p] = vals[1 + j]
    check = vals[1 + len(names)] if len(vals) > 1 + len(names) else None
    check_run = runs[1 + len(names)] if check is not None else None
    # monomial c * prod P^e
    if v0 != 0:
        exps = {}
        ok = True
        for p in names:
            r = Fraction(per[p], v0)
            e = None
            for cand in range(0, 5):
                if r == Fraction(2 ** cand):
                    e = cand
                    break
            if e is None:
                ok = False
                break
            exps[p] = e
        if ok and any(exps.values()):
            denom = 1
            for p in names:
                denom *= base[p] ** exps[p]
            c = Fraction(v0, denom)
            good = True
            if check_run is not None:
                pred = c
                for p in names:
                    pred *= check_run[p] ** exps[p]
                good = pred == check
            if good:
                parts = []
                for p in names:
                    parts += [p] * exps[p]
                s = "*".join(parts)
                if c.numerator != 1:
                    s += "*%d" % c.numerator
                if c.denominator != 1:
                    s += "/%d" % c.denominator
                return s
    # separable linear: sum a_j P_j + b
    coef = {}
    for p in names:
        coef[p] = Fraction(per[p] - v0, base[p])
    b = Fraction(v0) - sum(coef[p] * base[p] for p in names)
    good = all(c.denominator == 1 for c in coef.values()) and b.denominator == 1
    if good and check_run is not None:
        good = sum(coef[p] * check_run[p] for p in names) + b == check
    if good:
        terms = []
        for p in names:
            a = coef[p]
            if a == 0:
                continue
            t = p if a == 1 else ("%s*%s" % (p, _fmt_frac(a)) if a > 0 else None)
            if t is None:
                t = "-%s*%s" % (p, _fmt_frac(-a)) if a != -1 else "-" + p
                terms.append(t)
            else:
                terms.append(("+" if terms else "") + t)
        s = "".join(terms)
        if b > 0:
            s += "+%s" % _fmt_frac(b)
        elif b < 0:
            s += "-%s" % _fmt_frac(-b)
        return s
    return None


# integer attributes that are sizes (the value-matching fallback may name them); axes, perms,
# strides... are never rewritten by value
SIZE_ATTRS = {"start", "end", "k"}


def numeric_expr(v, params):
    """Fallback without perturbation runs: equal to a param, or a product of distinct params."""
    names = list(params)
    for p in names:
        if v == params[p]:
            return p
    import itertools
    for r in range(2, len(names) + 1):
        for comb in itertools.combinations(names, r):
            prod = 1
            for p in comb:
                prod *= params[p]
            if prod == v:
                return "*".join(comb)
    return v


# ----------------------------------------------------------------------------------------------
# CLI
# ----------------------------------------------------------------------------------------------

HELP_EPILOG = r"""
MODEL
  FILE.py:NAME     a Python file and a name in it; or package.module:NAME (an import path).
                   NAME is an nn.Module subclass that can be built without arguments, a
                   function that returns a module, or a module instance. A class or function
                   whose arguments include parameter names (see PARAMETERS) is called with
                   their values for every trace, so models that bake sizes into the
                   constructor (view(B, S, H, D) with B, S attributes) work. The module is in
                   eval() mode (--train: train()).

INPUTS (--input NAME=DIMS[:DTYPE[:HIGH]], one per tensor argument of forward())
  DIMS: 4x128x768, or comma-separated when a dimension is an expression over parameters
  (x=B*S,4096), or "scalar" for a 0-d tensor. DTYPE: bf16 (default for floats; see --dtype),
  fp16, fp32, or int64/int32/bool for index and mask inputs (e.g. ids=4x128:int64).
  Integer inputs are zeros (always a valid index) unless HIGH is given: random integers in
  [0, HIGH). Forward arguments without an --input keep their default (they must have one).
  Dtypes written to the JSON are the declared ones: floating-point inputs their DTYPE,
  weights and buffers --dtype, results the dtype of their floating inputs (mixed -> fp32),
  and explicit casts (.float(), .to(torch.bfloat16), .to(x.dtype), .type_as(y)) are cast ops.

PARAMETERS (--param NAME=INPUT.DIM[,INPUT.DIM...], --size NAME=VALUE)
  --param B=x.0 declares that dimension 0 of input x is the batch-like parameter B (NAME=DIM
  alone: that dimension of the first --input); list every input dimension that must stay
  equal to it: --param S=x.1,cos.0. --size B=2 declares a parameter with an example value
  that no input dimension carries by itself; input dimensions are then expressions over it
  (--size B=2 --size S=16 --input x=B*S,4096). "params" gets the example values.
  The rule for writing shapes: the model is traced once more with each parameter doubled
  (and once with all of them tripled, to verify), and every integer of the graph - each
  tensor shape entry, each integer attribute (slice bounds, top-k k) - is written as
    - a constant when it does not change;
    - else a monomial c * P1^e1 * P2^e2 ... that fits every trace: "B", "B*S" (plain
      products), "S*S", "B*S*2", "T/2", "T*3/2";
    - else a sum a1*P1 + a2*P2 + b that fits every trace: "S+1", "S-1", "N+E".
  A dimension that merely equals a parameter's value by coincidence stays a constant (it
  does not change between traces). Pick example values the model also accepts at twice and
  three times their size (and that keep divisions exact). If a doubled trace fails, the
  fallback rule is value matching - a shape entry (or slice bound, k) equal to a parameter's
  value is written as that parameter, one equal to a product of two or more parameters as
  that product - and a warning says so.

MAPPING (ATen call -> kitsune op type; docs/formats.md)
  One op per ATen call, as PyTorch eager launches kernels; views are free:
  linear/nn.Linear -> linear ("transpose_b": true: PyTorch's [N, K] weight, bias as input 3);
  matmul/mm/bmm -> matmul (a [K, N] right operand -> linear, as torch.matmul folds it;
  x @ w.t() and q @ k.transpose(-2, -1) fold into "transpose_b"); baddbmm/addmm -> matmul
  (a non-zero C its third input, read in the epilogue; alpha and beta are free); relu gelu silu sigmoid tanh exp log neg abs sqrt
  rsqrt square (x**2, x**0.5, x**-0.5) leaky_relu elu softplus mish hardswish hardsigmoid
  hardtanh -> the same (relu6 -> hardtanh; slopes and bounds are not costed); add/sub/mul/div -> the same, tensor-scalar
  mul/div -> scale, tensor-scalar add/sub -> add/sub with a 0-d constant input; cat/stack ->
  concat; softmax (log_softmax, warned) -> softmax; layer_norm -> layernorm; rms_norm ->
  rmsnorm; embedding -> embedding; index_select and x[idx] -> index_select; scatter_add (of
  an index idx.view(-1, 1).expand_as(src)) -> scatter_add; index_add -> index_add (a zero
  destination folds away; a live one adds an add); index_copy -> index_copy;
  scaled_dot_product_attention -> attention (is_causal -> "causal"; attn_mask its fourth input);
  nn.MultiheadAttention -> what PyTorch 2's forward runs: linear (one packed projection when
  query, key and value are one tensor, two when key is value, else three), one transpose copy
  to [B, heads, seq, dim], attention (need_weights=False) or scale, matmul, softmax, matmul and the heads' mean
  (need_weights=True, the default), a transpose copy back and the output linear (not:
  key_padding_mask, add_bias_kv, add_zero_attn, unbatched inputs); nn.TransformerEncoderLayer
  and nn.TransformerEncoder -> their standard path: that attention, residual adds, layer norms
  (before or after each block), linear, relu or gelu, linear (the fx front end: torch.export
  decomposes these modules into ATen calls itself);
  view/reshape/flatten/unflatten/(un)squeeze -> view (a reshape that copies -> copy + view);
  transpose/permute/t -> transpose "copy": false, or "copy": true when .contiguous() or a
  copying reshape materializes it; contiguous/clone -> copy; split/chunk/narrow/select/
  unbind/slicing -> slice (PyTorch views, but kitsune's slice costs a copy: warned; with
  --free-views they get "copy": false); expand -> expand (dropped where a broadcasting
  elementwise op reads it); sum/mean/amax/max(dim) -> reduce; to/float/half/bfloat16/type_as
  -> cast (or nothing when the dtype does not change); zeros/ones/full/arange -> fill;
  dropout: nothing in eval mode; conv2d (x, w [O, C/groups, KH, KW], bias; stride, padding,
  dilation, groups, layout "nchw"), conv1d -> conv2d over a height-1 image (free views of x, w
  and the output, as cuDNN runs it), conv_transpose2d/nn.ConvTranspose2d -> conv2d_dgrad (the
  data gradient of the convolution it inverts) and an add of the bias, batch_norm -> batchnorm (x, gamma, beta; training, axis
  1), interpolate/nn.Upsample/upsample_* by integer factors -> expand (each element written
  fh x fw times, as nearest upsampling; other modes warned: same bytes, arithmetic not costed)
  between views, group_norm/nn.GroupNorm/nn.InstanceNorm -> layernorm over a [N, groups, rest] view
  (costed as ATen's layer norm kernel over rows that long) and, with an affine, batchnorm
  (training 0: the per-channel scale and shift), max/avg_pool2d -> pool2d (op, kernel, stride, padding; adaptive_avg_pool2d to 1x1 ->
  reduce mean over [2, 3]), topk (k, axis; values and int64 indices), argmax (axis),
  sort/argsort -> sort (axis; values and int64 indices), cumsum (axis), dropout in train mode
  (p_permille; output and a bool mask).

LEAVES (--leaf NAME=TYPE, fx front end)
  Each call of module class NAME, or of function NAME that torch.fx keeps whole (registered
  with torch.fx.wrap), becomes one kitsune op TYPE: inputs are its tensor arguments in order,
  then the module's own parameters; for TYPE attention a True boolean argument (or causal=,
  is_causal=) sets "causal". E.g. --leaf LlamaRMSNorm=rmsnorm --leaf rope=rope.

DEVICE (--device auto|meta|cpu)
  meta traces shapes only (no arithmetic, no memory for weights or activations; an op with
  no meta kernel runs alone on the CPU); cpu runs float32 arithmetic; auto (default) uses
  meta and falls back to cpu (e.g. for data-dependent code).

ERRORS
  Operators with no kitsune equivalent are listed together, each with its source line
  (file:line) and module; exit status 2 and no output file. Bad arguments and failed traces:
  one line, exit status 2. The output is written atomically (a temporary file in the same
  directory, then renamed).

EXAMPLES
  tools/kitsune-export tests/export/models.py:MLP2 --input x=64x256 --param B=x.0 -o mlp.json
  tools/kitsune-export tests/export/models.py:BertLayer --input x=2x128x768 --param B=x.0 \
      --param S=x.1 -o bert.json && build/kitsune predict --hw a100 --workload bert.json
"""


_DIM_OPS = {"Add": operator.add, "Sub": operator.sub, "Mult": operator.mul, "Mod": operator.mod}


def eval_dim(expr, values):
    """An input dimension: an integer or an expression over params (+ - * / %, parentheses)."""
    import ast

    def ev(n):
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
            return n.value
        if isinstance(n, ast.Name):
            if n.id not in values:
                raise ExportError("dimension %r: unknown parameter %r (declare it with --param)" % (expr, n.id))
            return values[n.id]
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        if isinstance(n, ast.BinOp):
            a, b = ev(n.left), ev(n.right)
            if isinstance(n.op, (ast.Div, ast.FloorDiv)):
                if b == 0 or a % b:
                    raise ExportError("dimension %r: %d / %d is not exact" % (expr, a, b))
                return a // b
            f = _DIM_OPS.get(type(n.op).__name__)
            if f:
                return f(a, b)
        raise ExportError("dimension %r: not an integer expression over parameters" % expr)
    if isinstance(expr, int):
        return expr
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError:
        raise ExportError("dimension %r: not an integer or an expression" % expr)
    v = ev(tree)
    if v <= 0:
        raise ExportError("dimension %r is %d (must be > 0)" % (expr, v))
    return v


def parse_input(s, default_dtype):
    """NAME=DIMS[:DTYPE[:HIGH]] -> (name, [dim tokens], dtype, high). DIMS: 4x128x768, or
    comma-separated when a dimension is an expression (B*S,4096), or 'scalar'."""
    m = re.match(r"^([A-Za-z_]\w*)=([^:]+)(?::([A-Za-z0-9_]+))?(?::(\d+))?$", s)
    if not m:
        raise ExportError("--input %r: expected NAME=DIMSxDIMS[:DTYPE[:HIGH]], e.g. x=4x128x768:bf16" % s)
    name, dims, dt, high = m.group(1), m.group(2).strip(), m.group(3) or default_dtype, m.group(4)
    if dims == "scalar":
        toks = []
    else:
        if "," in dims:
            parts = dims.split(",")
        elif re.match(r"^\d+([xX]\d+)*$", dims):
            parts = re.split(r"[xX]", dims)
        else:
            parts = [dims]  # one dimension given as an expression
        toks = []
        for d in parts:
            d = d.strip()
            if re.match(r"^\d+$", d):
                if int(d) <= 0:
                    raise ExportError("--input %r: dimensions must be > 0" % s)
                toks.append(int(d))
            elif d:
                toks.append(d)
            else:
                raise ExportError("--input %r: empty dimension" % s)
    dt = {"float32": "fp32", "float": "fp32", "float16": "fp16", "half": "fp16",
          "bfloat16": "bf16", "long": "int64", "int": "int32"}.get(dt, dt)
    if dt not in ("fp32", "fp16", "bf16", "int64", "int32", "bool"):
        raise ExportError("--input %r: unknown dtype %r (bf16, fp16, fp32, int64, int32, bool)" % (s, dt))
    return name, toks, dt, int(high) if high else None


def parse_param(s, inputs):
    """NAME=INPUT.DIM[,INPUT.DIM...] | NAME=DIM (of the first input): (name, [(input, dim)])."""
    m = re.match(r"^([A-Za-z_]\w*)=(.+)$", s)
    if not m:
        raise ExportError("--param %r: expected NAME=INPUT.DIM (e.g. B=x.0)" % s)
    name, rhs = m.group(1), m.group(2).strip()
    refs = []
    first = next(iter(inputs)) if inputs else None
    for part in rhs.split(","):
        part = part.strip()
        mm = re.match(r"^(?:([A-Za-z_]\w*)\.)?(-?\d+)$", part)
        if not mm:
            raise ExportError("--param %r: %r is not INPUT.DIM" % (s, part))
        inp = mm.group(1) or first
        if inp not in inputs:
            raise ExportError("--param %r: no --input named %r" % (s, inp))
        nd = len(inputs[inp][0])
        d = int(mm.group(2))
        if d < 0:
            d += nd
        if not 0 <= d < nd:
            raise ExportError("--param %r: input %s has %d dimensions" % (s, inp, nd))
        refs.append((inp, d))
    return name, refs, None


def parse_size(s):
    m = re.match(r"^([A-Za-z_]\w*)=(\d+)$", s)
    if not m or int(m.group(2)) <= 0:
        raise ExportError("--size %r: expected NAME=VALUE with VALUE > 0 (e.g. B=2)" % s)
    return m.group(1), int(m.group(2))


def load_model(spec, train):
    """-> (build(values) -> module, file, name, rebuilds): `build` is called once per trace with
    the parameter values; NAME's arguments named like parameters receive them."""
    if ":" not in spec:
        raise ExportError("model %r: expected FILE.py:NAME or module.path:NAME" % spec)
    path, name = spec.rsplit(":", 1)
    if path.endswith(".py") or os.path.sep in path or os.path.isfile(path):
        if not os.path.isfile(path):
            raise ExportError("model file %s: no such file" % path)
        d = os.path.dirname(os.path.abspath(path))
        if d not in sys.path:
            sys.path.insert(0, d)
        modname = "kitsune_export_model_%s" % re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
        sp = importlib.util.spec_from_file_location(modname, path)
        mod = importlib.util.module_from_spec(sp)
        sys.modules[modname] = mod
        try:
            sp.loader.exec_module(mod)
        except Exception as e:
            raise ExportError("loading %s failed: %s: %s" % (path, type(e).__name__, e))
    else:
        try:
            mod = importlib.import_module(path)
        except Exception as e:
            raise ExportError("importing %s failed: %s: %s" % (path, type(e).__name__, e))
    obj = mod
    for part in name.split("."):
        if not hasattr(obj, part):
            raise ExportError("%s has no %r" % (path, name))
        obj = getattr(obj, part)
    if isinstance(obj, nn.Module):
        obj.train(train)
        return (lambda values: obj), path, name, False
    if not callable(obj):
        raise ExportError("%s is neither an nn.Module class, a module nor a function" % name)
    try:
        sig = inspect.signature(obj)
        accepted = set(sig.parameters)
        if any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
            accepted = None
    except (TypeError, ValueError):
        accepted = set()

    def build(values):
        kw = {k: v for k, v in values.items() if accepted is None or k in accepted}
        try:
            m = obj(**kw)
        except Exception as e:
            raise ExportError("%s(%s) failed (NAME must be constructible without arguments, or "
                              "take the --param names): %s: %s"
                              % (name, ", ".join("%s=%s" % kv for kv in kw.items()), type(e).__name__, e))
        if not isinstance(m, nn.Module):
            raise ExportError("%s() returned %s, not an nn.Module" % (name, type(m).__name__))
        m.train(train)
        return m
    return build, path, name, bool(accepted is None or accepted)


_TORCH_DTYPE = {"int64": "int64", "int32": "int32", "bool": "bool", "fp32": "float32",
                "fp16": "float16", "bf16": "bfloat16"}


def make_example(shape, dt, high, gen, device="cpu"):
    if device == "meta":  # on meta, floats in their declared dtype (no kernels to worry about)
        return torch.empty(tuple(shape), dtype=getattr(torch, _TORCH_DTYPE[dt]), device="meta")
    if dt in ("fp32", "fp16", "bf16"):
        return torch.randn(*shape, generator=gen) if shape else torch.randn((), generator=gen)
    tdt = {"int64": torch.int64, "int32": torch.int32, "bool": torch.bool}[dt]
    if high:
        return torch.randint(0, high, tuple(shape), generator=gen, dtype=tdt)
    return torch.zeros(tuple(shape), dtype=tdt)


class Session:
    """The model, its inputs and parameters: one call of trace() per set of parameter values."""

    def __init__(self, args):
        self.args = args
        raw = {}
        for s in args.input:
            name, toks, dt, high = parse_input(s, args.dtype)
            if name in raw:
                raise ExportError("--input %s given twice" % name)
            raw[name] = (toks, dt, high)
        self.inputs = raw
        self.params = {}  # name -> [refs], value
        for s in args.size:
            name, val = parse_size(s)
            if name in self.params:
                raise ExportError("--size %s given twice" % name)
            self.params[name] = [[], val]
        for s in args.param:
            name, refs, val = parse_param(s, raw)
            if name in self.params:
                raise ExportError("--param %s given twice" % name)
            self.params[name] = [refs, val]
        # values of params tied to input dimensions (those dimensions must be plain integers or
        # expressions over params with values)
        for _ in range(len(self.params) + 1):
            known = {p: v[1] for p, v in self.params.items() if v[1] is not None}
            for p, v in self.params.items():
                if v[1] is not None:
                    continue
                vals = set()
                for inp, d in v[0]:
                    tok = raw[inp][0][d]
                    try:
                        vals.add(eval_dim(tok, known))
                    except ExportError:
                        vals = None
                        break
                if vals is None:
                    continue
                if len(vals) != 1:
                    raise ExportError("--param %s: the listed dimensions differ (%s)" % (p, sorted(vals)))
                v[1] = vals.pop()
        for p, v in self.params.items():
            if v[1] is None:
                raise ExportError("--param %s: its dimensions depend on parameters without a value" % p)
        # dimension templates: a param-tied dimension is the param itself
        self.templates = {n: list(v[0]) for n, v in raw.items()}
        for p, (refs, _) in self.params.items():
            for inp, d in refs:
                self.templates[inp][d] = p
        self.values = {p: v[1] for p, v in self.params.items()}
        self.shapes(self.values)  # validates every expression
        self.build, self.path, self.mname, self.rebuilds = load_model(args.model, args.train)
        self.module = None
        self.front_kind = None
        self.frontend_name = None

    def shapes(self, values):
        return {n: [eval_dim(t, values) for t in tpl] for n, tpl in self.templates.items()}

    def trace(self, values, kinds):
        """Map the model traced at these parameter values -> Mapper. kinds: front ends to try."""
        shapes = self.shapes(values)
        module = self.build(values) if (self.rebuilds or self.module is None) else self.module
        self.module = module
        devices = {"auto": ["meta", "cpu"], "meta": ["meta"], "cpu": ["cpu"]}[self.args.device]
        if getattr(self, "device_used", None) in devices:
            devices = [self.device_used] + [d for d in devices if d != self.device_used]
        errs = []
        for kind in kinds:
            err = None
            for dev in devices:
                try:
                    mod = module
                    if dev == "meta":
                        try:
                            mod = _meta_copy(module, getattr(torch, _TORCH_DTYPE[self.args.dtype]))
                        except Exception as e:
                            raise ExportError("copying the model to the meta device failed: %s: %s"
                                              % (type(e).__name__, e))
                    gen = torch.Generator().manual_seed(self.args.seed)
                    ex = {}
                    for name, (toks, dt, high) in self.inputs.items():
                        ex[name] = (make_example(shapes[name], dt, high, gen, dev), dt)
                    cls = FxFrontEnd if kind == "fx" else ExportFrontEnd
                    front = cls(mod, list(self.inputs), list(LEAF_TYPES))
                    ir = front.run(ex)
                except ExportError as e:
                    err = str(e)
                    continue
                self.front_kind = kind
                self.device_used = dev
                self.frontend_name = front.frontend_name
                m = Mapper(ir, default_dtype=self.args.dtype, train=self.args.train)
                m.run()
                m.front_errors = errs
                return m
            errs.append(err)
        raise ExportError("; ".join(errs))


def graph_dict(m):
    return {"tensors": {k: dict(v) for k, v in m.tensors.items()},
            "ops": [{"name": o.name, "type": o.type, "inputs": list(o.inputs),
                     "outputs": list(o.outputs), "attrs": dict(o.attrs)} for o in m.ops]}


def format_json(doc):
    lines = ["{"]
    head = []
    for k in ("name", "source", "params"):
        head.append("  %s: %s" % (json.dumps(k), json.dumps(doc[k])))
    lines.append(",\n".join(head) + ",")
    lines.append('  "tensors": {')
    ts = ["    %s: %s" % (json.dumps(k), json.dumps(v)) for k, v in doc["tensors"].items()]
    lines.append(",\n".join(ts))
    lines.append("  },")
    lines.append('  "ops": [')
    ops = ["    " + json.dumps(o) for o in doc["ops"]]
    lines.append(",\n".join(ops))
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_atomic(path, text):
    if path == "-":
        sys.stdout.write(text)
        return
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise ExportError("-o %s: directory %s does not exist" % (path, d))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        um = os.umask(0)
        os.umask(um)
        os.chmod(tmp, 0o666 & ~um)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="%(prog)s FILE.py:NAME --input NAME=DIMS[:DTYPE] [--input ...] -o OUT.json "
              "[--param P=INPUT.DIM ...] [options]",
        description="Export a PyTorch nn.Module to a kitsune workload graph (JSON): trace it "
                    "(torch.fx, or torch.export on torch >= 2.1), map each ATen call to kitsune's "
                    "op table (docs/formats.md), write tensors, ops, params and a source note.",
        epilog=HELP_EPILOG)
    ap.add_argument("model", help="FILE.py:NAME or module.path:NAME (see MODEL below)")
    ap.add_argument("--input", action="append", default=[], metavar="NAME=DIMS[:DTYPE[:HIGH]]",
                    help="an example input of forward(), e.g. x=4x128x768 or ids=4x128:int64 (repeatable)")
    ap.add_argument("-o", "--output", required=True, metavar="OUT.json", help="output file ('-': stdout)")
    ap.add_argument("--name", help="workload name (default: the output file's stem)")
    ap.add_argument("--param", action="append", default=[], metavar="P=INPUT.DIM[,...]",
                    help="name a batch-like dimension, e.g. B=x.0 (see PARAMETERS below; repeatable)")
    ap.add_argument("--size", action="append", default=[], metavar="P=VALUE",
                    help="a parameter with an example value that no input dimension carries by itself "
                         "(e.g. B=2 with --input x=B*S,4096); see PARAMETERS below")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"],
                    help="dtype of floating-point inputs without one, weights and buffers (default bf16)")
    ap.add_argument("--frontend", default="auto", choices=["auto", "fx", "export"],
                    help="tracer: torch.fx, torch.export (torch >= 2.1), or auto (export where "
                         "available, else fx; falls back to fx if export fails)")
    ap.add_argument("--device", default="auto", choices=["auto", "cpu", "meta"],
                    help="where the traces run: meta (shapes only: no arithmetic, no memory for "
                         "weights or activations; an op without a meta kernel runs alone on the "
                         "CPU), cpu (real float32 arithmetic), or auto (default: meta, and cpu if "
                         "that fails, e.g. for data-dependent code)")
    ap.add_argument("--train", action="store_true",
                    help="trace in train() mode (dropout becomes a dropout op, batchnorm training=1)")
    ap.add_argument("--strict", action="store_true",
                    help="reject operator types kitsune does not have yet instead of writing them "
                         "(none at present: every type the mapper writes is in kitsune's op table)")
    ap.add_argument("--free-views", action="store_true",
                    help='write "copy": false on slices and expands that PyTorch leaves as views '
                         "(for a kitsune whose slice/expand take it)")
    ap.add_argument("--leaf", action="append", default=[], metavar="NAME=TYPE",
                    help="write each call of module class NAME, or of function NAME (e.g. one "
                         "registered with torch.fx.wrap), as one kitsune op TYPE (fx front end); "
                         "see LEAVES below")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random example inputs (default 0)")
    ap.add_argument("-q", "--quiet", action="store_true", help="no warnings on stderr")
    args = ap.parse_args(argv)
    try:
        return run(args)
    except ExportError as e:
        sys.stderr.write("%s: %s\n" % (PROG, e))
        return 2


def run(args):
    _import_torch()
    torch.manual_seed(args.seed)
    if not args.input:
        raise ExportError("no --input given (one per tensor argument of forward())")
    for s in args.leaf:
        if "=" not in s:
            raise ExportError("--leaf %r: expected NAME=TYPE" % s)
        c, t = s.split("=", 1)
        LEAF_TYPES[c.strip()] = t.strip()
    ses = Session(args)
    if args.frontend == "fx":
        kinds = ["fx"]
    elif args.frontend == "export":
        kinds = ["export"]
    else:
        kinds = ["export", "fx"] if torch_version() >= (2, 1) and not LEAF_TYPES else ["fx"]
    base = ses.trace(ses.values, kinds)
    kinds = [ses.front_kind]
    warn = []
    if base.front_errors:
        warn.append("%s; used torch.fx" % base.front_errors[0].split("\n")[0])

    # unsupported operators
    unsup = list(base.unsupported)
    nys = [o for o in base.ops if o.type in NOT_YET]
    if args.strict:
        for o in nys:
            unsup.append(("%s (kitsune has no %r op type yet; --strict)" % (o.src_op, o.type), o.loc, o.module))
    if unsup:
        lines = ["%d unsupported operator%s in %s (no output written):"
                 % (len(unsup), "" if len(unsup) == 1 else "s", args.model)]
        for desc, loc, mod in unsup:
            where = loc or ("module %r" % mod if mod else "forward()")
            extra = " (in module %r)" % mod if (loc and mod) else ""
            lines.append("  %s: %s%s" % (where, desc, extra))
        raise ExportError("\n".join(lines))
    warn += base.warnings

    # params: extra runs
    names = list(ses.values)
    pvals = dict(ses.values)
    g0 = graph_dict(base)
    graphs, runs = [g0], [dict(pvals)]
    fitted = bool(names)
    if names:
        plan = [{q: pvals[q] * (2 if q == p else 1) for q in names} for p in names]
        plan.append({q: pvals[q] * 3 for q in names})
        for i, pv in enumerate(plan):
            try:
                m = ses.trace(pv, kinds)
                g = graph_dict(m)
                if m.unsupported:
                    raise ExportError(m.unsupported[0][0])
                if _structure(g) != _structure(g0):
                    raise ExportError("the graph changes with the parameters")
            except ExportError as e:
                what = str(e).split("\n")[0]
                if i == len(plan) - 1:  # the verification run only
                    warn.append("the trace with every parameter tripled failed (%s); expressions are "
                                "fitted on the doubled runs only" % what)
                    break
                warn.append("tracing with %s doubled failed (%s); shapes are written by value "
                            "matching (a dimension equal to a parameter, or to a product of several)"
                            % (names[i], what))
                fitted = False
                break
            graphs.append(g)
            runs.append(pv)

    def fit(path_vals, where, size=True):
        if fitted:
            r = fit_value(path_vals, runs, names)
            if r is None:
                warn.append("%s varies with the parameters (%s) in no simple form; written as %d"
                            % (where, ", ".join(str(v) for v in path_vals), path_vals[0]))
                return path_vals[0]
            return r
        return numeric_expr(path_vals[0], pvals) if (names and size) else path_vals[0]

    tensors = {}
    for k, v in g0["tensors"].items():
        shape = [fit([g["tensors"][k]["shape"][i] for g in graphs], "tensor %s dim %d" % (k, i))
                 for i in range(len(v["shape"]))]
        t = {"shape": shape, "dtype": v["dtype"]}
        if v["kind"]:
            t["kind"] = v["kind"]
        tensors[k] = t
    ops = []
    for j, o in enumerate(g0["ops"]):
        attrs = {}
        for a, v in o["attrs"].items():
            if isinstance(v, (bool, str)):
                attrs[a] = v
            elif isinstance(v, int):
                attrs[a] = fit([g["ops"][j]["attrs"][a] for g in graphs], "op %s attr %s" % (o["name"], a),
                               a in SIZE_ATTRS)
            elif isinstance(v, list):
                attrs[a] = [fit([g["ops"][j]["attrs"][a][i] for g in graphs],
                                "op %s attr %s[%d]" % (o["name"], a, i), a in SIZE_ATTRS)
                            if isinstance(x, int) and not isinstance(x, bool) else x
                            for i, x in enumerate(v)]
            else:
                attrs[a] = v
        if args.free_views and o["type"] in ("slice", "expand") and "free" in base.ops[j].flags:
            attrs["copy"] = False
        op = {"name": o["name"], "type": o["type"], "inputs": o["inputs"], "outputs": o["outputs"]}
        if attrs:
            op["attrs"] = attrs
        ops.append(op)

    free = [o.name for o in base.ops if o.type == "slice" and "free" in o.flags]
    free_ex = [o.name for o in base.ops if o.type == "expand" and "free" in o.flags]
    if not args.free_views:
        if free:
            warn.append("%d slice op%s free view%s in PyTorch but cost%s a copy in kitsune (--free-views "
                        "writes them as free views): %s" % (len(free), " is a" if len(free) == 1 else "s are",
                                            "" if len(free) == 1 else "s",
                                            "s" if len(free) == 1 else "", ", ".join(free)))
        if free_ex:
            warn.append("%d expand op%s free view%s in PyTorch but cost%s a write per element in "
                        "kitsune: %s" % (len(free_ex), " is a" if len(free_ex) == 1 else "s are",
                                         "" if len(free_ex) == 1 else "s",
                                         "s" if len(free_ex) == 1 else "", ", ".join(free_ex)))
    if nys:
        cnt = {}
        for o in nys:
            cnt[o.type] = cnt.get(o.type, 0) + 1
        warn.append("%d op%s use%s operator types kitsune does not have yet (%s): the JSON loads once "
                    "they land; --strict rejects them"
                    % (len(nys), "" if len(nys) == 1 else "s", "s" if len(nys) == 1 else "",
                       ", ".join("%s x%d" % (k, v) for k, v in sorted(cnt.items()))))
    for v in base.notes.values():
        warn.append(v)

    name = args.name or (os.path.splitext(os.path.basename(args.output))[0]
                         if args.output != "-" else ses.mname)
    insrc = ", ".join("%s=%s:%s" % (n, ",".join(str(d) for d in ses.templates[n]) or "scalar", v[1])
                      for n, v in ses.inputs.items())
    psrc = ", ".join("%s = %s" % (p, ",".join("%s.%d" % r for r in ses.params[p][0])
                                  if ses.params[p][0] else "%d (--size)" % pvals[p]) for p in names)
    kern = sum(1 for o in ops if not _is_free(o))
    mod = ses.module
    source = ("exported by tools/kitsune-export from %s:%s (%s.%s) with torch %s, %s; %s mode; example "
              "inputs %s%s. One op per ATen call as PyTorch eager runs it: %d ops, %d launching a "
              "kernel; weights and buffers %s, float tensors in their inputs' dtypes."
              % (ses.path, ses.mname, type(mod).__module__.replace("kitsune_export_model_", ""),
                 type(mod).__name__, torch.__version__, ses.frontend_name,
                 "train" if args.train else "eval", insrc,
                 ("; params " + psrc) if psrc else "", len(ops), kern, args.dtype))
    doc = {"name": name, "source": source, "params": {p: pvals[p] for p in names},
           "tensors": tensors, "ops": ops}
    write_atomic(args.output, format_json(doc))
    if not args.quiet:
        for w in warn:
            sys.stderr.write("%s: warning: %s\n" % (PROG, w))
    return 0


def _is_free(o):
    a = o.get("attrs", {})
    if o["type"] in VIEW_TYPES:
        return not a.get("copy", False)
    if o["type"] == "transpose":
        return a.get("copy", True) is False
    return False


if __name__ == "__main__":
    sys.exit(main())
