"""JAX: a compiled function as a ``jax.custom_vjp`` over ``jax.pure_callback``.

    jax.config.update("jax_enable_x64", True)    # for double parameters
    loss_fn = adc.jax.function(adc.compile("model.c", signature=...))
    g = jax.jit(jax.grad(lambda w: loss_fn(x, w, 0.5)))(w)

The primal and adc's gradient run on the host (CPU) through callbacks, so the wrapped
function works under ``jax.grad``, ``jax.value_and_grad``, ``jax.vjp`` and ``jax.jit``
(and ``jax.vmap``, one call per element). Integer parameters must be concrete Python
integers (they decide shapes); sizes that an array's shape gives may be left out.
"""

from __future__ import annotations

import operator

import jax
import jax.numpy as jnp
import numpy as np

from ._core import Function

__all__ = ["function"]


def _callback(fn, shapes, *args):
    try:
        return jax.pure_callback(fn, shapes, *args, vmap_method="sequential")
    except TypeError as e:  # JAX before vmap_method
        if "vmap_method" not in str(e):
            raise
        return jax.pure_callback(fn, shapes, *args)


def function(f: Function):
    """Wraps a compiled ``adc.Function`` for JAX transformations. The result takes the
    same arguments as ``f`` and returns the return value (a 0-d array), then the outputs."""
    if not isinstance(f, Function):
        raise TypeError(f"adc.jax.function takes what adc.compile returns, not {type(f).__name__}")
    params = {p.name: p for p in f.inputs}
    diff_names = [p.name for p in f.diff_inputs]

    def call(*args, **kwargs):
        vals = f.bind(args, kwargs)
        static, dyn_names, dyn_vals = {}, [], []
        for p in f.inputs:
            v = vals.get(p.name)
            if p.is_array or p.is_float:
                if p.dtype == "float64" and not jax.config.read("jax_enable_x64"):
                    raise TypeError(
                        f"{f.name}(): parameter {p.name!r} is {p.c_type} (float64) but JAX has "
                        "64-bit floats off: call jax.config.update('jax_enable_x64', True) "
                        "first (or compile a float version)"
                    )
                if not p.is_array and not hasattr(v, "dtype"):
                    v = jnp.asarray(v, dtype=p.dtype)
                elif p.is_array and not hasattr(v, "dtype"):
                    raise TypeError(
                        f"{f.name}(): argument {p.name!r} must be an array of {p.dtype}, not "
                        f"{type(v).__name__}"
                    )
                dyn_names.append(p.name)
                dyn_vals.append(v)
            elif v is not None:
                try:
                    static[p.name] = operator.index(v)
                except TypeError:
                    raise TypeError(
                        f"{f.name}(): integer argument {p.name!r} must be a concrete Python "
                        f"int under JAX (it may decide shapes), not {type(v).__name__}; mark "
                        "it static (jax.jit(..., static_argnums=...)) or close over it"
                    ) from None
        meta_vals = dict(zip(dyn_names, dyn_vals), **static)
        _, shapes = f.resolve(meta_vals, meta=True)
        specs = f.output_specs(shapes)
        result_shapes = tuple(jax.ShapeDtypeStruct(s, d) for _, s, d in specs)
        fn = _make(f, params, tuple(dyn_names), tuple(sorted(static.items())), specs,
                   result_shapes, diff_names)
        out = fn(*dyn_vals)
        return out[0] if len(out) == 1 else out

    call.__name__ = f.name
    call.__doc__ = f"{f.signature.text}, differentiable by jax.grad (adc's gradient)."
    call.adc_function = f
    return call


def _make(f, params, dyn_names, static, specs, result_shapes, diff_names):
    static = dict(static)

    def host_vals(dyn):
        vals = dict(static)
        for n, v in zip(dyn_names, dyn):
            p = params[n]
            if p.is_array:
                vals[n] = np.ascontiguousarray(v, dtype=p.dtype)
            else:
                vals[n] = float(np.asarray(v))
        return vals

    def np_primal(*dyn):
        vals, shapes = f.resolve(host_vals(dyn))
        res = f._primal_call(vals, shapes)
        return tuple(np.asarray(r, dtype=d) for r, (_, _, d) in zip(res, specs))

    diff_in_dyn = [n for n in dyn_names if n in diff_names]

    def np_vjp(*args):
        dyn, cts = args[: len(dyn_names)], args[len(dyn_names):]
        vals = host_vals(dyn)
        _, gs = f.vjp((), [np.asarray(c) for c in cts], vals)
        by_name = {p.name: g for p, g in zip(f.diff_inputs, gs)}
        return tuple(np.asarray(by_name[n], dtype=params[n].dtype) for n in diff_in_dyn)

    @jax.custom_vjp
    def fn(*dyn):
        return _callback(np_primal, result_shapes, *dyn)

    def fwd(*dyn):
        return fn(*dyn), dyn

    def bwd(dyn, cts):
        gshapes = tuple(
            jax.ShapeDtypeStruct(jnp.shape(dyn[dyn_names.index(n)]), params[n].dtype)
            for n in diff_in_dyn
        )
        gs = _callback(np_vjp, gshapes, *dyn, *cts) if gshapes else ()
        by_name = dict(zip(diff_in_dyn, gs))
        out = []
        for n, v in zip(dyn_names, dyn):
            if n in by_name:
                out.append(by_name[n])
            elif jnp.issubdtype(jnp.result_type(v), jnp.floating):
                out.append(jnp.zeros_like(v))
            else:
                out.append(None)
        return tuple(out)

    fn.defvjp(fwd, bwd)
    return fn
