// malloc/calloc/free of arrays and a 2-D table of rows.
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    int n = 50;
    int *v = malloc(n * sizeof *v);
    for (int i = 0; i < n; i++) v[i] = (i * 37) % 101;
    long s = 0;
    for (int i = 0; i < n; i++) s += v[i];
    double **rows = malloc(8 * sizeof *rows);
    for (int r = 0; r < 8; r++) {
        rows[r] = calloc(r + 1, sizeof(double));
        for (int c = 0; c <= r; c++) rows[r][c] = r * 0.5 + c;
    }
    double t = 0;
    for (int r = 0; r < 8; r++) { for (int c = 0; c <= r; c++) t += rows[r][c]; free(rows[r]); }
    free(rows);
    free(v);
    printf("s=%ld t=%.2f\n", s, t);
    return 0;
}
