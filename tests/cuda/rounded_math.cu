// nvvm correctly rounded builtins that LLVM 19 keeps as nvvm intrinsics (imported as IR
// instructions, emitted as add.rn / mul.rn / sqrt.rn) next to those it upgrades itself.
__attribute__((global)) void rounded(double *x, float *y) {
  x[0] = __nvvm_sqrt_rn_d(x[1]) + __nvvm_fma_rn_d(x[2], x[3], x[4]);
  x[5] = __nvvm_div_rn_d(x[6], x[7]) * __nvvm_fmin_d(x[8], x[9]) + __nvvm_fabs_d(x[10]);
  y[0] = __nvvm_sqrt_rn_f(y[1]) + __nvvm_fmax_f(y[2], y[3]) + __nvvm_add_rn_f(y[4], y[5]);
  x[11] = __nvvm_mul_rn_d(x[1], x[2]);
}
