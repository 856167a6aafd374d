// Histogram with atomics: integer bin counts and a float weight sum per bin.
__attribute__((global)) void histogram(int n, const int *keys, const float *weights,
                                       int nbins, unsigned *counts, float *sums) {
  int stride = __nvvm_read_ptx_sreg_nctaid_x() * __nvvm_read_ptx_sreg_ntid_x();
  for (int i = __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() +
               __nvvm_read_ptx_sreg_tid_x();
       i < n; i += stride) {
    int k = keys[i];
    int bin = k < 0 ? 0 : (k >= nbins ? nbins - 1 : k);
    __nvvm_atom_add_gen_i((int *)&counts[bin], 1);
    __nvvm_atom_add_gen_f(&sums[bin], weights[i]);
  }
}
