"""Parsing of the C prototype that tells the package how to call a function.

A signature is a C prototype, with array sizes where they are known::

    double loss(const double x[n], const double w[n][m], double b, int n, int m)

- ``double *x`` / ``double x[n]`` / ``float x[3][k]``: an array of float64 (float32).
  Differentiable (``enzyme_dup``: a shadow array receives its gradient) unless it is
  named in ``inactive``. Sizes in brackets are checked; an ``int`` parameter used as a
  size is taken from the array's shape when the Python call leaves it out.
- ``double b`` / ``float b``: a differentiable scalar (active) unless inactive.
- ``int``, ``long``, ``size_t``, ``int64_t``, ... scalars: passed as they are.
- ``int *idx`` / ``long idx[k]``: an integer array (never differentiated).
- The return type: ``double``, ``float`` or ``void``. Arrays named in ``outputs`` are
  written by the function (the package allocates them; sizes in brackets are required).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._errors import SignatureError

# C scalar types: name -> (kind, numpy dtype string, ctypes name)
_FLOAT_TYPES = {"double": "float64", "float": "float32"}
_INT_TYPES = {
    "int": "int32",
    "signed": "int32",
    "signed int": "int32",
    "unsigned": "uint32",
    "unsigned int": "uint32",
    "int32_t": "int32",
    "uint32_t": "uint32",
    "long": "int64",
    "long int": "int64",
    "long long": "int64",
    "long long int": "int64",
    "unsigned long": "uint64",
    "unsigned long long": "uint64",
    "int64_t": "int64",
    "uint64_t": "uint64",
    "size_t": "uint64",
    "ptrdiff_t": "int64",
    "ssize_t": "int64",
}
_C_NAMES = {
    "float64": "double",
    "float32": "float",
    "int32": "int",
    "uint32": "unsigned int",
    "int64": "long long",
    "uint64": "unsigned long long",
}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_QUALIFIERS = {"const", "volatile", "restrict", "__restrict", "__restrict__", "register"}


@dataclass
class Param:
    name: str
    dtype: str  # numpy dtype name
    is_array: bool
    dims: tuple | None = None  # array sizes: ints or names of int parameters; None: unknown
    role: str = "in"  # in | out | inactive
    index: int = 0

    @property
    def is_float(self) -> bool:
        return self.dtype in ("float64", "float32")

    @property
    def differentiable(self) -> bool:
        """Takes part in derivatives: a float array or scalar that is not inactive."""
        return self.is_float and self.role in ("in", "out")

    @property
    def c_type(self) -> str:
        return _C_NAMES[self.dtype]


@dataclass
class Signature:
    name: str
    ret: str | None  # numpy dtype of the return, None for void
    params: list[Param] = field(default_factory=list)
    text: str = ""

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def size_params(self) -> set[str]:
        """Integer parameters that give an array size (derivable from shapes)."""
        names = set()
        for p in self.params:
            for d in p.dims or ():
                if isinstance(d, str):
                    names.add(d)
        return names

    @property
    def inputs(self) -> list[Param]:
        """Parameters the Python call takes: all but outputs."""
        return [p for p in self.params if p.role != "out"]

    @property
    def outputs(self) -> list[Param]:
        return [p for p in self.params if p.role == "out"]

    @property
    def diff_inputs(self) -> list[Param]:
        return [p for p in self.params if p.role == "in" and p.is_float]

    def key(self) -> str:
        """A canonical text for cache keys."""
        parts = [f"{self.name}:{self.ret}"]
        for p in self.params:
            parts.append(f"{p.name}:{p.dtype}:{int(p.is_array)}:{p.dims}:{p.role}")
        return ";".join(parts)


def _split_params(text: str) -> list[str]:
    text = text.strip()
    if text in ("", "void"):
        return []
    return [t.strip() for t in text.split(",")]


def _parse_dim(d: str, sig_text: str):
    d = d.strip()
    if d == "":
        return None
    if d.isdigit():
        return int(d)
    if _IDENT.match(d):
        return d
    raise SignatureError(
        f"array size `{d}` in `{sig_text}`: sizes must be integer literals or the name of "
        "an integer parameter"
    )


def _scalar_dtype(type_text: str, sig_text: str, what: str) -> str:
    words = [w for w in type_text.split() if w not in _QUALIFIERS]
    t = " ".join(words)
    if t in _FLOAT_TYPES:
        return _FLOAT_TYPES[t]
    if t in _INT_TYPES:
        return _INT_TYPES[t]
    raise SignatureError(
        f"unsupported type `{type_text.strip()}` for {what} in `{sig_text}`: use double, "
        "float, an integer type (int, long, size_t, int64_t, ...), pointers or arrays of "
        "them"
    )


def parse_signature(
    text: str,
    function: str | None = None,
    outputs=(),
    inactive=(),
) -> Signature:
    """Parses a C prototype like ``double f(const double x[n], double a, int n)``."""
    if not isinstance(text, str):
        raise SignatureError(f"signature must be a string (a C prototype), not {type(text).__name__}")
    sig_text = " ".join(text.replace(";", " ").split())
    m = re.fullmatch(r"(.*?)\b([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)", sig_text)
    if not m:
        raise SignatureError(
            f"cannot read the signature `{text}`: expected a C prototype such as "
            "`double f(const double x[n], int n)`"
        )
    ret_text, name, params_text = m.group(1), m.group(2), m.group(3)
    if function is not None and function != name:
        raise SignatureError(f"the signature names `{name}` but function={function!r}")
    ret_words = [w for w in ret_text.split() if w not in _QUALIFIERS and w not in ("extern", "static", "inline")]
    ret_t = " ".join(ret_words)
    if ret_t == "void":
        ret = None
    elif ret_t in _FLOAT_TYPES:
        ret = _FLOAT_TYPES[ret_t]
    elif "*" in ret_t:
        raise SignatureError(
            f"`{name}` returns a pointer; return double, float or void (write arrays through "
            "output parameters)"
        )
    else:
        raise SignatureError(
            f"`{name}` returns `{ret_t or '?'}`: the return type must be double, float or void"
        )

    params: list[Param] = []
    for i, ptext in enumerate(_split_params(params_text)):
        pm = re.fullmatch(r"(.*?)([A-Za-z_][A-Za-z0-9_]*)\s*((?:\[[^\]]*\]\s*)*)", ptext)
        if not pm or not pm.group(1).strip():
            raise SignatureError(
                f"parameter {i + 1} `{ptext}` of `{sig_text}` needs a type and a name, "
                "e.g. `const double x[n]`"
            )
        type_text, pname, brackets = pm.group(1), pm.group(2), pm.group(3)
        stars = type_text.count("*")
        base = type_text.replace("*", " ")
        dims = re.findall(r"\[([^\]]*)\]", brackets)
        if stars > 1 or (stars and dims):
            raise SignatureError(
                f"parameter `{pname}` of `{sig_text}`: only one level of pointer or array is "
                "supported (use a flat, row-major array: `double w[n][m]`)"
            )
        dtype = _scalar_dtype(base, sig_text, f"parameter `{pname}`")
        is_array = bool(stars or dims)
        pdims = None
        if dims:
            parsed = tuple(_parse_dim(d, sig_text) for d in dims)
            pdims = None if any(d is None for d in parsed) else parsed
            if pdims is None and len(parsed) > 1:
                raise SignatureError(f"parameter `{pname}`: only the first size may be left out")
        params.append(Param(pname, dtype, is_array, pdims, "in", i))

    names = [p.name for p in params]
    if len(set(names)) != len(names):
        raise SignatureError(f"parameter names repeat in `{sig_text}`")
    for o in outputs:
        if o not in names:
            raise SignatureError(f"outputs names `{o}`, which is not a parameter of `{name}`")
        p = params[names.index(o)]
        if not p.is_array or not p.is_float:
            raise SignatureError(f"output `{o}` must be a double or float array")
        if p.dims is None:
            raise SignatureError(
                f"output `{o}` needs its sizes in the signature (e.g. `double {o}[n]`) so "
                "that the package can allocate it"
            )
        p.role = "out"
    for o in inactive:
        if o not in names:
            raise SignatureError(f"inactive names `{o}`, which is not a parameter of `{name}`")
        p = params[names.index(o)]
        if p.role == "out":
            raise SignatureError(f"`{o}` cannot be both an output and inactive")
        p.role = "inactive"
    for p in params:
        if not p.is_float and not p.is_array:
            p.role = "inactive"
        if p.is_array and not p.is_float:
            p.role = "inactive"
    sig = Signature(name, ret, params, sig_text)
    for s in sig.size_params:
        if s not in names:
            raise SignatureError(f"array size `{s}` is not a parameter of `{name}`")
        p = params[names.index(s)]
        if p.is_array or p.is_float:
            raise SignatureError(f"array size `{s}` must be an integer parameter")
    if ret is None and not sig.outputs:
        raise SignatureError(
            f"`{name}` returns void and has no outputs: name the arrays it writes with "
            "outputs=(...), or return a double"
        )
    return sig
