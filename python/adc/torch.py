"""PyTorch: a compiled function as a ``torch.autograd.Function``.

    loss_fn = adc.torch.function(adc.compile("model.c", signature=...))
    loss = loss_fn(x, w, b)      # tensors (float64 for double, float32 for float), numbers
    loss.backward()              # x.grad, w.grad, b.grad from adc's synthesized gradient

Tensors share memory with the arrays the C code sees (CPU, contiguous, no copies). Every
tensor argument of a differentiable parameter that requires grad gets a gradient; double
and float scalars may be 0-d tensors (learnable parameters) or Python numbers.
"""

from __future__ import annotations

import numpy as np
import torch

from ._core import Function

__all__ = ["function"]

_TORCH_DTYPES = {"float64": torch.float64, "float32": torch.float32, "int32": torch.int32,
                 "int64": torch.int64}


def _to_numpy(f: Function, p, v):
    if isinstance(v, torch.Tensor):
        if v.device.type != "cpu":
            raise ValueError(
                f"{f.name}(): tensor {p.name!r} is on {v.device}; adc's code runs on the CPU: "
                "pass v.cpu()"
            )
        want = _TORCH_DTYPES.get(p.dtype)
        if want is not None and v.dtype != want:
            raise TypeError(
                f"{f.name}(): tensor {p.name!r} has dtype {v.dtype}, but the C parameter is "
                f"{p.c_type}: pass a {want} tensor (v.to({want}))"
            )
        if p.is_array:
            if not v.is_contiguous():
                raise ValueError(
                    f"{f.name}(): tensor {p.name!r} is not contiguous (strides {v.stride()}): "
                    "pass v.contiguous()"
                )
            return v.detach().numpy()
        if v.numel() != 1:
            raise ValueError(
                f"{f.name}(): {p.name!r} is a scalar parameter but got a tensor of shape "
                f"{tuple(v.shape)}"
            )
        return v.detach().item()
    if p.is_array and isinstance(v, np.ndarray):
        return v
    if p.is_array:
        raise TypeError(
            f"{f.name}(): argument {p.name!r} must be a tensor (or numpy array) of "
            f"{p.dtype}, not {type(v).__name__}"
        )
    return v


def function(f: Function):
    """Wraps a compiled ``adc.Function`` for PyTorch autograd. The result takes the same
    arguments as ``f`` (tensors instead of arrays) and returns tensors: the return value
    (a 0-d tensor), then the outputs."""
    if not isinstance(f, Function):
        raise TypeError(f"adc.torch.function takes what adc.compile returns, not {type(f).__name__}")
    names = f.arg_names
    params = {p.name: p for p in f.inputs}
    scalar_loss = f.signature.ret is not None and not f.signature.outputs

    class _AdcFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            vals = {n: _to_numpy(f, params[n], v) for n, v in zip(names, args) if v is not None}
            ctx.eager = None
            if scalar_loss and any(ctx.needs_input_grad):
                # A scalar loss whose gradient will be wanted: one call of adc's gradient
                # gives the value too; backward only scales it by the incoming gradient.
                results, ctx.eager = f.vjp((), (1.0,), vals)
                shapes = {}
            else:
                vals, shapes = f.resolve(vals)
                results = f._primal_call(vals, shapes)
            ctx.tensor_mask = [isinstance(a, torch.Tensor) for a in args]
            ctx.save_for_backward(*[a for a in args if isinstance(a, torch.Tensor)])
            ctx.others = [None if isinstance(a, torch.Tensor) else a for a in args]
            outs = []
            for (name, _, dtype), r in zip(f.output_specs(shapes), results):
                if name == "return":
                    outs.append(torch.tensor(r, dtype=_TORCH_DTYPES[dtype]))
                else:
                    outs.append(torch.from_numpy(r))
            return outs[0] if len(outs) == 1 else tuple(outs)

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, *grads):
            saved = iter(ctx.saved_tensors)
            args = [next(saved) if t else a for a, t in zip(ctx.others, ctx.tensor_mask)]
            if ctx.eager is not None:
                scale = 0.0 if grads[0] is None else grads[0].item()
                gs = [g * scale for g in ctx.eager]
            else:
                vals = {n: _to_numpy(f, params[n], v) for n, v in zip(names, args) if v is not None}
                cts = [None if g is None else g.detach().cpu().numpy() for g in grads]
                _, gs = f.vjp((), cts, vals)
            by_name = {p.name: g for p, g in zip(f.diff_inputs, gs)}
            out = []
            for i, (n, a) in enumerate(zip(names, args)):
                if n in by_name and ctx.needs_input_grad[i]:
                    g = by_name[n]
                    if isinstance(g, np.ndarray):
                        out.append(torch.from_numpy(g))
                    else:
                        out.append(torch.tensor(g, dtype=a.dtype).reshape(a.shape))
                else:
                    out.append(None)
            return tuple(out)

    def call(*args, **kwargs):
        vals = f.bind(args, kwargs)
        return _AdcFunction.apply(*[vals.get(n) for n in names])

    call.__name__ = f.name
    call.__doc__ = f"{f.signature.text}, differentiable by PyTorch autograd (adc's gradient)."
    call.adc_function = f
    return call
