"""Shared set-up of the Python tests: adc, a fresh cache, finite differences."""

import os
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
C = HERE / "c"
EXAMPLES = REPO / "examples" / "python"

sys.path.insert(0, str(HERE.parent))

# adc: $ADC, else the debug build of this checkout (what `cargo test` built), else PATH.
if not os.environ.get("ADC"):
    for cand in (REPO / "target" / "debug" / "adc", REPO / "target" / "release" / "adc"):
        if cand.exists():
            os.environ["ADC"] = str(cand)
            break

# A cache of our own, fresh for each run unless ADC_PYTHON_TEST_CACHE names one.
if os.environ.get("ADC_PYTHON_TEST_CACHE"):
    os.environ["ADC_PYTHON_CACHE"] = os.environ["ADC_PYTHON_TEST_CACHE"]
else:
    _tmp = tempfile.TemporaryDirectory(prefix="adc-python-tests-")
    os.environ["ADC_PYTHON_CACHE"] = _tmp.name

import adc  # noqa: E402

_compiled = {}


def compile_cached(source, signature, **kw):
    """adc.compile, once per (source, signature, options) in this process."""
    key = (str(source), signature, tuple(sorted((k, tuple(v) if isinstance(v, (list, tuple)) else v) for k, v in kw.items())))
    if key not in _compiled:
        _compiled[key] = adc.compile(source, signature=signature, **kw)
    return _compiled[key]


MODEL_SIG = "double model_loss(const double x[n], const double w[m][n], const double y[m], double b, int m, int n)"
FIT_SIG = ("double fit_loss(const double p[4], const double s0[2], const double obs[steps], "
           "int steps, double dt, double omega)")
SIM_SIG = ("void simulate(const double p[4], const double s0[2], double traj[steps][2], "
           "int steps, double dt, double omega)")


def model():
    return compile_cached(C / "model.c", MODEL_SIG)


def model_data(seed=0, m=4, n=3):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n), rng.standard_normal((m, n)), rng.standard_normal(m), 0.3)


def fit_loss():
    return compile_cached(EXAMPLES / "oscillator.c", FIT_SIG, inactive=("s0", "obs", "dt", "omega"))


def simulate():
    return compile_cached(EXAMPLES / "oscillator.c", SIM_SIG, outputs=("traj",), inactive=("dt", "omega"))


def central_diff(fun, arrays, h=1e-6):
    """Central differences of the scalar fun(*arrays) with respect to each array (float
    scalars are 0-d arrays); returns one array per argument."""
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    grads = []
    for k, a in enumerate(arrays):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            up = [b.copy() for b in arrays]
            dn = [b.copy() for b in arrays]
            up[k][idx] += h
            dn[k][idx] -= h
            g[idx] = (fun(*up) - fun(*dn)) / (2 * h)
        grads.append(g)
    return grads


def assert_close(test, got, want, rtol=1e-6, atol=1e-7, what=""):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    test.assertEqual(got.shape, want.shape, f"{what}: shapes differ")
    if not np.allclose(got, want, rtol=rtol, atol=atol):
        test.fail(f"{what}: adc {got} vs finite differences {want} "
                  f"(max |diff| {np.max(np.abs(got - want)):.3e})")
