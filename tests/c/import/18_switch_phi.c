// Switches whose arms merge values (phis on switch edges at -O1 and up).
#include <stdio.h>

static double weight(int kind, double x) {
    double w;
    switch (kind & 7) {
    case 0: w = x; break;
    case 1: w = 2 * x; break;
    case 2: w = x * x; break;
    case 3: case 4: w = -x; break;
    case 5: w = 1.0; break;
    default: w = 0.5;
    }
    return w;
}
static unsigned mix(unsigned h, unsigned char c) {
    switch (c % 4) { case 0: h ^= c; break; case 1: h += c * 3u; break; case 2: h = (h << 3) | (h >> 29); break; default: h -= c; }
    return h * 2654435761u;
}

int main(void) {
    double acc = 0;
    for (int i = 0; i < 40; i++) acc += weight(i * 7, i * 0.25);
    unsigned h = 1;
    const char *s = "switch edges carry block arguments";
    for (const char *p = s; *p; p++) h = mix(h, (unsigned char)*p);
    printf("acc=%.5f h=%u\n", acc, h);
    return 0;
}
