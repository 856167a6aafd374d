#!/usr/bin/env python3
"""Times adc's GPU kernels and their gradients on a CUDA device (python3, CuPy, numpy).

    python3 bench/gpu/run.py [PTX_DIR] [--out DIR] [--kernels a,b] [--dry-run]

PTX_DIR (default bench/gpu/out) holds NAME.ptx from bench/gpu/build.sh: each module has
the primal kernel NAME and the gradient kernel NAME_grad (tests/cuda/grad_NAME.cu built
with the benchmark sizes of bench/gpu/sizes). For each kernel this script

- allocates the inputs (sizes below: primal launches of tens of microseconds or more),
- times the primal and the gradient kernel with CUDA events: warm-up launches, then the
  median of --reps launches (fewer when one launch is slow, see --budget). Before every
  launch, outside the timed interval, all buffers are restored from pristine copies and
  the shadows re-seeded (outputs' shadows = 1, inputs' = 0): kernels that update in place
  (saxpy's y, row_decay's x) and the gradient's consumption of its seeds would otherwise
  change what later launches compute;
- checks the gradient at a few elements of every differentiated buffer against a central
  finite difference of the primal on the device: with seeds s (the shadows' initial
  values), the gradient kernel computes d/dp_in of L = sum(s * p_out) over all buffers, so
  FD = (L(p_j + h) - L(p_j - h)) / 2h, the difference taken elementwise before summing so
  that untouched elements cancel exactly. Reported as the largest relative error
  |g - fd| / max(|g|, |fd|, 1e-6); it never fails the run.

Each kernel runs in its own subprocess (`--one NAME`, a timeout per kernel): a fault such
as an illegal address poisons the CUDA context, and a trap in one gradient must not hide
the others. The results go to DIR/gpu_kernels.md and DIR/gpu_kernels.json (DIR: --out,
else $OUT, else bench/gpu/out/results), rewritten after every kernel so that a run cut
short keeps what it measured.

`--dry-run` needs neither CuPy nor numpy nor a GPU: it prints each kernel's launch shape
and argument types and checks them against the PTX entry signatures (parameter count,
32/64-bit widths, and the register class each parameter is loaded into).
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
THREADS = 256  # threads per block of the 1-D launches

# CUDA limits (cudaDeviceSetLimit). The gradients keep tapes in local memory (constant
# size, or adc's 4 KiB tape region per thread; the stack limit is raised to hold them) or,
# built with `--gpu-tapes heap` (nbody), on the device heap, whose CUDA default of 8 MB
# is far too small.
DEFAULT_HEAP_MB = 1024
MIN_STACK_BYTES = 8192

# ----------------------------------------------------------------------------- specs
# Pure data (no numpy), so that --dry-run can print and check it anywhere.


class Buf:
    """A device buffer: element type, length, initial values, and whether the gradient
    kernel takes a shadow for it (`dup`, enzyme_dup); `seed` marks an output, whose
    shadow starts at 1 (dout = ones), the other shadows start at 0."""

    def __init__(self, name, dtype, length, init, dup=True, seed=False):
        assert dtype in ("f32", "f64", "i32"), dtype
        assert not (seed and not dup)
        self.name, self.dtype, self.length, self.init = name, dtype, int(length), init
        self.dup = dup and dtype != "i32"
        self.seed = seed

    def nbytes(self):
        return self.length * (8 if self.dtype == "f64" else 4)


# Initial values (drawn with numpy from a fixed seed):
def U(lo, hi):
    """uniform in [lo, hi)"""
    return ("uniform", lo, hi)


def CELLS(count, lo, hi):
    """uniform in [lo, hi) but at least 10% of a cell away from the edges of `count` equal
    cells: the histogram's bins and XSBench's grid intervals, where the primal has a kink
    that a finite difference must not straddle"""
    return ("cells", count, lo, hi)


def LINSPACE(lo, hi):
    return ("linspace", lo, hi)


def RANDINT(lo, hi):
    """integers lo..hi inclusive"""
    return ("randint", lo, hi)


ZEROS = ("zeros",)


class Spec:
    """One kernel: launch shape, scalars {name: (type, value)}, buffers, and the primal
    kernel's parameters in order. The gradient kernel's parameters are the primal's with
    each dup buffer's shadow right after it (as every `NAME_grad` wrapper of
    tests/cuda/grad_*.cu declares them)."""

    def __init__(self, name, size, grid, block, scalars, bufs, primal, fd_step=1e-4,
                 heap_mb=DEFAULT_HEAP_MB):
        self.name, self.size = name, size
        self.grid, self.block = tuple(grid), tuple(block)
        self.scalars = scalars
        self.bufs = {b.name: b for b in bufs}
        self.primal_args = primal.split()
        # Relative step of the finite differences: h = fd_step * max(1, |x|).
        self.fd_step = fd_step
        self.heap_mb = heap_mb
        for a in self.primal_args:
            assert (a in self.scalars) != (a in self.bufs), f"{name}: argument {a}"
        assert set(self.primal_args) == set(self.scalars) | set(self.bufs), name
        assert any(b.seed for b in bufs), f"{name}: no output seeded"

    def grad_args(self):
        """(kind, name) pairs: kind 'scalar', 'buf' or 'shadow'."""
        out = []
        for a in self.primal_args:
            if a in self.scalars:
                out.append(("scalar", a))
            else:
                out.append(("buf", a))
                if self.bufs[a].dup:
                    out.append(("shadow", a))
        return out

    def primal_arg_kinds(self):
        return [("scalar" if a in self.scalars else "buf", a) for a in self.primal_args]

    def arg_type(self, kind, name):
        """The C type class of an argument: i32, i64, f32, f64 or ptr."""
        return self.scalars[name][0] if kind == "scalar" else "ptr"

    def signature(self, grad):
        parts = []
        for kind, a in (self.grad_args() if grad else self.primal_arg_kinds()):
            if kind == "scalar":
                t, v = self.scalars[a]
                parts.append(f"{a}: {t} = {v}")
            else:
                b = self.bufs[a]
                prefix = "d" if kind == "shadow" else ""
                init = "seed 1" if kind == "shadow" and b.seed else (
                    "0" if kind == "shadow" else init_text(b.init))
                parts.append(f"{prefix}{a}: {b.dtype}[{b.length}] ({init})")
        return f"{self.name}{'_grad' if grad else ''}({', '.join(parts)})"

    def launch_text(self):
        return f"{dim_text(self.grid)} x {dim_text(self.block)}"

    def describe(self):
        return {
            "kernel": self.name,
            "size": self.size,
            "grid": list(self.grid),
            "block": list(self.block),
            "launch": self.launch_text(),
            "buffers_mb": round(sum(b.nbytes() for b in self.bufs.values()) / 2**20, 1),
        }


def init_text(init):
    kind, *rest = init
    return kind if not rest else f"{kind} {', '.join(str(r) for r in rest)}"


def dim_text(d):
    d = [x for x in d]
    while len(d) > 1 and d[-1] == 1:
        d.pop()
    return "x".join(str(x) for x in d)


def grid1(threads, block=THREADS):
    """A 1-D grid covering `threads` threads."""
    return ((threads + block - 1) // block, 1, 1)


def read_defines(name):
    """The integer #defines the kernel was compiled with: tests/cuda/grad_NAME.cu's own,
    overridden by its line in bench/gpu/sizes (what build.sh passes as -D flags), so that
    the host side cannot disagree with them."""
    text = (HERE.parent.parent / "tests" / "cuda" / f"grad_{name}.cu").read_text()
    defines = {m.group(1): int(m.group(2))
               for m in re.finditer(r"^#define\s+(\w+)\s+(\d+)\s*$", text, re.M)}
    for line in (HERE / "sizes").read_text().splitlines():
        words = line.split()
        if words and words[0] == name:
            defines.update((k, int(v)) for k, v in (w.split("=", 1) for w in words[1:]))
    return defines


SPECS = {}


def kernel(fn):
    SPECS[fn.__name__[len("spec_"):]] = fn
    return fn


# Sizes: elementwise kernels move 2^24-2^25 elements (hundreds of MB, ~100 us at H100
# bandwidth); kernels with per-thread loops or atomics on few addresses have fewer
# threads. Value ranges follow tests/gpu_device.rs.

@kernel
def spec_saxpy(d):
    n = 1 << 25
    # Linear in every input: central differences are exact for any step, and a large
    # one keeps float32 rounding of y small against the difference.
    return Spec("saxpy", "n = 2^25 (f32)", grid1(n), (THREADS, 1, 1),
                {"n": ("i32", n), "a": ("f32", 1.5)},
                [Buf("x", "f32", n, U(-1, 1)), Buf("y", "f32", n, U(-1, 1), seed=True)],
                "n a x y", fd_step=0.1)


@kernel
def spec_expsin(d):
    n = 1 << 24
    return Spec("expsin", "n = 2^24", grid1(n), (THREADS, 1, 1), {"n": ("i32", n)},
                [Buf("x", "f64", n, U(-2, 2)), Buf("y", "f64", n, U(-1, 1), seed=True)],
                "n x y")


@kernel
def spec_sqrtpow(d):
    n = 1 << 24
    return Spec("sqrtpow", "n = 2^24", grid1(n), (THREADS, 1, 1), {"n": ("i32", n)},
                [Buf("x", "f64", n, U(-1, 2)), Buf("y", "f64", n, U(-1, 1), seed=True)],
                "n x y")


@kernel
def spec_stencil1d(d):
    n = 1 << 24
    return Spec("stencil1d", "n = 2^24", grid1(n), (THREADS, 1, 1), {"n": ("i32", n)},
                [Buf("in", "f64", n, U(-1, 1)), Buf("out", "f64", n, U(-1, 1), seed=True)],
                "n in out")


@kernel
def spec_stencil2d(d):
    n = 4096  # n x n cells; 16 x 16 blocks (a multiple of 16)
    return Spec("stencil2d", "4096 x 4096", (n // 16, n // 16, 1), (16, 16, 1),
                {"n": ("i32", n)},
                [Buf("u", "f64", n * n, U(0, 1)), Buf("v", "f64", n * n, U(0, 1), seed=True)],
                "n u v")


@kernel
def spec_stencil_tile(d):
    n, block = 1 << 24, d["BLOCK"]  # the tile holds BLOCK + 2: one thread per element
    return Spec("stencil_tile", f"n = 2^24, BLOCK {block}", grid1(n, block), (block, 1, 1),
                {"n": ("i32", n)},
                [Buf("in", "f64", n, U(-1, 1)), Buf("out", "f64", n, U(-1, 1), seed=True)],
                "n in out")


@kernel
def spec_dot(d):
    n, block = 1 << 24, d["BLOCK"]  # the shared reduction array has BLOCK elements
    # Linear in every input: a large step keeps the atomics' order-dependent rounding
    # of `out` small against the difference.
    return Spec("dot", f"n = 2^24, BLOCK {block}", grid1(n, block), (block, 1, 1),
                {"n": ("i32", n)},
                [Buf("x", "f64", n, U(-1, 1)), Buf("y", "f64", n, U(-1, 1)),
                 Buf("out", "f64", 1, U(0, 1), seed=True)],
                "n x y out", fd_step=0.1)


@kernel
def spec_histogram(d):
    n, bins = 1 << 23, d["BINS"]
    return Spec("histogram", f"n = 2^23, {bins} bins", grid1(n), (THREADS, 1, 1),
                {"n": ("i32", n)},
                [Buf("x", "f64", n, CELLS(bins, 0, 1)), Buf("w", "f64", n, U(0.5, 1.5)),
                 Buf("hist", "f64", bins, U(0, 1), seed=True),
                 Buf("count", "i32", bins, ZEROS, dup=False)],
                "n x w hist count")


@kernel
def spec_logsumexp(d):
    rows, cols = 1 << 18, 64  # 2^24 elements; one thread per row
    return Spec("logsumexp", f"{rows} rows x {cols} cols", grid1(rows), (THREADS, 1, 1),
                {"rows": ("i32", rows), "cols": ("i32", cols)},
                [Buf("x", "f64", rows * cols, U(-2, 2)),
                 Buf("y", "f64", rows, U(0, 1), seed=True)],
                "rows cols x y")


@kernel
def spec_matmul(d):
    n, tile = d["N"], d["TILE"]  # compiled in; one thread per element of c
    assert n % tile == 0
    return Spec("matmul", f"N = {n}, TILE {tile}", (n // tile, n // tile, 1), (tile, tile, 1),
                {},
                [Buf("a", "f64", n * n, U(-1, 1)), Buf("b", "f64", n * n, U(-1, 1)),
                 Buf("c", "f64", n * n, U(-1, 1), seed=True)],
                "a b c")


@kernel
def spec_nbody(d):
    bodies = d["BODIES"]  # compiled in; one thread per body
    # The gradient's tape is on the device heap (build.sh): 96 KiB per thread, 384 MiB
    # for 4096 threads, with room for the allocator's overhead.
    return Spec("nbody", f"{bodies} bodies", grid1(bodies), (THREADS, 1, 1), {},
                [Buf("pos", "f64", 2 * bodies, U(-1, 1)),
                 Buf("mass", "f64", bodies, U(0.5, 1.5)),
                 Buf("vel", "f64", 2 * bodies, U(-0.1, 0.1), seed=True)],
                "pos mass vel", heap_mb=2048)


@kernel
def spec_nbody_restrict(d):
    bodies = d["BODIES"]
    # The same step with __restrict__ inputs: no tape, default build flags.
    return Spec("nbody_restrict", f"{bodies} bodies, __restrict__", grid1(bodies),
                (THREADS, 1, 1), {},
                [Buf("pos", "f64", 2 * bodies, U(-1, 1)),
                 Buf("mass", "f64", bodies, U(0.5, 1.5)),
                 Buf("vel", "f64", 2 * bodies, U(-0.1, 0.1), seed=True)],
                "pos mass vel")


@kernel
def spec_poly_loop(d):
    n, degree = 1 << 23, 15  # degrees 0..15 per thread, 16 coefficients
    return Spec("poly_loop", f"n = 2^23, degree 0-{degree}", grid1(n), (THREADS, 1, 1),
                {"n": ("i32", n)},
                [Buf("deg", "i32", n, RANDINT(0, degree), dup=False),
                 Buf("a", "f64", n, U(-1, 1)), Buf("c", "f64", degree + 1, U(-1, 1)),
                 Buf("y", "f64", n, U(0, 1), seed=True)],
                "n deg a c y")


@kernel
def spec_row_decay(d):
    # m (a long) columns per row, one thread per row. The gradient's tape holds 16 bytes
    # per column in each thread's 4 KiB local region: m <= 256, else it traps.
    rows, m = 1 << 17, 128
    return Spec("row_decay", f"{rows} rows x {m} cols", grid1(rows), (THREADS, 1, 1),
                {"rows": ("i32", rows), "m": ("i64", m)},
                # |x| <= 0.5 keeps the row products prod(1 + x^2) moderate.
                [Buf("x", "f64", rows * m, U(-0.5, 0.5)),
                 Buf("y", "f64", rows, U(0, 1), seed=True)],
                "rows m x y")


@kernel
def spec_tanh_layer(d):
    rows, cols = 1 << 18, d["COLS"]
    return Spec("tanh_layer", f"{rows} rows x {cols} cols", grid1(rows), (THREADS, 1, 1),
                {"rows": ("i32", rows)},
                [Buf("w", "f64", rows * cols, U(-0.25, 0.25)), Buf("x", "f64", cols, U(-1, 1)),
                 Buf("b", "f64", rows, U(-0.5, 0.5)), Buf("y", "f64", rows, U(-1, 1), seed=True)],
                "rows w x b y")


@kernel
def spec_xsbench(d):
    # Lookups are latency-bound (a binary search in a grid that stays in cache), so
    # 2^24 of them: the energies and results alone are 256 MB of traffic.
    n, grid, nuclides = 1 << 24, d["GRID"], d["NUCLIDES"]
    # The energy grid is const (no shadow); energies stay inside grid intervals.
    return Spec("xsbench", f"n = 2^24, grid {grid}, {nuclides} nuclides", grid1(n),
                (THREADS, 1, 1), {"n": ("i32", n)},
                [Buf("egrid", "f64", grid, LINSPACE(0, 1), dup=False),
                 Buf("energy", "f64", n, CELLS(grid - 1, 0, 1)),
                 Buf("xs", "f64", nuclides * grid, U(0.5, 2)),
                 Buf("density", "f64", nuclides, U(0.5, 1.5)),
                 Buf("out", "f64", n, U(0, 1), seed=True)],
                "n egrid energy xs density out", fd_step=1e-5)


@kernel
def spec_sumsq(d):
    n = 1 << 22  # every thread adds into one double: atomics serialize
    # Quadratic in x, linear in s: exact central differences, a large step.
    return Spec("sumsq", "n = 2^22", grid1(n), (THREADS, 1, 1), {"n": ("i32", n)},
                [Buf("x", "f64", n, U(-1, 1)), Buf("s", "f64", n, U(0.5, 1.5)),
                 Buf("total", "f64", 1, U(0, 1), seed=True)],
                "n x s total", fd_step=0.1)


def build_spec(name):
    if name not in SPECS:
        raise KeyError(f"unknown kernel {name} (known: {', '.join(SPECS)})")
    return SPECS[name](read_defines(name))


# ------------------------------------------------------------------------ PTX checks

# What a parameter of each type looks like in adc's PTX: its width, and the register
# class its ld.param loads into (%r: b32, %rd: b64, %f: f32, %fd: f64).
PTX_TYPES = {"i32": (32, "r"), "f32": (32, "f"), "i64": (64, "rd"), "ptr": (64, "rd"),
             "f64": (64, "fd")}


def ptx_entry(ptx, entry):
    """(params, body) of `.entry ENTRY`: params as (width, name); None when absent."""
    m = re.search(r"\.entry\s+" + re.escape(entry) + r"\s*\(([^)]*)\)", ptx)
    if not m:
        return None
    params = []
    for p in m.group(1).split(","):
        p = p.strip()
        if p:
            pm = re.match(r"\.param\s+\.[a-z]+(\d+)\s+(\S+)$", p)
            params.append((int(pm.group(1)), pm.group(2)) if pm else (0, p))
    end = ptx.find("\n}", m.end())
    return params, ptx[m.end(): end if end >= 0 else len(ptx)]


def check_entry(ptx, entry, types):
    """Problems (strings) between an entry's PTX signature and the argument types."""
    found = ptx_entry(ptx, entry)
    if found is None:
        return [f"no .entry {entry}"]
    params, body = found
    if len(params) != len(types):
        return [f"{entry}: {len(params)} parameters in the PTX, {len(types)} passed"]
    loads = {}
    for lm in re.finditer(r"ld\.param\.\w+\s+%([a-z]+)\d+\s*,\s*\[([^\]]+)\]", body):
        loads.setdefault(lm.group(2).strip(), lm.group(1))
    problems = []
    for i, ((width, pname), t) in enumerate(zip(params, types)):
        want_width, want_class = PTX_TYPES[t]
        got_class = loads.get(pname)
        if width != want_width or (got_class is not None and got_class != want_class):
            problems.append(f"{entry} parameter {i}: PTX .b{width} loaded into "
                            f"%{got_class}, passed {t}")
    return problems


