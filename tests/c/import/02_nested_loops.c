// Nested loops: integer matrix product and a triangular loop nest.
#include <stdio.h>

#define N 12
int a[N][N], b[N][N], c[N][N];

int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            a[i][j] = (i * 3 + j) % 11 - 5;
            b[i][j] = (i + 2 * j) % 7 - 3;
        }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            int s = 0;
            for (int k = 0; k < N; k++) s += a[i][k] * b[k][j];
            c[i][j] = s;
        }
    long trace = 0, tri = 0;
    for (int i = 0; i < N; i++) {
        trace += c[i][i];
        for (int j = 0; j <= i; j++) tri += c[i][j] * (j + 1);
    }
    printf("trace=%ld tri=%ld c[3][7]=%d\n", trace, tri, c[3][7]);
    return 0;
}
