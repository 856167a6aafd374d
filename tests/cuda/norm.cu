// A kernel calling a device function that uses sqrt: per-point Euclidean norm.
__attribute__((device)) __attribute__((noinline)) double length3(const double *p) {
  return __builtin_sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
}

__attribute__((global)) void norms(int n, const double *points, double *out) {
  int i = __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() +
          __nvvm_read_ptx_sreg_tid_x();
  if (i < n) out[i] = length3(points + 3 * i);
}
