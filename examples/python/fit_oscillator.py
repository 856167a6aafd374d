"""Fit the parameters of a C physics model with gradients that adc synthesizes.

The model (oscillator.c) is a Duffing oscillator, x'' = -k x - a x^3 - c x' + F cos(w t),
integrated with RK4 in C. The C function fit_loss returns the mean squared error of the
simulated positions against observations; adc compiles it together with its gradient, and
an optimizer (torch.optim.LBFGS when PyTorch is installed, else a numpy Adam loop) fits
p = (k, a, c, F) to noisy observations of a trajectory. Then the gradient is timed against
the same model written in PyTorch (autograd) and in JAX (jax.jit of jax.grad), when those
are installed.

    ADC=target/release/adc .venv/bin/python examples/python/fit_oscillator.py
"""

import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "python"))  # the package, when not pip-installed

import adc  # noqa: E402

try:
    import torch
    import adc.torch
except ImportError:
    torch = None
try:
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
except ImportError:
    jax = None

SOURCE = HERE / "oscillator.c"
STEPS, DT, OMEGA = 400, 0.025, 1.2
P_TRUE = np.array([1.0, 0.3, 0.15, 0.6])
P_START = np.array([0.6, 0.0, 0.4, 0.2])
S0 = np.array([1.0, 0.0])

# The C functions, compiled by adc (cached under ~/.cache/adc-python after the first run).
simulate = adc.compile(
    SOURCE,
    signature="void simulate(const double p[4], const double s0[2], double traj[steps][2], "
    "int steps, double dt, double omega)",
    outputs=("traj",),
    inactive=("s0", "dt", "omega"),
)
fit_loss = adc.compile(
    SOURCE,
    signature="double fit_loss(const double p[4], const double s0[2], const double obs[steps], "
    "int steps, double dt, double omega)",
    inactive=("s0", "obs", "dt", "omega"),
)


def observations():
    traj = simulate(P_TRUE, S0, STEPS, DT, OMEGA)
    return traj[:, 0] + 0.01 * np.random.default_rng(0).standard_normal(STEPS)


def fit_with_torch(obs):
    loss_fn = adc.torch.function(fit_loss)
    p = torch.tensor(P_START, dtype=torch.float64, requires_grad=True)
    s0, obs_t = torch.tensor(S0), torch.tensor(obs)
    opt = torch.optim.LBFGS([p], lr=1.0, max_iter=200, tolerance_grad=1e-12,
                            tolerance_change=1e-15, line_search_fn="strong_wolfe")
    calls = 0

    def closure():
        nonlocal calls
        calls += 1
        opt.zero_grad()
        loss = loss_fn(p, s0, obs_t, STEPS, DT, OMEGA)  # the loss from C
        loss.backward()  # the gradient from adc
        return loss

    opt.step(closure)
    return p.detach().numpy(), calls


def fit_with_numpy(obs, iters=3000, lr=0.01):
    """Adam, by hand, for machines without PyTorch."""
    p, m, v = P_START.copy(), np.zeros(4), np.zeros(4)
    for t in range(1, iters + 1):
        _, (g,) = fit_loss.value_and_grad(p, S0, obs, DT, OMEGA)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        p -= lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-12)
    return p, iters


def torch_loss(p, s0, obs):
    """The same model in PyTorch, for autograd to differentiate."""
    k, a, c, F = p[0], p[1], p[2], p[3]

    def rhs(t, x, v):
        return v, -k * x - a * x**3 - c * v + F * torch.cos(torch.tensor(OMEGA * t, dtype=torch.float64))

    x, v = s0[0], s0[1]
    loss = 0.0
    for i in range(STEPS):
        t = i * DT
        k1 = rhs(t, x, v)
        k2 = rhs(t + DT / 2, x + DT / 2 * k1[0], v + DT / 2 * k1[1])
        k3 = rhs(t + DT / 2, x + DT / 2 * k2[0], v + DT / 2 * k2[1])
        k4 = rhs(t + DT, x + DT * k3[0], v + DT * k3[1])
        x = x + DT / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        v = v + DT / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        loss = loss + (x - obs[i]) ** 2
    return loss / STEPS


