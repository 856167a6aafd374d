// Two-dimensional arrays: Pascal's triangle and a stencil.
#include <stdio.h>

#define R 20
static long tri[R][R];

int main(void) {
    for (int i = 0; i < R; i++) {
        tri[i][0] = tri[i][i] = 1;
        for (int j = 1; j < i; j++) tri[i][j] = tri[i - 1][j - 1] + tri[i - 1][j];
    }
    double g[10][10] = { { 0 } };
    g[5][5] = 100;
    for (int it = 0; it < 5; it++) {
        double n[10][10];
        for (int i = 0; i < 10; i++)
            for (int j = 0; j < 10; j++) {
                double s = g[i][j] * 4;
                if (i > 0) s += g[i - 1][j];
                if (i < 9) s += g[i + 1][j];
                if (j > 0) s += g[i][j - 1];
                if (j < 9) s += g[i][j + 1];
                n[i][j] = s / 8;
            }
        for (int i = 0; i < 10; i++) for (int j = 0; j < 10; j++) g[i][j] = n[i][j];
    }
    printf("C(19,9)=%ld C(15,4)=%ld g55=%.6f g37=%.6f\n", tri[19][9], tri[15][4], g[5][5], g[3][7]);
    return 0;
}
