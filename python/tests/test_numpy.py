"""numpy: primal calls, gradients against finite differences, argument checks, errors."""

import os
import time
import unittest

import numpy as np

import common
from common import C, EXAMPLES, adc, assert_close, central_diff

import adc._build  # noqa: E402


class Gradients(unittest.TestCase):
    def test_several_arrays_scalar_return(self):
        f = common.model()
        x, w, y, b = common.model_data()
        value, (gx, gw, gy, gb) = f.value_and_grad(x, w, y, b)
        self.assertAlmostEqual(value, f(x, w, y, b))
        fd = central_diff(lambda x, w, y, b: f(x, w, y, float(b)), [x, w, y, b])
        for name, got, want in zip("xwyb", (gx, gw, gy, gb), fd):
            assert_close(self, got, want, what=f"d loss / d {name}")
        self.assertEqual(gw.shape, (4, 3))
        self.assertIsInstance(gb, np.floating)

    def test_reference_value(self):
        f = common.model()
        x, w, y, b = common.model_data()
        z = w @ x + b
        want = 0.5 * np.sum((np.tanh(z) - y) ** 2) + 0.01 * np.exp(b)
        self.assertAlmostEqual(f(x, w, y, b), want, places=12)

    def test_grad_and_sizes(self):
        f = common.model()
        x, w, y, b = common.model_data()
        g1 = f.grad(x, w, y, b)
        g2 = f.grad(x, w, y, b, 4, 3)  # the sizes given explicitly
        g3 = f.grad(x, w, y, b, m=4, n=3)
        for a, c, d in zip(g1, g2, g3):
            np.testing.assert_array_equal(a, c)
            np.testing.assert_array_equal(a, d)

    def test_vjp_of_outputs_and_jvp(self):
        sim = common.simulate()
        p = np.array([1.0, 0.5, 0.2, 0.8])
        s0 = np.array([1.0, 0.0])
        steps = 60
        traj = sim(p, s0, steps, 0.05, 1.2)
        self.assertEqual(traj.shape, (steps, 2))
        ct = np.random.default_rng(1).standard_normal((steps, 2))
        (traj2,), (gp, gs0) = sim.vjp((p, s0, steps, 0.05, 1.2), (ct,))
        np.testing.assert_array_equal(traj, traj2)
        fd = central_diff(lambda p, s0: np.sum(sim(p, s0, steps, 0.05, 1.2) * ct), [p, s0])
        assert_close(self, gp, fd[0], what="vjp p")
        assert_close(self, gs0, fd[1], what="vjp s0")
        dp = np.array([0.3, -0.2, 0.1, 0.5])
        (_,), (dtraj,) = sim.jvp((p, s0, steps, 0.05, 1.2), (dp, None))
        h = 1e-6
        want = (sim(p + h * dp, s0, steps, 0.05, 1.2) - sim(p - h * dp, s0, steps, 0.05, 1.2)) / (2 * h)
        assert_close(self, dtraj, want, what="jvp")

    def test_physics_loss(self):
        f = common.fit_loss()
        p = np.array([1.1, 0.4, 0.25, 0.7])
        s0 = np.array([1.0, 0.0])
        obs = np.sin(np.linspace(0, 3, 80))
        value, (gp,) = f.value_and_grad(p, s0, obs, 0.05, 1.2)
        self.assertEqual(len(f.diff_inputs), 1)  # s0, obs, dt, omega are inactive
        fd = central_diff(lambda p: f(p, s0, obs, 0.05, 1.2), [p])
        assert_close(self, gp, fd[0], what="d fit_loss / d p")

    def test_two_outputs_and_active_scalar(self):
        f = common.compile_cached(
            C / "misc.c",
            "void two_outputs(const double a[k][n], const double x[n], double c, double y[k], double z[1], int k, int n)",
            outputs=("y", "z"),
        )
        rng = np.random.default_rng(3)
        a, x, c = rng.standard_normal((2, 3)), rng.standard_normal(3), 1.7
        y, z = f(a, x, c, k=2)  # k is no array's size: given by name
        np.testing.assert_allclose(y, a @ x)
        np.testing.assert_allclose(z, [x.sum() ** 2 * c])
        cy, cz = rng.standard_normal(2), np.array([0.7])
        _, (ga, gx, gc) = f.vjp((a, x, c), (cy, cz), {"k": 2})
        fd = central_diff(lambda a, x, c: np.dot(f(a, x, float(c), k=2)[0], cy) + f(a, x, float(c), k=2)[1][0] * cz[0], [a, x, c])
        for name, got, want in zip(("a", "x", "c"), (ga, gx, gc), fd):
            assert_close(self, got, want, what=name)

    def test_float32(self):
        f = common.compile_cached(C / "misc.c", "float norm_f32(const float x[n], float s, int n)")
        x = np.linspace(-1, 1, 7).astype(np.float32)
        value, (gx, gs) = f.value_and_grad(x, 0.8)
        self.assertEqual(gx.dtype, np.float32)
        want_gx = np.sin(0.8 * x) + 0.8 * x * np.cos(0.8 * x)
        want_gs = np.sum(x * x * np.cos(0.8 * x))
        np.testing.assert_allclose(gx, want_gx, rtol=1e-5, atol=1e-6)
        self.assertAlmostEqual(float(gs), float(want_gs), places=5)
        with self.assertRaisesRegex(TypeError, "float64.*C parameter is float"):
            f(x.astype(np.float64), 0.8)

    def test_integer_array(self):
        f = common.compile_cached(C / "misc.c", "double gather_sq(const double *x, const int idx[k], long k)")
        x = np.arange(5.0)
        idx = np.array([0, 3, 3, 4], dtype=np.int32)
        self.assertEqual(f(x, idx), 9 + 9 + 16)
        np.testing.assert_array_equal(f.grad(x, idx), [0, 0, 0, 12, 8])
        with self.assertRaisesRegex(TypeError, "idx.*int64.*C parameter is int"):
            f(x, idx.astype(np.int64))

    def test_arrays_are_not_copied(self):
        f = common.compile_cached(C / "misc.c", "double fill_iota(double x[n], int n)", inactive=("x",))
        x = np.full(6, -1.0)
        f(x)
        np.testing.assert_array_equal(x, np.arange(6.0))
        # A view into a bigger array: the C code writes into the base array's memory.
        base = np.full(10, -1.0)
        f(base[2:5])
        np.testing.assert_array_equal(base, [-1, -1, 0, 1, 2, -1, -1, -1, -1, -1])

    def test_cxx_source(self):
        f = common.compile_cached(C / "cxx_model.cpp", "double cxx_energy(const double q[n], int n)")
        q = np.array([0.1, 0.7, -0.3, 0.4])
        fd = central_diff(lambda q: f(q), [q])
        assert_close(self, f.grad(q), fd[0], what="C++")

    def test_bitcode_and_source_text(self, tmp=None):
        import subprocess
        import tempfile
        code = "double cube_sum(const double *x, int n) { double s = 0; for (int i = 0; i < n; i++) s += x[i] * x[i] * x[i]; return s; }\n"
        f = adc.compile(code, signature="double cube_sum(const double x[n], int n)")
        np.testing.assert_allclose(f.grad(np.array([1.0, 2.0])), [3.0, 12.0])
        with tempfile.TemporaryDirectory() as d:
            src, bc = os.path.join(d, "c.c"), os.path.join(d, "c.bc")
            with open(src, "w") as fh:
                fh.write(code)
            subprocess.run([adc.find_clang(), "-O2", "-c", "-emit-llvm", src, "-o", bc], check=True)
            g = adc.compile(bc, signature="double cube_sum(const double x[n], int n)")
            np.testing.assert_allclose(g.grad(np.array([1.0, 2.0])), [3.0, 12.0])

    def test_cache(self):
        code = "double sq_cache(const double *x) { return x[0] * x[0]; }\n"
        sig = "double sq_cache(const double x[1])"
        t0 = time.perf_counter()
        f = adc.compile(code, signature=sig)
        t1 = time.perf_counter()
        g = adc.compile(code, signature=sig)
        t2 = time.perf_counter()
        self.assertEqual(f.path, g.path)
        self.assertTrue(str(f.path).startswith(str(adc.cache_dir())))
        self.assertLess(t2 - t1, max(0.05, t1 - t0))
        h = adc.compile(code.replace("x[0] * x[0]", "x[0] * x[0] * x[0]"), signature=sig)
        self.assertNotEqual(f.path, h.path)
        self.assertEqual(h.grad(np.array([2.0])), 12.0)
        u = adc.compile(code, signature=sig, cache=False)  # built apart, loaded, removed
        self.assertNotEqual(u.path, f.path)
        self.assertFalse(u.path.exists())
        self.assertEqual(u.grad(np.array([3.0])), 6.0)


