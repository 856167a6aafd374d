// Bit-fields and unions (csmith-like): clang reads and writes their storage as i24, i40,
// i48, i56 values and does arithmetic, shifts, signed compares and extensions in those
// widths. Each odd-width store must write exactly its bytes: the neighbours are checked.
#include <stdio.h>
#include <string.h>

struct S { unsigned a : 3; signed b : 19; long c : 40; };
struct T { char x; unsigned a : 17; signed b : 7; char y; };
struct W { signed long p : 44; unsigned q : 11; signed r : 9; };
#pragma pack(push, 1)
struct P { char lead; signed long v : 48; char tail; };
struct Q { char lead; unsigned long v : 40; char mid; signed long w : 56; char tail; };
#pragma pack(pop)
union U { int i; struct S s; unsigned char bytes[8]; };

struct S gs = {5, -1000, 123456789012L};
struct T gt = {1, 100000, -5, 9};
struct W gw = {-1234567890123L, 2000, -200};
struct P gp = {7, -98765432101L, 8};
struct Q gq = {3, 1099511627000ul, 4, -36028797018963000L, 5};

static unsigned long long mix(unsigned long long h, long long v) {
    return (h ^ (unsigned long long)v) * 1099511628211ull;
}

int main(void) {
    unsigned long long h = 14695981039346656037ull;
    struct S s = gs;
    for (int i = 0; i < 40; i++) {
        s.a += 3;
        s.b = s.b * 7 + i;          // wraps in 19 bits
        s.c = (s.c << 3) ^ (s.c >> 5) ^ i;
        gt.a += 12345;              // wraps in 17 bits
        gt.b -= 3;                  // wraps in 7 bits
        gw.p = gw.p * 3 - 17;
        gw.q ^= (unsigned)i * 77;
        gw.r = gw.r / 3 - i;
        gp.v = gp.v * 5 + 1;
        gq.v = gq.v * 3 + 7;
        gq.w = gq.w / 2 - (long)gq.v;
        h = mix(h, s.a);
        h = mix(h, s.b);
        h = mix(h, s.c);
        h = mix(h, gt.a);
        h = mix(h, gt.b);
        h = mix(h, gw.p);
        h = mix(h, gw.q);
        h = mix(h, gw.r);
        h = mix(h, gp.v);
        h = mix(h, gq.v);
        h = mix(h, gq.w);
        h = mix(h, gq.w < 0);
        h = mix(h, s.b < -1000);
        h = mix(h, gw.p > 12345);
        h = mix(h, gt.b >= gt.x);
    }
    union U u;
    memset(&u, 0xAB, sizeof u);
    u.s.b = -7;
    u.s.c = 99;
    printf("%llx %d %d %d %d %d %d %d %u\n", h, gt.x, gt.y, gp.lead, gp.tail, gq.lead, gq.mid, gq.tail,
           u.bytes[7]);
    printf("%u %d %ld %u %d %ld %u %d %ld\n", s.a, s.b, (long)s.c, gt.a, gt.b, (long)gw.p, gw.q,
           gw.r, (long)gp.v);
    return 0;
}
