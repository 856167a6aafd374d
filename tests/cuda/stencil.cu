// 1-D three-point stencil with a shared-memory tile and halo cells.
#define TILE 128
__attribute__((shared)) float tile[TILE + 2];

__attribute__((global)) void stencil(int n, const float *in, float *out) {
  int lid = __nvvm_read_ptx_sreg_tid_x();
  int gid = __nvvm_read_ptx_sreg_ctaid_x() * TILE + lid;
  tile[lid + 1] = gid < n ? in[gid] : 0.0f;
  if (lid == 0) tile[0] = gid > 0 && gid - 1 < n ? in[gid - 1] : 0.0f;
  if (lid == TILE - 1) tile[TILE + 1] = gid + 1 < n ? in[gid + 1] : 0.0f;
  __syncthreads();
  if (gid < n) out[gid] = 0.25f * tile[lid] + 0.5f * tile[lid + 1] + 0.25f * tile[lid + 2];
}
