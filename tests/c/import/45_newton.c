// Numerical iteration: Newton's method, Simpson's rule, a small ODE (Euler and RK4).
#include <math.h>
#include <stdio.h>

static double newton_sqrt(double a) { double x = a; for (int i = 0; i < 30; i++) x = 0.5 * (x + a / x); return x; }
static double f(double x) { return exp(-x * x); }
static double simpson(double a, double b, int n) {
    double h = (b - a) / n, s = f(a) + f(b);
    for (int i = 1; i < n; i++) s += f(a + i * h) * (i % 2 ? 4 : 2);
    return s * h / 3;
}
static double rhs(double t, double y) { return -2 * t * y; }

int main(void) {
    double y_euler = 1, y_rk = 1, t = 0, h = 0.01;
    for (int i = 0; i < 100; i++, t += h) {
        y_euler += h * rhs(t, y_euler);
        double k1 = rhs(t, y_rk), k2 = rhs(t + h / 2, y_rk + h / 2 * k1);
        double k3 = rhs(t + h / 2, y_rk + h / 2 * k2), k4 = rhs(t + h, y_rk + h * k3);
        y_rk += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
    }
    printf("%.12f %.10f %.10f %.10f\n", newton_sqrt(2.0), simpson(0, 2, 100), y_euler, y_rk);
    return 0;
}
