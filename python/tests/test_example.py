"""The example of the docs and the README runs and fits its parameters."""

import os
import subprocess
import sys
import unittest

import common


class Example(unittest.TestCase):
    def test_fit_oscillator(self):
        script = common.EXAMPLES / "fit_oscillator.py"
        r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           env=dict(os.environ), timeout=600)
        self.assertEqual(r.returncode, 0, f"{script} failed:\n{r.stdout}\n{r.stderr}")
        self.assertIn("fitted parameters agree with the true ones", r.stdout)
        self.assertIn("adc (C gradient, numpy call)", r.stdout)


if __name__ == "__main__":
    unittest.main()
