/* bench/denormals/assists.c: the cost of one floating-point operation when an operand or
 * the result is denormal (x86 microcode assists), per operation, scalar code.
 *
 *   clang-19 -O2 -mfma -fno-vectorize -fno-slp-vectorize -ffp-contract=off \
 *     bench/denormals/assists.c -lm -o assists
 *   ./assists          # the table of docs/src/gradient-performance.md, session 8
 *
 * Each row times c[i] = fma(a[i], b[i], e[i]) and c[i] = a[i] * b[i] + e[i] (unfused) over
 * 4096 elements, best of 20 rounds of 100 passes. */
#include <math.h>
#include <stdio.h>
#include <time.h>

#define N 4096
static double a[N], b[N], c[N], e[N];

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static double time_op(int fused) {
  double best = 1e9;
  for (int round = 0; round < 20; round++) {
    double t = now();
    for (int pass = 0; pass < 100; pass++) {
      if (fused)
        for (int i = 0; i < N; i++)
          c[i] = fma(a[i], b[i], e[i]);
      else
        for (int i = 0; i < N; i++)
          c[i] = a[i] * b[i] + e[i];
      __asm__ volatile("" ::"r"(c) : "memory");
    }
    t = now() - t;
    if (t < best)
      best = t;
  }
  return best / (100.0 * N) * 1e9;
}

int main(void) {
  static const struct {
    double a, b, e;
    const char *what;
  } rows[] = {
      {1.0, 1.5, 1.0, "all normal"},
      {1e-300, 1e-10, 1.0, "denormal product, normal result"},
      {1e-300, 1e-10, 0.0, "denormal result"},
      {1e-300, 1e-10, 1e-310, "denormal result and addend"},
      {1e-310, 2.0, 1.0, "denormal factor"},
      {1.0, 2.0, 1e-310, "denormal addend"},
  };
  printf("| a, b, addend | what | fma ns | mul + add ns |\n|---|---|---|---|\n");
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
    for (int i = 0; i < N; i++) {
      a[i] = rows[r].a * (1 + i * 1e-6);
      b[i] = rows[r].b;
      e[i] = rows[r].e;
    }
    double fused = time_op(1), unfused = time_op(0);
    printf("| %g, %g, %g | %s | %.2f | %.2f |\n", rows[r].a, rows[r].b, rows[r].e, rows[r].what,
           fused, unfused);
  }
  return 0;
}
