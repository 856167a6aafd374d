/* Forward mode gives globals no shadow: a double stored into a global arena is refused
 * by the global's name, with the way out (reverse and split mode shadow it:
 * tests/c/reverse/119). */
// expect-error: global_arena.c:10: the global @arena as memory that carries derivatives in forward mode
void __enzyme_fwddiff(void *, ...);

char arena[64];

void model(double x) {
  *(double *)&arena[8] = x * x;
}

void dmodel(double x) { __enzyme_fwddiff((void *)model, x, 1.0); }
