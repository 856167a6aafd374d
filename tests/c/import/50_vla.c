// Variable-length arrays (dynamic alloca, stacksave/stackrestore at -O0).
#include <stdio.h>

static double avg_window(const double *x, int n, int w) {
    double total = 0;
    for (int start = 0; start + w <= n; start++) {
        double win[w];
        for (int i = 0; i < w; i++) win[i] = x[start + i];
        double s = 0;
        for (int i = 0; i < w; i++) s += win[i];
        total += s / w;
    }
    return total;
}

int main(int argc, char **argv) {
    int n = 30 + argc;
    double x[n];
    for (int i = 0; i < n; i++) x[i] = (i % 5) * 1.5 - 2;
    printf("%.6f %.6f\n", avg_window(x, n, 3), avg_window(x, n, 4 + argc));
    return 0;
}
