"""adc from Python: gradients of C/C++ functions, synthesized by the adc compiler.

    import adc, numpy as np
    f = adc.compile("model.c", signature="double loss(const double x[n], double b, int n)")
    value, (dx, db) = f.value_and_grad(np.ones(5), 0.5)

``adc.torch.function(f)`` and ``adc.jax.function(f)`` wrap a compiled function for
``loss.backward()`` and ``jax.grad``/``jax.jit``. See docs/src/python.md.
"""

from ._build import cache_dir, find_adc, find_clang, wrapper_source
from ._core import Function, compile
from ._errors import AdcError, CompileError, SignatureError, ToolNotFoundError
from ._signature import parse_signature

__version__ = "0.1.0"


def __getattr__(name):
    # `adc.torch` and `adc.jax` load on first use, so that numpy alone is enough for the rest.
    if name in ("torch", "jax"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'adc' has no attribute {name!r}")

__all__ = [
    "AdcError",
    "CompileError",
    "Function",
    "SignatureError",
    "ToolNotFoundError",
    "cache_dir",
    "compile",
    "find_adc",
    "find_clang",
    "parse_signature",
    "wrapper_source",
]
