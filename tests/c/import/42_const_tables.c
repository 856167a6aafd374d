// Constant tables in globals: 2-D arrays, structs with arrays, strings in structs.
#include <stdio.h>

static const double coeffs[3][4] = { { 1, 2, 3, 4 }, { 0.5, 0.25, 0.125, 0.0625 }, { -1, 1, -1, 1 } };
struct unit { const char *name; int factor; short pad[3]; };
static const struct unit units[] = { { "mm", 1, { 1, 2, 3 } }, { "cm", 10, { 0 } }, { "m", 1000, { 4 } }, { "km", 1000000, { 0, 0, 9 } } };
static const char grid[3][5] = { "abcd", "efgh", "ijkl" };
static int zeros[1000];

int main(void) {
    double s = 0;
    for (int i = 0; i < 3; i++) for (int j = 0; j < 4; j++) s += coeffs[i][j] * (i + j);
    long f = 0;
    int pads = 0;
    for (int i = 0; i < 4; i++) { f += units[i].factor; for (int k = 0; k < 3; k++) pads += units[i].pad[k]; }
    int z = 0;
    for (int i = 0; i < 1000; i++) z += zeros[i];
    printf("s=%.4f f=%ld pads=%d %s %c%c z=%d\n", s, f, pads, units[3].name, grid[1][2], grid[2][3], z);
    return 0;
}
