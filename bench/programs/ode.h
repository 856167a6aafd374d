/* Shared by euler.c and rk4.c: the ODE (the Lotka-Volterra predator-prey system
 * with four parameters), its right-hand side reached through a function pointer as an
 * integrator library would, and the benchmark's main. Each including file defines
 * `integrate` (the differentiated function) and INTEGRATOR_NAME. */
#include "bench.h"

enum { DIM = 2, NPARAM = 4, NINPUT = DIM + NPARAM };

typedef void (*Rhs)(const double *y, const double *theta, double *dydt);

/* dy0 = a y0 - b y0 y1 ; dy1 = -c y1 + d y0 y1 (Lotka-Volterra). */
void predator_prey(const double *y, const double *theta, double *dydt) {
  dydt[0] = theta[0] * y[0] - theta[1] * y[0] * y[1];
  dydt[1] = -theta[2] * y[1] + theta[3] * y[0] * y[1];
}

/* inputs = [y0 (DIM) | theta (NPARAM)]; returns a weighted sum of the final state (so its
 * gradient is the final state's sensitivity along that direction). Scratch `work` holds
 * the state and the stages (5 * DIM). */
double integrate(Rhs rhs, const double *inputs, int steps, double dt, double *work);

typedef struct {
  int steps;
  double dt;
  double *work;
} Ode;

static double eval_ode(void *ctx, double *inputs) {
  Ode *o = ctx;
  return integrate(predator_prey, inputs, o->steps, o->dt, o->work);
}

static void gradient(Ode *o, double *inputs, double *dinputs) {
  double dwork[5 * DIM] = {0};
  memset(dinputs, 0, NINPUT * sizeof(double));
  __enzyme_autodiff((void *)integrate, enzyme_const, predator_prey, enzyme_dup, inputs, dinputs,
                    enzyme_const, o->steps, enzyme_const, o->dt, enzyme_dup, o->work, dwork);
}

int main(int argc, char **argv) {
  int reps;
  Mode mode = parse_mode(argc, argv, &reps);
  double inputs[NINPUT] = {1.0, 0.5, 1.1, 0.4, 0.4, 0.1}, dinputs[NINPUT];
  double work[5 * DIM] = {0};
  /* Integrate to t = 10 whatever the step count. */
  Ode o = {mode == MODE_CHECK ? 100 : (argc > 3 ? atoi(argv[3]) : 1000), 0.0, work};
  if (o.steps <= 0)
    usage(argv[0]);
  o.dt = 10.0 / o.steps;
  if (mode == MODE_CHECK) {
    gradient(&o, inputs, dinputs);
    return finite_difference_check(eval_ode, &o, inputs, dinputs, NINPUT, NINPUT);
  }
  double value = 0.0;
  for (int r = 0; r < reps; r++) {
    double t0 = start_rep();
    if (mode == MODE_PRIMAL)
      value = eval_ode(&o, inputs);
    else
      gradient(&o, inputs, dinputs);
    report_time(cpu_seconds() - t0);
  }
  if (mode == MODE_GRAD)
    value = eval_ode(&o, inputs), printf("gradsum %.12e\n", vector_sum(dinputs, NINPUT));
  printf("value %.12e\n", value);
  return 0;
}
