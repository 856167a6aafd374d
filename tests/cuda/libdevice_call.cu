// A libdevice call (`__nv_sin` stays a call to an external .func, linked later), a memory
// barrier and an integer atomic whose old value is unused.
extern "C" __attribute__((device)) double __nv_sin(double);

__attribute__((global)) void sines(int n, double *x, int *done) {
  int i = __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() +
          __nvvm_read_ptx_sreg_tid_x();
  if (i < n) x[i] = __nv_sin(x[i]);
  __nvvm_membar_gl();
  __nvvm_atom_add_gen_i(done, 1);
}