def jax_loss(p, s0, obs):
    """The same model in JAX (lax.scan over the steps)."""

    def rhs(t, s):
        x, v = s[0], s[1]
        return jnp.stack([v, -p[0] * x - p[1] * x**3 - p[2] * v + p[3] * jnp.cos(OMEGA * t)])

    def step(s, inp):
        i, o = inp
        t = i * DT
        k1 = rhs(t, s)
        k2 = rhs(t + DT / 2, s + DT / 2 * k1)
        k3 = rhs(t + DT / 2, s + DT / 2 * k2)
        k4 = rhs(t + DT, s + DT * k3)
        s = s + DT / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return s, (s[0] - o) ** 2

    _, r = jax.lax.scan(step, s0, (jnp.arange(STEPS, dtype=jnp.float64), obs))
    return jnp.mean(r)


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    print(f"adc: {adc.find_adc()}\nlibrary: {fit_loss.path}")
    obs = observations()
    loss0 = fit_loss(P_START, S0, obs, DT, OMEGA)
    if torch is not None:
        p, calls = fit_with_torch(obs)
        how = f"torch.optim.LBFGS, {calls} loss+gradient evaluations"
    else:
        p, calls = fit_with_numpy(obs)
        how = f"Adam in numpy, {calls} steps (PyTorch not installed)"
    print(f"fit ({how}):")
    print(f"  loss {loss0:.3e} -> {fit_loss(p, S0, obs, DT, OMEGA):.3e}")
    for name, got, want, start in zip(("k", "a", "c", "F"), p, P_TRUE, P_START):
        print(f"  {name}: start {start:5.2f}  fitted {got:8.5f}  true {want:5.2f}")

    # Timing: one gradient of the loss (400 RK4 steps), best of several runs.
    print(f"timing one loss gradient ({STEPS} RK4 steps), best of repeated runs:")
    t_adc = best_of(lambda: fit_loss.value_and_grad(P_START, S0, obs, DT, OMEGA), 200)
    print(f"  adc (C gradient, numpy call)     {t_adc * 1e6:10.1f} us")
    if torch is not None:
        loss_fn = adc.torch.function(fit_loss)
        s0_t, obs_t = torch.tensor(S0), torch.tensor(obs)

        def adc_torch():
            pt = torch.tensor(P_START, requires_grad=True)
            loss_fn(pt, s0_t, obs_t, STEPS, DT, OMEGA).backward()
            return pt.grad

        def torch_autograd():
            pt = torch.tensor(P_START, requires_grad=True)
            torch_loss(pt, s0_t, obs_t).backward()
            return pt.grad

        np.testing.assert_allclose(adc_torch(), torch_autograd(), rtol=1e-9)
        t_at = best_of(adc_torch, 100)
        t_tt = best_of(torch_autograd, 3)
        print(f"  adc through loss.backward()      {t_at * 1e6:10.1f} us")
        print(f"  PyTorch autograd of the model    {t_tt * 1e6:10.1f} us  ({t_tt / t_at:.0f}x adc's backward)")
    if jax is not None:
        g = jax.jit(jax.grad(jax_loss))
        args = (jnp.asarray(P_START), jnp.asarray(S0), jnp.asarray(obs))
        np.testing.assert_allclose(g(*args), fit_loss.grad(P_START, S0, obs, DT, OMEGA), rtol=1e-9)
        t_jx = best_of(lambda: g(*args).block_until_ready(), 50)
        print(f"  JAX jit(grad) of the model       {t_jx * 1e6:10.1f} us  ({t_jx / t_adc:.1f}x adc's numpy call)")
    err = np.max(np.abs(p - P_TRUE))
    if err > 0.05:
        print(f"the fit is off by {err:.3f}")
        return 1
    print("fitted parameters agree with the true ones")
    return 0


if __name__ == "__main__":
    sys.exit(main())
