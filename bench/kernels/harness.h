/* Shared timing helper: each kernel program runs its kernel REPS times, prints a checksum
   line (compared between the two builds) and the best time per run on stderr. */
#include <stdio.h>
#include <time.h>
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
