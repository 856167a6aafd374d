"""The numpy layer: a compiled function, called with numpy arrays, without copies."""

from __future__ import annotations

import ctypes
import os
import shutil
import threading
from pathlib import Path

import numpy as np

from ._build import build_library, language_of
from ._errors import SignatureError
from ._signature import Param, Signature, parse_signature

_CTYPES = {
    "float64": ctypes.c_double,
    "float32": ctypes.c_float,
    "int32": ctypes.c_int32,
    "uint32": ctypes.c_uint32,
    "int64": ctypes.c_int64,
    "uint64": ctypes.c_uint64,
}


def compile(
    source,
    function: str | None = None,
    signature: str | None = None,
    *,
    outputs=(),
    inactive=(),
    language: str | None = None,
    cflags=(),
    adc_flags=(),
    adc=None,
    clang=None,
    cache: bool = True,
    verbose: bool = False,
) -> "Function":
    """Compiles ``function`` of a C/C++ file (or LLVM bitcode) with adc and loads it.

    ``source``: a path (``.c``, ``.cpp``/``.cc``, ``.bc``, ``.ll``) or C source text (a
    string with a newline in it). ``signature``: the C prototype of ``function`` with array
    sizes, e.g. ``"double loss(const double x[n], const double w[n], double b, int n)"``
    (see ``adc._signature``); ``function`` defaults to the name it gives. ``outputs``:
    arrays the function writes (allocated by the package, returned by a call).
    ``inactive``: float arrays or scalars that get no derivative. ``cflags`` go to clang
    (``-I``, ``-D``, ``-ffast-math``), ``adc_flags`` to ``adc build``
    (``--denormals=flush``). adc is the argument ``adc``, else ``$ADC``, else ``adc`` on
    PATH; clang is ``clang``, else ``$ADC_CLANG``, else ``clang-19`` or ``clang``.

    The shared library (the primal, its gradient and its forward derivative) is cached by
    a hash of the source, the signature, the flags and the tools, under
    ``$ADC_PYTHON_CACHE`` (default ``~/.cache/adc-python``); headers the source includes
    are not part of the key: pass ``cache=False`` after editing one.
    """
    if signature is None:
        raise SignatureError(
            "compile needs signature=, the C prototype of the function with array sizes, "
            "e.g. signature=\"double f(const double x[n], int n)\""
        )
    sig = parse_signature(signature, function, outputs=outputs, inactive=inactive)
    if isinstance(source, bytes):
        data, name, path = source, "<bitcode>" if source[:2] == b"BC" else "<source>", None
        if language is None:
            language = "bitcode" if source[:2] == b"BC" else "c"
    elif isinstance(source, str) and "\n" in source:
        data, name, path = source.encode(), "<source>", None
    else:
        path = os.fspath(source)
        try:
            data = Path(path).read_bytes()
        except OSError as e:
            raise FileNotFoundError(f"cannot read the source {path!r}: {e.strerror}") from None
        name = path
    lang = language_of(path, language)
    lib = build_library(
        data, name, lang, sig, adc=adc, clang=clang, cflags=tuple(cflags),
        adc_flags=tuple(adc_flags), cache=cache, verbose=verbose,
    )
    fn = Function(lib, sig)
    if not cache:
        # Loaded: the build folder (outside the cache's keys) is not needed any more.
        shutil.rmtree(lib.parent, ignore_errors=True)
    return fn


