/* A byte copy between untyped buffers whose contents nothing reveals: whether it moves
 * floats cannot be deduced, so the derivative cannot know whether to propagate adjoints. */
// expect-error: undeducible_type.c:9: cannot deduce the type of
#include <string.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);

__attribute__((noinline)) void copy(void *dst, const void *src, unsigned long n) {
  memcpy(dst, src, n);
}

int main(int argc, char **argv) {
  char a[64], b[64], da[64], db[64];
  (void)argv;
  __enzyme_autodiff((void *)copy, enzyme_dup, a, da, enzyme_dup, b, db, enzyme_const,
                    (unsigned long)argc * 8);
  return 0;
}