def local_bytes(ptx, entry):
    """Bytes of .local arrays an entry declares (its tapes): the stack limit must hold
    them."""
    found = ptx_entry(ptx, entry)
    if found is None:
        return 0
    return sum(int(x) for x in re.findall(r"\.local\s+\.align\s+\d+\s+\.b8\s+\S+?\[(\d+)\]",
                                          found[1]))


def check_ptx(spec, ptx):
    types_p = [spec.arg_type(k, a) for k, a in spec.primal_arg_kinds()]
    types_g = [spec.arg_type(k, a) for k, a in spec.grad_args()]
    return check_entry(ptx, spec.name, types_p) + check_entry(ptx, spec.name + "_grad", types_g)


# ----------------------------------------------------------- one kernel on the device


def short(e, limit=240):
    text = f"{type(e).__name__}: {e}".replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Data:
    """Pristine and working device copies of every buffer, shadows and their seeds."""

    def __init__(self, spec, np, cp):
        self.spec, self.np, self.cp = spec, np, cp
        rng = np.random.default_rng(sum(map(ord, spec.name)))
        self.host, self.pristine, self.work = {}, {}, {}
        self.shadow, self.shadow_init = {}, {}
        for b in spec.bufs.values():
            h = make_values(b, rng, np)
            self.host[b.name] = h
            self.pristine[b.name] = cp.asarray(h)
            self.work[b.name] = cp.empty_like(self.pristine[b.name])
            if b.dup:
                s = (np.ones if b.seed else np.zeros)(b.length, dtype=h.dtype)
                self.shadow_init[b.name] = cp.asarray(s)
                self.shadow[b.name] = cp.empty_like(self.shadow_init[b.name])
        self.restore()
        self.reset_shadows()

    # Plain device-to-device copies (cudaMemcpyAsync on the current stream): no CuPy
    # kernel, hence nothing for CuPy to compile with NVRTC.
    @staticmethod
    def _copy(dst, src):
        dst.data.copy_from_device_async(src.data, src.nbytes)

    def restore(self):
        for name, w in self.work.items():
            self._copy(w, self.pristine[name])

    def reset_shadows(self):
        for name, s in self.shadow.items():
            self._copy(s, self.shadow_init[name])

    def args(self, grad):
        np = self.np
        types = {"i32": np.int32, "i64": np.int64, "f32": np.float32, "f64": np.float64}
        out = []
        kinds = self.spec.grad_args() if grad else self.spec.primal_arg_kinds()
        for kind, a in kinds:
            if kind == "scalar":
                t, v = self.spec.scalars[a]
                out.append(types[t](v))
            elif kind == "buf":
                out.append(self.work[a])
            else:
                out.append(self.shadow[a])
        return tuple(out)


