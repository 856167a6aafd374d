// Checked arithmetic builtins (llvm.*.with.overflow).
#include <limits.h>
#include <stdio.h>

int main(void) {
    int hits = 0;
    long long acc = 0;
    int vals[] = { INT_MAX, INT_MIN, 0, 1, -1, 46341, -46341, 1 << 30 };
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            int r;
            hits += __builtin_sadd_overflow(vals[i], vals[j], &r); acc += r;
            hits += __builtin_ssub_overflow(vals[i], vals[j], &r); acc += r;
            hits += __builtin_smul_overflow(vals[i], vals[j], &r); acc += r;
            unsigned u;
            hits += __builtin_uadd_overflow((unsigned)vals[i], (unsigned)vals[j], &u); acc += u;
            hits += __builtin_usub_overflow((unsigned)vals[i], (unsigned)vals[j], &u); acc += u;
            hits += __builtin_umul_overflow((unsigned)vals[i], (unsigned)vals[j], &u); acc += u;
        }
    unsigned long long big;
    int o = __builtin_umulll_overflow(0xffffffffffull, 0x1000000ull, &big);
    printf("hits=%d acc=%lld o=%d big=%llu\n", hits, acc, o, big);
    return 0;
}
