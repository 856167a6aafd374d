"""JAX: jax.grad, jax.jit and jax.vmap through adc's gradient, against finite differences."""

import unittest

import numpy as np

import common
from common import C, assert_close, central_diff

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402

import adc.jax  # noqa: E402


class JaxGradients(unittest.TestCase):
    def test_grad_several_arrays(self):
        f = common.model()
        loss = adc.jax.function(f)
        x, w, y, b = common.model_data(seed=4)
        grads = jax.grad(lambda x, w, y, b: 3.0 * loss(x, w, y, b), argnums=(0, 1, 2, 3))(
            jnp.asarray(x), jnp.asarray(w), jnp.asarray(y), b)
        fd = central_diff(lambda x, w, y, b: 3.0 * f(x, w, y, float(b)), [x, w, y, b])
        for name, got, want in zip("xwyb", grads, fd):
            assert_close(self, got, want, what=f"jax.grad {name}")

    def test_jit_grad_matches_jax_own_autodiff(self):
        loss = adc.jax.function(common.model())
        x, w, y, b = (jnp.asarray(v) for v in common.model_data(seed=5))

        def reference(x, w, y, b):
            return 0.5 * jnp.sum((jnp.tanh(w @ x + b) - y) ** 2) + 0.01 * jnp.exp(b)

        ours = jax.jit(jax.value_and_grad(lambda w, b: loss(x, w, y, b), argnums=(0, 1)))
        theirs = jax.value_and_grad(lambda w, b: reference(x, w, y, b), argnums=(0, 1))
        (v1, (gw1, gb1)), (v2, (gw2, gb2)) = ours(w, b), theirs(w, b)
        self.assertAlmostEqual(float(v1), float(v2), places=12)
        np.testing.assert_allclose(gw1, gw2, rtol=1e-12, atol=1e-14)
        self.assertAlmostEqual(float(gb1), float(gb2), places=12)
        # Called again with new values: the compiled function is reused.
        v3, _ = ours(w * 2.0, b)
        self.assertAlmostEqual(float(v3), float(reference(x, w * 2.0, y, b)), places=12)

    def test_outputs_under_jit_and_grad(self):
        sim = adc.jax.function(common.simulate())
        steps = 40
        target = jnp.sin(jnp.linspace(0.0, 2.0, steps))

        @jax.jit
        def loss(p, s0):
            traj = sim(p, s0, steps, 0.05, 1.2)
            return jnp.mean((traj[:, 0] - target) ** 2) + 0.1 * jnp.sum(traj[:, 1] ** 2)

        p = jnp.array([1.0, 0.5, 0.2, 0.8])
        s0 = jnp.array([1.0, 0.0])
        gp, gs0 = jax.grad(loss, argnums=(0, 1))(p, s0)
        fd = central_diff(lambda p, s0: float(loss(jnp.asarray(p), jnp.asarray(s0))), [p, s0])
        assert_close(self, gp, fd[0], rtol=1e-5, what="grad p")
        assert_close(self, gs0, fd[1], rtol=1e-5, what="grad s0")

    def test_scalar_loss_from_c(self):
        f = common.fit_loss()
        loss = adc.jax.function(f)
        p = np.array([1.1, 0.4, 0.25, 0.7])
        s0, obs = np.array([1.0, 0.0]), np.cos(np.linspace(0, 3, 50))
        g = jax.jit(jax.grad(lambda p: loss(p, s0, obs, 0.05, 1.2)))(jnp.asarray(p))
        fd = central_diff(lambda p: f(p, s0, obs, 0.05, 1.2), [p])
        assert_close(self, g, fd[0], what="fit_loss")

    def test_vmap(self):
        loss = adc.jax.function(common.model())
        x, w, y, _ = (jnp.asarray(v) for v in common.model_data(seed=6))
        bs = jnp.array([0.1, -0.4, 0.9])
        got = jax.vmap(lambda b: loss(x, w, y, b))(bs)
        want = [float(loss(x, w, y, float(b))) for b in bs]
        np.testing.assert_allclose(got, want, rtol=1e-14)

    def test_float32_without_x64_is_fine(self):
        f = common.compile_cached(C / "misc.c", "float norm_f32(const float x[n], float s, int n)")
        fn = adc.jax.function(f)
        x = jnp.linspace(-1, 1, 5, dtype=jnp.float32)
        g = jax.grad(lambda x: fn(x, jnp.float32(0.8)))(x)
        self.assertEqual(g.dtype, jnp.float32)
        want = np.sin(0.8 * x) + 0.8 * x * np.cos(0.8 * x)
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)


class JaxBadInput(unittest.TestCase):
    def test_x64_off(self):
        loss = adc.jax.function(common.model())
        x, w, y, b = common.model_data()
        jax.config.update("jax_enable_x64", False)
        try:
            with self.assertRaisesRegex(TypeError, r"JAX has 64-bit floats off: call jax.config.update\('jax_enable_x64', True\)"):
                loss(jnp.asarray(x), jnp.asarray(w), jnp.asarray(y), b)
        finally:
            jax.config.update("jax_enable_x64", True)

    def test_wrong_dtype_and_shape(self):
        loss = adc.jax.function(common.model())
        x, w, y, b = (jnp.asarray(v) for v in common.model_data())
        with self.assertRaisesRegex(TypeError, r"'w' has dtype float32"):
            loss(x, w.astype(jnp.float32), y, b)
        with self.assertRaisesRegex(ValueError, r"size 'm' is 4 from axis 0 of 'w' but 3 from axis 0 of 'y'"):
            jax.grad(lambda w: loss(x, w, y[:3], b))(w)

    def test_traced_integer(self):
        sim = adc.jax.function(common.simulate())
        p, s0 = jnp.ones(4), jnp.array([1.0, 0.0])
        with self.assertRaisesRegex(TypeError, r"integer argument 'steps' must be a concrete Python int"):
            jax.jit(lambda p, n: sim(p, s0, n, 0.1, 1.0))(p, 5)


if __name__ == "__main__":
    unittest.main()