def numpy_dtype(np, dtype):
    return {"f32": np.float32, "f64": np.float64, "i32": np.int32}[dtype]


def make_values(b, rng, np):
    dt = numpy_dtype(np, b.dtype)
    kind, *p = b.init
    if kind == "uniform":
        return rng.uniform(p[0], p[1], b.length).astype(dt)
    if kind == "cells":
        count, lo, hi = p
        cell = rng.integers(0, count, b.length)
        frac = 0.1 + 0.8 * rng.random(b.length)
        return (lo + (cell + frac) * ((hi - lo) / count)).astype(dt)
    if kind == "linspace":
        return np.linspace(p[0], p[1], b.length).astype(dt)
    if kind == "randint":
        return rng.integers(p[0], p[1] + 1, b.length).astype(dt)
    if kind == "zeros":
        return np.zeros(b.length, dtype=dt)
    raise ValueError(f"unknown init {b.init}")


def time_launches(cp, launch, reset, opts):
    """Median launch time in microseconds and the number of timed launches. Each launch
    is timed alone between two events, after `reset` (not timed)."""
    start, end = cp.cuda.Event(), cp.cuda.Event()

    def once():
        reset()
        start.record()
        launch()
        end.record()
        end.synchronize()
        return cp.cuda.get_elapsed_time(start, end) * 1e3

    # Slow kernels (a serialized atomic, a heap tape) get fewer warm-up and timed
    # launches, so that one kernel stays within its timeout.
    warm = [once()]
    while len(warm) < opts.warmup and sum(warm) < opts.budget * 1e6 / 4:
        warm.append(once())
    reps = max(opts.min_reps, min(opts.reps, int(opts.budget * 1e6 / max(warm[-1], 1.0))))
    times = sorted(once() for _ in range(reps))
    return times[len(times) // 2], reps, times[0]


def fd_check(spec, data, np, launch_primal, launch_grad, max_samples):
    """Largest relative error of the gradient against central differences, sampled at
    the first, the last and random elements of every dup buffer."""
    cp = data.cp
    data.restore()
    data.reset_shadows()
    launch_grad()
    cp.cuda.runtime.deviceSynchronize()
    grads = {name: s.get() for name, s in data.shadow.items()}
    outputs = [b.name for b in spec.bufs.values() if b.seed]
    rng = np.random.default_rng(7)

    def objective_parts(name, j, value):
        """Outputs (float64, host) of the primal with element j of `name` set to value."""
        data.restore()
        w = data.work[name]
        w[j:j + 1].set(np.array([value], dtype=w.dtype))
        launch_primal()
        return {o: data.work[o].get().astype(np.float64) for o in outputs}

    worst, samples = None, 0
    for name in spec.bufs:
        b = spec.bufs[name]
        if not b.dup:
            continue
        n = b.length
        picks = [0, n - 1] + [int(i) for i in rng.integers(0, n, max(0, max_samples - 2))]
        for j in sorted(set(picks)):
            x0 = float(data.host[name][j])
            h = spec.fd_step * max(1.0, abs(x0))
            dt = data.host[name].dtype.type
            xp, xm = dt(x0 + h), dt(x0 - h)
            plus = objective_parts(name, j, xp)
            minus = objective_parts(name, j, xm)
            diff = sum(float((plus[o] - minus[o]).sum()) for o in outputs)
            fd = diff / (float(xp) - float(xm))  # the step as stored (f32 rounds it)
            g = float(grads[name][j])
            err = abs(g - fd) / max(abs(g), abs(fd), 1e-6)
            samples += 1
            if worst is None or err > worst["rel_err"] or math.isnan(err):
                worst = {"buffer": name, "index": j, "grad": g, "fd": fd, "rel_err": err}
    data.restore()
    return worst, samples


def run_one(name, ptx_dir, opts):
    """Runs one kernel; prints `RESULT {json}` after each phase (the parent keeps the
    last one, so a timeout or crash still reports what was measured)."""
    res = {"kernel": name, "errors": []}

    def emit():
        print("RESULT " + json.dumps(res), flush=True)

    try:
        spec = build_spec(name)
        res.update(spec.describe())
        ptx_path = Path(ptx_dir) / f"{name}.ptx"
        ptx = ptx_path.read_text()
        problems = check_ptx(spec, ptx)
    except Exception as e:  # missing source or PTX
        res["errors"].append("setup: " + short(e))
        emit()
        return
    if problems:
        res["errors"].append("PTX signature: " + "; ".join(problems))
        emit()
        return
    emit()

    try:
        import numpy as np
        import cupy as cp

        rt = cp.cuda.runtime
        # Before any launch: the heap size cannot change once a kernel used malloc.
        heap = spec.heap_mb << 20
        rt.deviceSetLimit(getattr(rt, "cudaLimitMallocHeapSize", 2), heap)
        stack = max(MIN_STACK_BYTES,
                    max(local_bytes(ptx, spec.name), local_bytes(ptx, spec.name + "_grad"))
                    + 4096)
        rt.deviceSetLimit(getattr(rt, "cudaLimitStackSize", 0), stack)
        props = rt.getDeviceProperties(0)
        dev = props["name"]
        res["device"] = dev.decode() if isinstance(dev, bytes) else str(dev)
        res["driver"] = rt.driverGetVersion()
        res["cupy"] = cp.__version__
        res["heap_mb"], res["stack_bytes"] = spec.heap_mb, stack

        module = cp.RawModule(path=str(ptx_path))
        data = Data(spec, np, cp)
        args_p, args_g = data.args(False), data.args(True)
        # Looked up when first launched, so that a missing gradient entry still lets the
        # primal be timed.
        functions = {}

        def function(entry):
            if entry not in functions:
                functions[entry] = module.get_function(entry)
            return functions[entry]

        def launch_primal():
            function(spec.name)(spec.grid, spec.block, args_p)

        def launch_grad():
            function(spec.name + "_grad")(spec.grid, spec.block, args_g)

        def reset_all():
            data.restore()
            data.reset_shadows()
    except Exception as e:
        res["errors"].append("setup: " + short(e))
        emit()
        return

    try:
        res["primal_us"], res["primal_reps"], res["primal_min_us"] = time_launches(
            cp, launch_primal, data.restore, opts)
    except Exception as e:
        res["errors"].append("primal: " + short(e))
    emit()
    try:
        res["grad_us"], res["grad_reps"], res["grad_min_us"] = time_launches(
            cp, launch_grad, reset_all, opts)
    except Exception as e:
        res["errors"].append("gradient: " + short(e))
    if res.get("primal_us") and res.get("grad_us"):
        res["ratio"] = res["grad_us"] / res["primal_us"]
    emit()
    if opts.check and not res["errors"]:
        try:
            worst, samples = fd_check(spec, data, np, launch_primal, launch_grad, opts.samples)
            res["fd_samples"] = samples
            if worst is not None:
                res["fd_max_rel_err"] = worst["rel_err"]
                res["fd_worst"] = worst
        except Exception as e:
            res["errors"].append("check: " + short(e))
        emit()


# --------------------------------------------------------------------- the main run


def run_child(name, ptx_dir, opts, timeout):
    cmd = [sys.executable, str(Path(__file__).resolve()), "--one", name, str(ptx_dir),
           "--reps", str(opts.reps), "--min-reps", str(opts.min_reps),
           "--warmup", str(opts.warmup), "--budget", str(opts.budget),
           "--samples", str(opts.samples)]
    if not opts.check:
        cmd.append("--no-check")
    timed_out, rc = False, 0
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        stdout, stderr, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        timed_out = True
        stdout, stderr = as_text(e.stdout), as_text(e.stderr)
    res = {"kernel": name, "errors": []}
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            try:
                res = json.loads(line[len("RESULT "):])
            except ValueError:
                pass
    if timed_out:
        res["errors"].append(f"timeout after {timeout:.0f} s")
    elif rc != 0:
        tail = [l for l in stderr.splitlines() if l.strip()][-1:] or [""]
        res["errors"].append(f"exit status {rc}: {tail[0][:200]}")
    return res


def as_text(x):
    if x is None:
        return ""
    return x.decode(errors="replace") if isinstance(x, bytes) else x


def fmt(x, spec):
    return "" if x is None else format(x, spec)


COLUMNS = ["kernel", "launch (grid x block)", "size", "primal µs", "gradient µs",
           "gradient/primal", "FD max rel. error", "error"]


def time_text(r, which):
    """A median in µs, with the number of launches when fewer than 20 (--budget)."""
    t, reps = r.get(which + "_us"), r.get(which + "_reps")
    if t is None:
        return ""
    return f"{t:.1f}" + (f" ({reps} launches)" if reps is not None and reps < 20 else "")


def table_rows(results):
    rows = []
    for r in results:
        err = "; ".join(r.get("errors", []))
        check = fmt(r.get("fd_max_rel_err"), ".1e")
        if check and r.get("fd_samples"):
            check += f" ({r['fd_samples']})"
        rows.append([r.get("kernel", "?"), r.get("launch", ""), r.get("size", ""),
                     time_text(r, "primal"), time_text(r, "grad"),
                     fmt(r.get("ratio"), ".2f"), check,
                     ("error: " + err) if err else ""])
    return rows


def write_results(results, out_dir, opts, started):
    out_dir.mkdir(parents=True, exist_ok=True)
    first = next((r for r in results if r.get("device")), {})
    meta = {
        "device": first.get("device"),
        "driver": first.get("driver"),
        "cupy": first.get("cupy"),
        "started": started,
        "ptx_dir": str(opts.ptx_dir),
        "warmup": opts.warmup,
        "reps": opts.reps,
        "min_reps": opts.min_reps,
        "budget_s": opts.budget,
        "threads_per_block_1d": THREADS,
    }
    (out_dir / "gpu_kernels.json").write_text(
        json.dumps({"meta": meta, "kernels": results}, indent=1) + "\n", encoding="utf-8")
    lines = [
        "# adc GPU kernels: primal and gradient times",
        "",
        f"Device: {meta['device'] or 'unknown'} (CUDA driver {meta['driver']}, CuPy "
        f"{meta['cupy']}), started {started}. PTX for sm_90 from `bench/gpu/build.sh` "
        "(kernels: `tests/cuda/grad_*.cu` with the sizes of `bench/gpu/sizes`).",
        "",
        f"Times: CUDA events around each launch, median of {opts.reps} launches after "
        f"{opts.warmup} warm-up launches (fewer, at least {opts.min_reps}, when one launch "
        f"is slow: counts in parentheses); buffers restored and shadows re-seeded before "
        "every launch, outside the timed interval. The gradient kernel runs the forward "
        "sweep too. FD: largest relative error |g - fd| / max(|g|, |fd|, 1e-6) of the "
        "gradient against central finite differences of the primal at sampled elements "
        "(how many in parentheses).",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    for row in table_rows(results):
        lines.append("| " + " | ".join(c.replace("|", "/") for c in row) + " |")
    (out_dir / "gpu_kernels.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def print_table(results):
    cols = [c.replace("µs", "us") for c in COLUMNS]
    rows = [cols] + table_rows(results)
    widths = [max(len(r[i]) for r in rows[:]) for i in range(len(cols) - 1)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])


def dry_run(names, ptx_dir):
    """Launch shapes and argument types, checked against the PTX when it is there."""
    bad = 0
    results = []
    for name in names:
        try:
            spec = build_spec(name)
        except Exception as e:
            print(f"{name}: {short(e)}")
            bad += 1
            continue
        print(f"== {name}: {spec.size}; launch {spec.launch_text()}; "
              f"{spec.describe()['buffers_mb']} MB of buffers; heap {spec.heap_mb} MiB; "
              f"FD step {spec.fd_step}")
        print("   " + spec.signature(False))
        print("   " + spec.signature(True))
        res = dict(spec.describe(), errors=[])
        ptx_path = Path(ptx_dir) / f"{name}.ptx"
        if ptx_path.exists():
            ptx = ptx_path.read_text()
            problems = check_ptx(spec, ptx)
            lb = max(local_bytes(ptx, name), local_bytes(ptx, name + "_grad"))
            print(f"   PTX: {'; '.join(problems) if problems else 'signatures match'}"
                  f"; local arrays {lb} bytes")
            if problems:
                bad += 1
                res["errors"].append("PTX signature: " + "; ".join(problems))
        else:
            print(f"   PTX: {ptx_path} not built")
        results.append(res)
    return bad, results


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ptx_dir", nargs="?", default=str(HERE / "out"),
                    help="folder with NAME.ptx (default bench/gpu/out)")
    ap.add_argument("--out", help="results folder (default $OUT, else bench/gpu/out/results)")
    ap.add_argument("--kernels", help="comma-separated names (default: all)")
    ap.add_argument("--one", metavar="NAME", help=argparse.SUPPRESS)  # the subprocess
    ap.add_argument("--dry-run", action="store_true",
                    help="print launch shapes and argument types, check the PTX; no GPU")
    ap.add_argument("--reps", type=int, default=30, help="timed launches (median)")
    ap.add_argument("--min-reps", type=int, default=5,
                    help="timed launches at least, when --budget cuts them")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--budget", type=float, default=2.0,
                    help="seconds of timed launches per kernel function at most (about)")
    ap.add_argument("--samples", type=int, default=4,
                    help="finite-difference samples per differentiated buffer")
    ap.add_argument("--no-check", dest="check", action="store_false",
                    help="skip the finite-difference check")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per kernel")
    ap.add_argument("--deadline", type=float, default=1e9,
                    help="seconds for the whole run: kernels not started by then are skipped")
    opts = ap.parse_args(argv)

    if opts.one:
        run_one(opts.one, opts.ptx_dir, opts)
        return 0

    names = opts.kernels.split(",") if opts.kernels else list(SPECS)
    if opts.dry_run:
        bad, results = dry_run(names, opts.ptx_dir)
        if opts.out:
            write_results(results, Path(opts.out), opts, "dry run")
        return 1 if bad else 0

    out_dir = Path(opts.out or os.environ.get("OUT") or HERE / "out" / "results")
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    deadline = time.monotonic() + opts.deadline
    results = []
    for name in names:
        left = deadline - time.monotonic()
        if left < 10:
            res = {"kernel": name, "errors": ["skipped: --deadline reached"]}
        else:
            t0 = time.monotonic()
            res = run_child(name, opts.ptx_dir, opts, min(opts.timeout, left))
            res["wall_s"] = round(time.monotonic() - t0, 1)
        results.append(res)
        r = table_rows([res])[0]
        print(f"{name}: primal {r[3] or '-'} us, gradient {r[4] or '-'} us, ratio {r[5] or '-'}, "
              f"FD {r[6] or '-'} {r[7]} [{res.get('wall_s', 0)} s]", flush=True)
        write_results(results, out_dir, opts, started)
    print()
    print_table(results)
    print(f"\nwritten: {out_dir / 'gpu_kernels.md'}, {out_dir / 'gpu_kernels.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