class Function:
    """A function compiled by adc, callable with numpy arrays.

    ``f(*args)`` runs the primal: it takes the parameters of the signature except the
    outputs (integer sizes may be left out when an array's shape gives them) and returns
    the return value and then the outputs (one value alone, else a tuple).
    ``f.grad``, ``f.value_and_grad``, ``f.vjp`` and ``f.jvp`` run adc's derivatives.
    """

    def __init__(self, lib_path, sig: Signature):
        self.path = Path(lib_path)
        self.signature = sig
        self.name = sig.name
        self._lib = ctypes.CDLL(str(self.path))
        self._lock = threading.Lock()
        p_args, d_args = [], []
        for p in sig.params:
            if p.is_array or p.differentiable:
                p_args.append(ctypes.c_void_p)
            else:
                p_args.append(_CTYPES[p.dtype])
            if p.differentiable:
                d_args += [ctypes.c_void_p, ctypes.c_void_p]
            else:
                d_args.append(ctypes.c_void_p if p.is_array else _CTYPES[p.dtype])
        if sig.ret:
            p_args.append(ctypes.c_void_p)
            d_args += [ctypes.c_void_p, ctypes.c_void_p]
        self._primal = self._lib.adc_primal
        self._primal.argtypes, self._primal.restype = p_args, None
        self._vjp = self._lib.adc_vjp
        self._vjp.argtypes, self._vjp.restype = d_args, None
        self._jvp = self._lib.adc_jvp
        self._jvp.argtypes, self._jvp.restype = d_args, None
        self.inputs = sig.inputs
        # Parameters a call may leave out: integer sizes that an array's shape gives.
        self._derivable = {s for s in sig.size_params if self._size_source(s) is not None}
        self.diff_inputs = sig.diff_inputs

    def __repr__(self):
        return f"<adc.Function {self.signature.text} from {self.path}>"

    # ----------------------------------------------------------------- arguments

    def _size_source(self, name):
        for p in self.signature.params:
            if p.role != "out" and p.dims:
                for axis, d in enumerate(p.dims):
                    if d == name:
                        return p, axis
        return None

    @property
    def arg_names(self):
        """The names a call takes, in order (sizes that shapes give are optional)."""
        return [p.name for p in self.inputs]

    def bind(self, args, kwargs=None):
        """Matches call arguments to parameters: {name: value} with every input present."""
        kwargs = dict(kwargs or {})
        names = self.arg_names
        required = [n for n in names if n not in self._derivable]
        vals = {}
        args = list(args)
        if len(args) == len(names):
            vals.update(zip(names, args))
        elif len(args) <= len(required):
            vals.update(zip(required, args))
        else:
            raise TypeError(
                f"{self.name}() takes {len(required)} arguments ({', '.join(required)})"
                + (f", or {len(names)} with the sizes" if len(names) != len(required) else "")
                + f"; got {len(args)}"
            )
        for k, v in kwargs.items():
            if k not in names:
                raise TypeError(f"{self.name}() got an unexpected argument {k!r}")
            if k in vals:
                raise TypeError(f"{self.name}() got two values for {k!r}")
            vals[k] = v
        missing = [n for n in required if n not in vals]
        if missing:
            raise TypeError(f"{self.name}() is missing {', '.join(map(repr, missing))}")
        return vals

    def _check_array(self, p: Param, a, what="argument", meta=False):
        if meta:
            # Shape-level checks of arrays that are not numpy arrays (JAX tracers).
            if not hasattr(a, "shape") or not hasattr(a, "dtype"):
                raise TypeError(
                    f"{self.name}(): {what} {p.name!r} must be an array of {p.dtype}, "
                    f"not {type(a).__name__}"
                )
            if np.dtype(a.dtype) != np.dtype(p.dtype):
                raise TypeError(
                    f"{self.name}(): {what} {p.name!r} has dtype {a.dtype}, but the C "
                    f"parameter is {p.c_type}: pass an array of {p.dtype}"
                )
            return
        if not isinstance(a, np.ndarray):
            raise TypeError(
                f"{self.name}(): {what} {p.name!r} must be a numpy array of {p.dtype}, "
                f"not {type(a).__name__}"
            )
        if a.dtype != np.dtype(p.dtype):
            raise TypeError(
                f"{self.name}(): {what} {p.name!r} has dtype {a.dtype}, but the C parameter "
                f"is {p.c_type}: pass an array of {p.dtype} (e.g. x.astype(np.{p.dtype}))"
            )
        if not a.flags.c_contiguous:
            raise ValueError(
                f"{self.name}(): {what} {p.name!r} is not C-contiguous (strides "
                f"{a.strides}): pass np.ascontiguousarray(...) of it"
            )

    def resolve(self, vals, meta=False):
        """Checks arguments, derives the sizes; returns (values, {param: shape}).
        ``meta``: arrays may be anything with a shape and a dtype, and float scalars are
        left as they are (JAX traces)."""
        sizes = {}
        shapes = {}
        for p in self.inputs:
            if not p.is_array:
                continue
            a = vals[p.name]
            self._check_array(p, a, meta=meta)
            if p.dims is None:
                shapes[p.name] = a.shape
                continue
            if a.ndim != len(p.dims):
                raise ValueError(
                    f"{self.name}(): argument {p.name!r} must have {len(p.dims)} "
                    f"dimension(s) {_fmt_dims(p.dims)}, got shape {a.shape}"
                )
            for axis, d in enumerate(p.dims):
                n = a.shape[axis]
                if isinstance(d, int):
                    if n != d:
                        raise ValueError(
                            f"{self.name}(): argument {p.name!r} has shape {a.shape}, expected "
                            f"{_fmt_dims(p.dims)}"
                        )
                elif d in sizes and sizes[d][0] != n:
                    q, ax = sizes[d][1]
                    raise ValueError(
                        f"{self.name}(): size {d!r} is {sizes[d][0]} from axis {ax} of {q!r} "
                        f"but {n} from axis {axis} of {p.name!r} (shape {a.shape})"
                    )
                else:
                    sizes.setdefault(d, (n, (p.name, axis)))
            shapes[p.name] = a.shape
        out = dict(vals)
        for p in self.inputs:
            if p.is_array:
                continue
            v = out.get(p.name)
            if p.name in sizes:
                if v is None:
                    out[p.name] = sizes[p.name][0]
                elif int(v) != sizes[p.name][0]:
                    q, ax = sizes[p.name][1]
                    raise ValueError(
                        f"{self.name}(): {p.name}={v} but axis {ax} of {q!r} has "
                        f"{sizes[p.name][0]} elements"
                    )
            if p.is_float and meta:
                continue
            if p.is_float:
                try:
                    out[p.name] = float(out[p.name])
                except (TypeError, ValueError):
                    raise TypeError(
                        f"{self.name}(): argument {p.name!r} must be a real number, not "
                        f"{type(out[p.name]).__name__}"
                    ) from None
            else:
                v = out[p.name]
                if isinstance(v, (float, complex)) or not hasattr(v, "__index__"):
                    raise TypeError(
                        f"{self.name}(): argument {p.name!r} must be an integer, not "
                        f"{type(v).__name__}"
                    )
                out[p.name] = int(v)
        for p in self.signature.outputs:
            shapes[p.name] = tuple(d if isinstance(d, int) else out[d] for d in p.dims)
            if any(n < 0 for n in shapes[p.name]):
                raise ValueError(f"{self.name}(): output {p.name!r} would have shape {shapes[p.name]}")
        return out, shapes

    def output_specs(self, shapes):
        """[(name, shape, dtype)] of the results: the return value, then the outputs."""
        specs = []
        if self.signature.ret:
            specs.append(("return", (), self.signature.ret))
        for p in self.signature.outputs:
            specs.append((p.name, shapes[p.name], p.dtype))
        return specs

    # ----------------------------------------------------------------- calls

    def _scalar_box(self, p, v):
        return np.array([v], dtype=p.dtype)

    def _primal_call(self, vals, shapes):
        keep = []
        cargs = []
        outs = {}
        for p in self.signature.params:
            if p.role == "out":
                a = np.empty(shapes[p.name], dtype=p.dtype)
                outs[p.name] = a
                cargs.append(a.ctypes.data)
            elif p.is_array:
                cargs.append(vals[p.name].ctypes.data)
            elif p.differentiable:
                b = self._scalar_box(p, vals[p.name])
                keep.append(b)
                cargs.append(b.ctypes.data)
            else:
                cargs.append(vals[p.name])
        ret = None
        if self.signature.ret:
            ret = np.zeros(1, dtype=self.signature.ret)
            cargs.append(ret.ctypes.data)
        with self._lock:
            self._primal(*cargs)
        results = []
        if ret is not None:
            results.append(ret.dtype.type(ret[0]))
        results += [outs[p.name] for p in self.signature.outputs]
        return results

    def __call__(self, *args, **kwargs):
        vals, shapes = self.resolve(self.bind(args, kwargs))
        r = self._primal_call(vals, shapes)
        return r[0] if len(r) == 1 else tuple(r)

    def _deriv_call(self, fn, vals, shapes, seeds):
        """Runs adc_vjp or adc_jvp. ``seeds``: {name: array} shadows (copied, zeros when
        absent). Returns (shadows dict, primal results)."""
        keep, cargs, shadows, outs = [], [], {}, {}
        for p in self.signature.params:
            if p.role == "out":
                a = np.zeros(shapes[p.name], dtype=p.dtype)
                outs[p.name] = a
                primal_ptr = a
            elif p.is_array:
                primal_ptr = vals[p.name]
            elif p.differentiable:
                primal_ptr = self._scalar_box(p, vals[p.name])
                keep.append(primal_ptr)
            else:
                cargs.append(vals[p.name])
                continue
            cargs.append(primal_ptr.ctypes.data)
            if p.differentiable:
                shape = primal_ptr.shape
                s = seeds.get(p.name)
                d = np.zeros(shape, dtype=p.dtype) if s is None else _seed(s, shape, p.dtype, p.name, self.name)
                shadows[p.name] = d
                cargs.append(d.ctypes.data)
        ret = None
        if self.signature.ret:
            ret = np.zeros(1, dtype=self.signature.ret)
            s = seeds.get("return")
            d = np.zeros(1, dtype=self.signature.ret) if s is None else _seed(s, (), self.signature.ret, "return", self.name).reshape(1)
            shadows["return"] = d
            cargs += [ret.ctypes.data, d.ctypes.data]
        with self._lock:
            fn(*cargs)
        results = []
        if ret is not None:
            results.append(ret.dtype.type(ret[0]))
        results += [outs[p.name] for p in self.signature.outputs]
        return shadows, results

    def vjp(self, args, cotangents, kwargs=None):
        """Reverse mode: ``cotangents`` (one per result: the return value, then each
        output; None means zero) pulled back to every differentiable input. Returns
        (results, grads): grads is a tuple, one per differentiable input (float arrays and
        float scalars not marked inactive), in parameter order."""
        vals, shapes = self.resolve(self.bind(args, kwargs))
        specs = self.output_specs(shapes)
        if not isinstance(cotangents, (tuple, list)):
            cotangents = (cotangents,)
        if len(cotangents) != len(specs):
            raise ValueError(
                f"{self.name}.vjp: {len(specs)} cotangent(s) needed "
                f"({', '.join(s[0] for s in specs)}), got {len(cotangents)}"
            )
        seeds = {name: c for (name, _, _), c in zip(specs, cotangents) if c is not None}
        shadows, results = self._deriv_call(self._vjp, vals, shapes, seeds)
        grads = []
        for p in self.diff_inputs:
            g = shadows[p.name]
            grads.append(g if p.is_array else g.dtype.type(g[0]))
        return results, tuple(grads)

    def value_and_grad(self, *args, **kwargs):
        """For a function with a scalar return and no outputs: (value, grads)."""
        if not self.signature.ret or self.signature.outputs:
            raise TypeError(
                f"{self.name}: value_and_grad needs a scalar return and no outputs; use vjp"
            )
        results, grads = self.vjp(args, (1.0,), kwargs)
        return results[0], grads

    def grad(self, *args, **kwargs):
        """The gradient of a scalar-valued function: one entry per differentiable input
        (a lone array when there is one)."""
        _, grads = self.value_and_grad(*args, **kwargs)
        return grads[0] if len(grads) == 1 else grads

    def jvp(self, args, tangents, kwargs=None):
        """Forward mode: ``tangents`` (one per differentiable input, None means zero)
        pushed to the results. Returns (results, result_tangents)."""
        vals, shapes = self.resolve(self.bind(args, kwargs))
        if not isinstance(tangents, (tuple, list)):
            tangents = (tangents,)
        if len(tangents) != len(self.diff_inputs):
            raise ValueError(
                f"{self.name}.jvp: {len(self.diff_inputs)} tangent(s) needed "
                f"({', '.join(p.name for p in self.diff_inputs)}), got {len(tangents)}"
            )
        seeds = {p.name: t for p, t in zip(self.diff_inputs, tangents) if t is not None}
        shadows, results = self._deriv_call(self._jvp, vals, shapes, seeds)
        tans = []
        for name, _, _ in self.output_specs(shapes):
            d = shadows[name]
            tans.append(d.dtype.type(d[0]) if name == "return" else d)
        return results, tuple(tans)


def _seed(s, shape, dtype, name, fname):
    """A fresh contiguous copy of a seed (adc may overwrite shadows)."""
    a = np.array(s, dtype=dtype, copy=True, order="C")
    if a.shape != tuple(shape):
        if a.size == 1 and int(np.prod(shape, dtype=np.int64)) == 1:
            return a.reshape(shape if shape else (1,))
        raise ValueError(f"{fname}: the seed of {name!r} has shape {a.shape}, expected {tuple(shape)}")
    if a.ndim == 0:
        a = a.reshape(1)
    return a


def _fmt_dims(dims):
    return "".join(f"[{d}]" for d in dims)
