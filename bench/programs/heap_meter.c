/* Heap meter for the benchmark runner: counts the bytes live on the heap through the
 * linker's --wrap of malloc, calloc, realloc and free (no LD_PRELOAD, no change to the
 * differentiated code), so that bench.h can report the peak heap growth of one gradient
 * call: adc's tapes are realloc'd buffers (`__adc_tape_push`), so this is the tape's
 * capacity in bytes plus anything else the derivative allocates.
 *
 * Link: cc prog.o heap_meter.o -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free
 * Only references from the objects on the command line are wrapped; libc's own
 * allocations (stdio buffers) are not counted, and freeing one of those is ignored
 * because malloc_usable_size is read through the real allocator either way. */
#include <malloc.h>
#include <stddef.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *ptr, size_t size);
void __real_free(void *ptr);

static long long live_bytes, peak_bytes, mark_bytes;

static void grew(void *ptr) {
  if (!ptr)
    return;
  live_bytes += (long long)malloc_usable_size(ptr);
  if (live_bytes > peak_bytes)
    peak_bytes = live_bytes;
}

static void shrank(void *ptr) {
  if (ptr)
    live_bytes -= (long long)malloc_usable_size(ptr);
}

void *__wrap_malloc(size_t size) {
  void *p = __real_malloc(size);
  grew(p);
  return p;
}

void *__wrap_calloc(size_t count, size_t size) {
  void *p = __real_calloc(count, size);
  grew(p);
  return p;
}

void *__wrap_realloc(void *ptr, size_t size) {
  /* The old block's size must be read before realloc may free it. */
  long long old = ptr ? (long long)malloc_usable_size(ptr) : 0;
  void *p = __real_realloc(ptr, size);
  if (p || size == 0) {
    live_bytes -= old;
    grew(p);
  }
  return p;
}

void __wrap_free(void *ptr) {
  shrank(ptr);
  __real_free(ptr);
}

/* Starts a measurement window: the peak restarts from what is live now. */
void heap_meter_mark(void) {
  mark_bytes = live_bytes;
  peak_bytes = live_bytes;
}

/* The most bytes live above the mark since heap_meter_mark. */
long long heap_meter_peak_above_mark(void) { return peak_bytes - mark_bytes; }
