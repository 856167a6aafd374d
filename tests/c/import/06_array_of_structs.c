// Arrays of structs: a tiny particle simulation.
#include <stdio.h>

typedef struct { double pos[3]; double vel[3]; float mass; int alive; } particle;
#define NP 16
particle ps[NP];

int main(void) {
    for (int i = 0; i < NP; i++) {
        for (int d = 0; d < 3; d++) { ps[i].pos[d] = i * 0.1 * (d + 1); ps[i].vel[d] = (d - 1) * 0.01 * i; }
        ps[i].mass = 1.0f + i * 0.5f;
        ps[i].alive = i % 3 != 0;
    }
    for (int step = 0; step < 50; step++)
        for (int i = 0; i < NP; i++) {
            if (!ps[i].alive) continue;
            for (int d = 0; d < 3; d++) {
                ps[i].vel[d] -= 0.001 * ps[i].pos[d] / ps[i].mass;
                ps[i].pos[d] += ps[i].vel[d];
            }
        }
    double e = 0;
    int alive = 0;
    for (int i = 0; i < NP; i++) {
        alive += ps[i].alive;
        for (int d = 0; d < 3; d++) e += 0.5 * ps[i].mass * ps[i].vel[d] * ps[i].vel[d];
    }
    printf("alive=%d energy=%.9f p5=(%.6f,%.6f,%.6f)\n", alive, e, ps[5].pos[0], ps[5].pos[1], ps[5].pos[2]);
    return 0;
}
