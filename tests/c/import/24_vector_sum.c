// Reductions the loop vectorizer turns into vector code (floats need -ffast-math).
#include <stdio.h>

#define N 1024
double xs[N];
float fs[N];

int main(void) {
    for (int i = 0; i < N; i++) { xs[i] = (i % 17) * 0.125; fs[i] = (float)((i % 13) - 6) * 0.5f; }
    double s = 0;
    for (int i = 0; i < N; i++) s += xs[i];
    float f = 0;
    for (int i = 0; i < N; i++) f += fs[i] * fs[i];
    double mx = 0;
    for (int i = 0; i < N; i++) mx = xs[i] > mx ? xs[i] : mx;
    printf("s=%.4f f=%.4f mx=%.4f\n", s, f, mx);
    return 0;
}
