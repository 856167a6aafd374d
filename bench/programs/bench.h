/* Shared by the seven benchmark programs: Enzyme's C API declarations, the command line
 * protocol the runner (bench/runner) relies on, timing, a whitespace tokenizer for the
 * ADBench input files, and the central finite-difference gradient check.
 *
 * Protocol (every program):
 *   prog primal REPS [size|file]   run the objective REPS times; one "time <s>" line each
 *                                  (CPU seconds of the process),
 *                                  then "value <objective>"
 *   prog grad REPS [size|file]     the same for the gradient; then "value" and "gradsum"
 *                                  (built with -DHEAP_METER and heap_meter.c, each "time"
 *                                  line is followed by "heap <peak bytes above the start>")
 *   prog check                     gradient vs central finite differences on a small input
 *                                  generated in code; prints "maxerr <e>" then "ok" (exit 0)
 *                                  or "FAIL" (exit 1)
 * Built with -DPRIMAL_ONLY the AD calls are compiled out, so plain clang links the primal. */
#ifndef ADC_BENCH_H
#define ADC_BENCH_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef PRIMAL_ONLY
#define __enzyme_autodiff(...) (fprintf(stderr, "built without AD (PRIMAL_ONLY)\n"), exit(2), 0.0)
#else
extern int enzyme_dup, enzyme_dupnoneed, enzyme_const, enzyme_out;
double __enzyme_autodiff(void *, ...);
#endif

typedef enum { MODE_PRIMAL, MODE_GRAD, MODE_CHECK } Mode;

static void usage(const char *prog) {
  fprintf(stderr, "usage: %s primal|grad REPS [size|file] | %s check\n", prog, prog);
  exit(2);
}

/* Parses argv[1] (mode) and argv[2] (repetitions); the size or file stays in argv[3]. */
static Mode parse_mode(int argc, char **argv, int *reps) {
  if (argc < 2)
    usage(argv[0]);
  if (strcmp(argv[1], "check") == 0) {
    *reps = 0;
    return MODE_CHECK;
  }
  if (argc < 3)
    usage(argv[0]);
  *reps = atoi(argv[2]);
  if (*reps <= 0)
    usage(argv[0]);
  if (strcmp(argv[1], "primal") == 0)
    return MODE_PRIMAL;
  if (strcmp(argv[1], "grad") == 0)
    return MODE_GRAD;
  usage(argv[0]);
  return MODE_CHECK;
}

/* CPU time of this (single-threaded) process, not wall-clock time: on a machine shared
 * with other builds, time slices given to other processes do not count against the
 * benchmark (cache and memory-bandwidth contention still do). */
static double cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void *xcalloc(size_t count, size_t size) {
  void *p = calloc(count ? count : 1, size);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  return p;
}

/* Deterministic inputs for generated problems (the same on every build). */
static unsigned long long rng_state = 0x9E3779B97F4A7C15ull;
static double uniform(double lo, double hi) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (hi - lo) * ((rng_state >> 11) * (1.0 / 9007199254740992.0));
}

/* A whole input file as whitespace-separated numbers. */
typedef struct {
  double *values;
  size_t count, next;
} Tokens;

static Tokens read_tokens(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(2);
  }
  Tokens t = {0, 0, 0};
  size_t cap = 1024;
  t.values = xcalloc(cap, sizeof(double));
  double v;
  while (fscanf(f, "%lf", &v) == 1) {
    if (t.count == cap) {
      cap *= 2;
      t.values = realloc(t.values, cap * sizeof(double));
      if (!t.values) {
        fprintf(stderr, "out of memory\n");
        exit(2);
      }
    }
    t.values[t.count++] = v;
  }
  fclose(f);
  return t;
}

static double next_token(Tokens *t, const char *path) {
  if (t->next >= t->count) {
    fprintf(stderr, "%s: input ends early (after %zu numbers)\n", path, t->count);
    exit(2);
  }
  return t->values[t->next++];
}

#ifdef HEAP_METER
/* bench/programs/heap_meter.c, linked by the runner with --wrap of the allocator. */
void heap_meter_mark(void);
long long heap_meter_peak_above_mark(void);
#endif

/* Starts one timed repetition; returns its start time. */
static double start_rep(void) {
#ifdef HEAP_METER
  heap_meter_mark();
#endif
  return cpu_seconds();
}

/* Prints the per-repetition time (and, with the heap meter, the repetition's peak heap
 * growth in bytes) that the runner parses. */
static void report_time(double seconds) {
  printf("time %.9f\n", seconds);
#ifdef HEAP_METER
  printf("heap %lld\n", heap_meter_peak_above_mark());
#endif
}

/* Central finite differences on coordinates of x (at most `limit` of them, spread over
 * the vector) against the gradient `grad`; eval recomputes the objective at x. */
typedef double (*Objective)(void *ctx, double *x);
static int finite_difference_check(Objective eval, void *ctx, double *x, const double *grad,
                                   int n, int limit) {
  int stride = n > limit ? n / limit : 1;
  double worst = 0.0;
  for (int i = 0; i < n; i += stride) {
    double save = x[i];
    double h = 1e-6 * (fabs(save) > 1.0 ? fabs(save) : 1.0);
    x[i] = save + h;
    double fp = eval(ctx, x);
    x[i] = save - h;
    double fm = eval(ctx, x);
    x[i] = save;
    double fd = (fp - fm) / (2.0 * h);
    double scale = fabs(fd) > 1.0 ? fabs(fd) : 1.0;
    double err = fabs(grad[i] - fd) / scale;
    /* err != err tests for NaN: at -O0 clang lowers isnan to llvm.is.fpclass, which adc's
     * importer does not take. */
    if (!(err <= worst))
      worst = err != err ? INFINITY : err;
    if (!(err <= 1e-4))
      printf("mismatch at %d: ad %.12g fd %.12g\n", i, grad[i], fd);
  }
  printf("maxerr %.3e\n", worst);
  int ok = worst <= 1e-4;
  printf("%s\n", ok ? "ok" : "FAIL");
  return ok ? 0 : 1;
}

static double vector_sum(const double *v, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += v[i];
  return s;
}

#endif
