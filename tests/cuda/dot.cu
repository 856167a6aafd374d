// Dot product: each block reduces its partial products in shared memory with a tree
// reduction, then thread 0 adds the block's sum into *out atomically.
#define BLOCK 256
__attribute__((shared)) double partial[BLOCK];

__attribute__((global)) void dot(int n, const double *x, const double *y, double *out) {
  unsigned tid = __nvvm_read_ptx_sreg_tid_x();
  int i = __nvvm_read_ptx_sreg_ctaid_x() * BLOCK + tid;
  partial[tid] = i < n ? x[i] * y[i] : 0.0;
  __syncthreads();
  for (unsigned stride = BLOCK / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] += partial[tid + stride];
    __syncthreads();
  }
  if (tid == 0) __nvvm_atom_add_gen_d(out, partial[0]);
}
