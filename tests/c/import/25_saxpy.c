// Element-wise loops: saxpy and friends, vectorized at -O2 and -O3.
#include <stdio.h>

#define N 1000
float x[N], y[N];
double a[N], b[N], c[N];

static void saxpy(int n, float alpha, const float *restrict xv, float *restrict yv) {
    for (int i = 0; i < n; i++) yv[i] = alpha * xv[i] + yv[i];
}
static void triad(int n, double *restrict out, const double *restrict p, const double *restrict q, double s) {
    for (int i = 0; i < n; i++) out[i] = p[i] + s * q[i];
}

int main(void) {
    for (int i = 0; i < N; i++) { x[i] = i * 0.01f; y[i] = 1.0f - i * 0.002f; a[i] = i; b[i] = N - i; }
    saxpy(N, 2.5f, x, y);
    triad(N, c, a, b, 0.75);
    double s = 0;
    float t = 0;
    for (int i = 0; i < N; i += 10) { s += c[i]; t += y[i]; }
    printf("%.3f %.3f %.4f %.4f\n", s, t, c[N - 1], y[N / 2]);
    return 0;
}
