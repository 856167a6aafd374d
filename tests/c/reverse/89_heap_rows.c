/* A heap matrix as a calloc'd array of row pointers, each row malloc'd: the row pointers'
 * shadows live in the shadow of the pointer array. Rows are freed in a different order
 * than they were allocated. */
#include <stdlib.h>
#include "enzyme.h"

#define R 3
#define C 4

double f(const double *x, int rows, int cols) {
  double **m = calloc(rows, sizeof(double *));
  for (int r = 0; r < rows; r++) {
    m[r] = malloc(sizeof(double) * cols);
    for (int c = 0; c < cols; c++)
      m[r][c] = x[c] * (r + 1) + x[(c + r) % cols] * x[c];
  }
  double s = 0.0;
  for (int c = 0; c < cols; c++) {
    double col = 1.0;
    for (int r = 0; r < rows; r++)
      col *= m[r][c];
    s += col;
  }
  for (int r = rows - 1; r >= 0; r--)
    free(m[r]);
  free(m);
  return s;
}

int main(void) {
  double x[C] = {0.8, -0.5, 1.2, 0.3}, dx[C] = {0};
  __enzyme_autodiff((void *)f, x, dx, R, C);
  for (int j = 0; j < C; j++) {
    double xp[C], xm[C];
    for (int k = 0; k < C; k++)
      xp[k] = xm[k] = x[k];
    xp[j] += FD_STEP;
    xm[j] -= FD_STEP;
    check("df/dx_j", dx[j], (f(xp, R, C) - f(xm, R, C)) / (2 * FD_STEP), FD_TOL);
  }
  return check_done();
}
