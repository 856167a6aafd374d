// libdevice's sin, cos and tan (double and float) in one kernel: their bodies, with the
// Payne-Hanek reduction written in inline PTX, must be linked so the PTX needs no
// external function.
extern "C" __attribute__((device)) double __nv_sin(double);
extern "C" __attribute__((device)) double __nv_cos(double);
extern "C" __attribute__((device)) double __nv_tan(double);
extern "C" __attribute__((device)) float __nv_sinf(float);
extern "C" __attribute__((device)) float __nv_cosf(float);

extern "C" __attribute__((global)) void trig(int n, const double *x, double *out, float *out32) {
  int i = __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() +
          __nvvm_read_ptx_sreg_tid_x();
  if (i < n) {
    out[3 * i] = __nv_sin(x[i]);
    out[3 * i + 1] = __nv_cos(x[i]);
    out[3 * i + 2] = __nv_tan(x[i]);
    out32[2 * i] = __nv_sinf((float)x[i]);
    out32[2 * i + 1] = __nv_cosf((float)x[i]);
  }
}
