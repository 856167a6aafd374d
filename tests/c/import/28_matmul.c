// Double-precision matrix product with a transposed operand.
#include <stdio.h>

#define N 24
static double A[N][N], B[N][N], C[N][N];

int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) { A[i][j] = (i + 1) * 0.5 - j * 0.25; B[j][i] = (i == j) + 0.01 * (i - j); }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < N; k++) s += A[i][k] * B[j][k];
            C[i][j] = s;
        }
    double fro = 0;
    for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) fro += C[i][j] * C[i][j];
    printf("fro=%.6f c00=%.6f c[5][17]=%.6f\n", fro, C[0][0], C[5][17]);
    return 0;
}