class BadInput(unittest.TestCase):
    def setUp(self):
        self.f = common.model()
        self.x, self.w, self.y, self.b = common.model_data()

    def test_wrong_dtype(self):
        with self.assertRaisesRegex(TypeError, r"'x' has dtype float32, but the C parameter is double"):
            self.f(self.x.astype(np.float32), self.w, self.y, self.b)
        with self.assertRaisesRegex(TypeError, r"'w' has dtype int64"):
            self.f(self.x, np.ones((4, 3), dtype=np.int64), self.y, self.b)

    def test_not_an_array(self):
        with self.assertRaisesRegex(TypeError, r"'x' must be a numpy array of float64, not list"):
            self.f([1.0, 2.0, 3.0], self.w, self.y, self.b)
        with self.assertRaisesRegex(TypeError, r"'b' must be a real number"):
            self.f(self.x, self.w, self.y, "one")

    def test_wrong_shape(self):
        with self.assertRaisesRegex(ValueError, r"'w' must have 2 dimension\(s\) \[m\]\[n\], got shape \(12,\)"):
            self.f(self.x, self.w.ravel(), self.y, self.b)
        with self.assertRaisesRegex(ValueError, r"size 'n' is 3 from axis 0 of 'x' but 2 from axis 1 of 'w'"):
            self.f(self.x, self.w[:, :2].copy(), self.y, self.b)
        with self.assertRaisesRegex(ValueError, r"n=5 but axis 0 of 'x' has 3 elements"):
            self.f(self.x, self.w, self.y, self.b, 4, 5)
        fixed = common.compile_cached(EXAMPLES / "oscillator.c", common.FIT_SIG, inactive=("s0", "obs", "dt", "omega"))
        with self.assertRaisesRegex(ValueError, r"'p' has shape \(3,\), expected \[4\]"):
            fixed(np.ones(3), np.ones(2), np.ones(5), 0.1, 1.0)

    def test_not_contiguous(self):
        w = np.asfortranarray(self.w)
        with self.assertRaisesRegex(ValueError, r"'w' is not C-contiguous.*np.ascontiguousarray"):
            self.f(self.x, w, self.y, self.b)
        with self.assertRaisesRegex(ValueError, r"'x' is not C-contiguous"):
            self.f(np.ones(6)[::2], self.w, self.y, self.b)

    def test_wrong_arguments(self):
        with self.assertRaisesRegex(TypeError, r"takes 4 arguments \(x, w, y, b\), or 6 with the sizes; got 5"):
            self.f(self.x, self.w, self.y, self.b, 4)
        with self.assertRaisesRegex(TypeError, r"missing 'b'"):
            self.f(self.x, self.w, self.y)
        with self.assertRaisesRegex(TypeError, r"unexpected argument 'q'"):
            self.f(self.x, self.w, self.y, self.b, q=1)
        with self.assertRaisesRegex(ValueError, r"1 cotangent\(s\) needed \(return\), got 2"):
            self.f.vjp((self.x, self.w, self.y, self.b), (1.0, 2.0))

    def test_bad_signatures(self):
        src = C / "model.c"
        cases = [
            ("double model_loss(double **x, int n)", "one level of pointer"),
            ("double *model_loss(double *x)", "returns a pointer"),
            ("int model_loss(double *x)", "return type must be double, float or void"),
            ("double model_loss(double x[n])", "array size `n` is not a parameter"),
            ("double model_loss(double x[n], double n)", "must be an integer parameter"),
            ("double model_loss(char *s)", "unsupported type `char`"),
            ("double model_loss(double x[n+1], int n)", "sizes must be integer literals"),
            ("model_loss", "expected a C prototype"),
        ]
        for sig, msg in cases:
            with self.subTest(sig=sig), self.assertRaisesRegex(adc.SignatureError, msg):
                adc.compile(src, signature=sig)
        with self.assertRaisesRegex(adc.SignatureError, "needs its sizes"):
            adc.compile(src, signature="void g(double *out)", outputs=("out",))
        with self.assertRaisesRegex(adc.SignatureError, "returns void and has no outputs"):
            adc.compile(src, signature="void g(double out[3])")
        with self.assertRaisesRegex(adc.SignatureError, "not a parameter"):
            adc.compile(src, signature="double g(double x[3])", inactive=("y",))
        with self.assertRaisesRegex(adc.SignatureError, "signature names `g` but function='h'"):
            adc.compile(src, "h", "double g(double x[3])")
        with self.assertRaisesRegex(adc.SignatureError, "compile needs signature="):
            adc.compile(src, "model_loss")

    def test_not_differentiable_carries_adc_error(self):
        code = "extern double mystery(double);\ndouble opaque(const double *x, int n) { return mystery(x[0]) * n; }\n"
        with self.assertRaises(adc.CompileError) as cm:
            adc.compile(code, signature="double opaque(const double x[n], int n)")
        msg = str(cm.exception)
        self.assertIn("adc build", msg)
        self.assertIn("no derivative is known for the external function @mystery", msg)
        self.assertIn("no derivative is known", cm.exception.stderr)

    def test_complex_arithmetic_is_an_adc_error(self):
        code = ("#include <complex.h>\n"
                "double cmag(const double *x) { double complex z = x[0] + I * x[1]; return cabs(z * z); }\n")
        with self.assertRaisesRegex(adc.CompileError, r"(?s)adc build.*cabs"):
            adc.compile(code, signature="double cmag(const double x[2])")

    def test_clang_error_is_carried(self):
        with self.assertRaisesRegex(adc.CompileError, r"(?s)clang \(<source>\) failed.*expected expression"):
            adc.compile("double broken(const double *x) { return x[0] +; }\n", signature="double broken(const double x[1])")

    def test_undefined_function(self):
        with self.assertRaisesRegex(adc.CompileError, r"(?s)`no_such_fn` is not defined in .*model.c: check the name"):
            adc.compile(C / "model.c", signature="double no_such_fn(const double x[3])")

    def test_missing_source(self):
        with self.assertRaisesRegex(FileNotFoundError, "cannot read the source"):
            adc.compile(C / "no_such_file.c", signature="double f(const double x[3])")

    def test_missing_clang(self):
        with self.assertRaisesRegex(adc.ToolNotFoundError, r"clang not found at '/nonexistent/clang-19'"):
            adc.compile(C / "model.c", signature=common.MODEL_SIG, clang="/nonexistent/clang-19", cache=False)
        old_path, old_clang = os.environ.get("PATH"), os.environ.pop("ADC_CLANG", None)
        os.environ["PATH"] = "/nonexistent"
        try:
            with self.assertRaisesRegex(adc.ToolNotFoundError, r"clang not found \(looked for clang-19 and clang on PATH\)"):
                adc.find_clang()
        finally:
            os.environ["PATH"] = old_path
            if old_clang is not None:
                os.environ["ADC_CLANG"] = old_clang

    def test_missing_adc(self):
        with self.assertRaisesRegex(adc.ToolNotFoundError, r"adc not found at '/nonexistent/adc'.*cargo build"):
            adc.compile(C / "model.c", signature=common.MODEL_SIG, adc="/nonexistent/adc")
        old_adc, old_path = os.environ.pop("ADC"), os.environ["PATH"]
        os.environ["PATH"] = "/nonexistent"
        try:
            with self.assertRaisesRegex(adc.ToolNotFoundError, r"adc not found: put it on PATH, set ADC"):
                adc.find_adc()
        finally:
            os.environ["ADC"], os.environ["PATH"] = old_adc, old_path


class Wrapper(unittest.TestCase):
    def test_wrapper_source(self):
        sig = adc.parse_signature(common.MODEL_SIG)
        text = adc.wrapper_source(sig)
        self.assertIn("__enzyme_autodiff((void *)adc_primal, enzyme_dup, x, d_x, enzyme_dup, w, d_w, "
                      "enzyme_dup, y, d_y, enzyme_dup, b, d_b, enzyme_const, m, enzyme_const, n, "
                      "enzyme_dup, adc_ret, d_adc_ret);", text)
        self.assertIn("*adc_ret = model_loss(x, w, y, *b, m, n);", text)
        self.assertEqual(adc._build.WRAPPER_VERSION, "1")


if __name__ == "__main__":
    unittest.main()
