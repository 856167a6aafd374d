/* The bundled example of scripts/setup.sh: the gradient of the Rosenbrock function in n
 * dimensions, synthesized by adc from the call to __enzyme_autodiff, printed next to a
 * central finite difference of the same function. */
#include <math.h>
#include <stdio.h>

extern int enzyme_dup;
void __enzyme_autodiff(void *, ...);

/* f(x) = sum_i 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2 */
double rosenbrock(const double *x, int n) {
  double f = 0.0;
  for (int i = 0; i + 1 < n; i++) {
    double a = x[i + 1] - x[i] * x[i];
    double b = 1.0 - x[i];
    f += 100.0 * a * a + b * b;
  }
  return f;
}

int main(void) {
  enum { N = 4 };
  double x[N] = {-1.2, 1.0, 0.5, 2.0};
  double grad[N] = {0};
  __enzyme_autodiff((void *)rosenbrock, enzyme_dup, x, grad, N);

  printf("f(x) = %.6f at x = (%g, %g, %g, %g)\n", rosenbrock(x, N), x[0], x[1], x[2], x[3]);
  printf("  i   adc gradient        central difference   |difference|\n");
  double worst = 0.0;
  for (int i = 0; i < N; i++) {
    const double h = 1e-6;
    double saved = x[i];
    x[i] = saved + h;
    double up = rosenbrock(x, N);
    x[i] = saved - h;
    double down = rosenbrock(x, N);
    x[i] = saved;
    double fd = (up - down) / (2.0 * h);
    double diff = fabs(grad[i] - fd);
    worst = diff > worst ? diff : worst;
    printf("  %d   %-18.10g  %-18.10g   %.2e\n", i, grad[i], fd, diff);
  }
  if (worst > 1e-4) {
    printf("gradient and finite difference disagree\n");
    return 1;
  }
  printf("gradient agrees with the finite difference\n");
  return 0;
}
