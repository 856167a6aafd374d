// A data-dependent loop: the number of Collatz steps of each start value, with a switch
// on the remainder and double-precision conversions.
__attribute__((global)) void collatz(int n, const long *starts, int *steps, double *ratio) {
  int i = __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() +
          __nvvm_read_ptx_sreg_tid_x();
  if (i >= n) return;
  long x = starts[i];
  int count = 0;
  while (x > 1 && count < 10000) {
    switch (x % 4) {
    case 0: x /= 4; count += 2; break;
    case 2: x /= 2; count += 1; break;
    default: x = 3 * x + 1; count += 1; break;
    }
  }
  steps[i] = count;
  ratio[i] = (double)count / (double)(starts[i] > 0 ? starts[i] : 1);
  if ((int)ratio[i] > 3) steps[i] = -count;
}
