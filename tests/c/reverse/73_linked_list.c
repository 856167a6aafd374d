/* A linked list built on the heap and consumed (and freed) inside the differentiated
 * function: nodes hold x_i^2 and a pointer to the previous node; the consumer walks the
 * list, freeing each node after reading it. */
#include <stdlib.h>
#include "enzyme.h"

#define N 6

struct node {
  double value;
  struct node *next;
};

double f(const double *x, int n) {
  struct node *head = NULL;
  for (int i = 0; i < n; i++) {
    struct node *cell = malloc(sizeof *cell);
    cell->value = x[i] * x[i];
    cell->next = head;
    head = cell;
  }
  double s = 0.0, w = 1.0;
  while (head) {
    struct node *next = head->next;
    s += w * cos(head->value);
    w += 0.5;
    free(head);
    head = next;
  }
  return s;
}

int main(void) {
  double x[N] = {0.4, -0.8, 1.3, 0.1, -1.6, 0.9}, dx[N] = {0};
  __enzyme_autodiff((void *)f, x, dx, N);
  check_fd_gradient(f, x, dx, N);
  return check_done();
}
