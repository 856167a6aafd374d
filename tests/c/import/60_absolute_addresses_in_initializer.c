// A table of pointers holding small integers cast to pointers, as Enzyme's registration
// tables do (`__enzyme_allocation_like = {fn, (void *)1, "2,-1", free}`): the initializer
// has `inttoptr (i64 1 to ptr)`, an absolute address. adc refused the whole module before.
#include <stdint.h>
#include <stdio.h>
static int twice(int x) { return 2 * x; }
void *table[4] = {(void *)twice, (void *)1, (void *)"2,-1", (void *)(intptr_t)-8};
int main(void) {
  int (*f)(int) = (int (*)(int))table[0];
  long sum = f(21) + (long)(intptr_t)table[1] + (long)(intptr_t)table[3];
  printf("%ld %s\n", sum, (const char *)table[2]);
  return 0;
}
