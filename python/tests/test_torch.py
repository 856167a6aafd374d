"""PyTorch: loss.backward() through adc's gradient, against finite differences.

Skipped, with a message saying so, where torch is not installed. To run them:

    .venv/bin/pip install torch        # PyPI's wheel (~2 min, 5.4 GB with its CUDA libraries)
    .venv/bin/python -m unittest discover -s python/tests -v
"""

import sys
import unittest

import numpy as np

import common
from common import C, assert_close, central_diff

try:
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None
    print("test_torch: torch is not installed: the PyTorch tests are SKIPPED "
          "(install it with `.venv/bin/pip install torch`)", file=sys.stderr)

if torch is not None:
    import adc.torch

NO_TORCH = "torch is not installed (install it with `.venv/bin/pip install torch` to run these)"


def t64(a, grad=True):
    return torch.tensor(np.asarray(a), dtype=torch.float64, requires_grad=grad)


@unittest.skipIf(torch is None, NO_TORCH)
class TorchGradients(unittest.TestCase):
    def test_backward_several_arrays(self):
        f = common.model()
        loss_fn = adc.torch.function(f)
        x, w, y, b = common.model_data(seed=7)
        tx, tw, ty, tb = t64(x), t64(w), t64(y), t64(b)
        loss = loss_fn(tx, tw, ty, tb)
        self.assertEqual(loss.dtype, torch.float64)
        (2.0 * loss).backward()
        fd = central_diff(lambda x, w, y, b: 2.0 * f(x, w, y, float(b)), [x, w, y, b])
        for name, t, want in zip("xwyb", (tx, tw, ty, tb), fd):
            assert_close(self, t.grad.numpy(), want, what=f"{name}.grad")

    def test_matches_torch_autograd(self):
        loss_fn = adc.torch.function(common.model())
        x, w, y, b = common.model_data(seed=8)
        a = [t64(v) for v in (x, w, y, b)]
        r = [t64(v) for v in (x, w, y, b)]
        loss_fn(*a).backward()
        tx, tw, ty, tb = r
        (0.5 * ((torch.tanh(tw @ tx + tb) - ty) ** 2).sum() + 0.01 * torch.exp(tb)).backward()
        for p, q in zip(a, r):
            torch.testing.assert_close(p.grad, q.grad, rtol=1e-12, atol=1e-14)

    def test_only_tensors_that_require_grad(self):
        loss_fn = adc.torch.function(common.model())
        x, w, y, b = common.model_data(seed=9)
        tx, tw, ty = t64(x, grad=False), t64(w), t64(y, grad=False)
        loss_fn(tx, tw, ty, float(b)).backward()  # b as a plain number
        self.assertIsNone(tx.grad)
        self.assertIsNone(ty.grad)
        self.assertEqual(tw.grad.shape, (4, 3))
        # Nothing requires grad: the primal alone runs, and the value is the same.
        with torch.no_grad():
            v = loss_fn(tx, tw, ty, float(b))
        self.assertFalse(v.requires_grad)
        self.assertEqual(float(v), float(loss_fn(tx, tw.detach(), ty, float(b))))
        self.assertAlmostEqual(float(v), common.model()(x, w, y, b), places=14)

    def test_outputs_and_optimizer_step(self):
        sim_fn = adc.torch.function(common.simulate())
        steps = 40
        target = torch.sin(torch.linspace(0.0, 2.0, steps, dtype=torch.float64))
        s0 = torch.tensor([1.0, 0.0], dtype=torch.float64)

        def loss_of(p):
            traj = sim_fn(p, s0, steps, 0.05, 1.2)
            return ((traj[:, 0] - target) ** 2).mean()

        p0 = np.array([1.0, 0.5, 0.2, 0.8])
        p = t64(p0)
        loss = loss_of(p)
        loss.backward()
        fd = central_diff(lambda q: float(loss_of(torch.tensor(q))), [p0])
        assert_close(self, p.grad.numpy(), fd[0], rtol=1e-5, what="p.grad")
        opt = torch.optim.Adam([p], lr=0.05)
        first = float(loss.detach())
        for _ in range(20):
            opt.zero_grad()
            loss = loss_of(p)
            loss.backward()
            opt.step()
        self.assertLess(float(loss_of(p).detach()), first)

    def test_gradcheck(self):
        fit = adc.torch.function(common.fit_loss())
        s0 = torch.tensor([1.0, 0.0], dtype=torch.float64)
        obs = torch.cos(torch.linspace(0, 3, 30, dtype=torch.float64))
        p = t64([1.1, 0.4, 0.25, 0.7])
        self.assertTrue(torch.autograd.gradcheck(lambda p: fit(p, s0, obs, 0.05, 1.2), (p,)))

    def test_float32(self):
        fn = adc.torch.function(common.compile_cached(C / "misc.c", "float norm_f32(const float x[n], float s, int n)"))
        x = torch.linspace(-1, 1, 5, dtype=torch.float32, requires_grad=True)
        s = torch.tensor(0.8, dtype=torch.float32, requires_grad=True)
        fn(x, s).backward()
        xd = x.detach()
        torch.testing.assert_close(x.grad, torch.sin(0.8 * xd) + 0.8 * xd * torch.cos(0.8 * xd))
        self.assertEqual(s.grad.shape, ())


@unittest.skipIf(torch is None, NO_TORCH)
class TorchBadInput(unittest.TestCase):
    def test_wrong_dtype(self):
        loss_fn = adc.torch.function(common.model())
        x, w, y, b = common.model_data()
        with self.assertRaisesRegex(TypeError, r"'x' has dtype torch.float32, but the C parameter is double"):
            loss_fn(torch.tensor(x, dtype=torch.float32), t64(w), t64(y), b)

    def test_not_contiguous_and_shape(self):
        loss_fn = adc.torch.function(common.model())
        x, w, y, b = common.model_data()
        with self.assertRaisesRegex(ValueError, r"'w' is not contiguous.*contiguous\(\)"):
            loss_fn(t64(x), t64(w.T.copy()).T, t64(y), b)
        with self.assertRaisesRegex(ValueError, r"'b' is a scalar parameter but got a tensor of shape \(2,\)"):
            loss_fn(t64(x), t64(w), t64(y), t64([1.0, 2.0]))
        with self.assertRaisesRegex(ValueError, r"size 'n'"):
            loss_fn(t64(x[:2]), t64(w), t64(y), b)


if __name__ == "__main__":
    unittest.main()
