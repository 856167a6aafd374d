// float arithmetic and the f-suffixed libm functions.
#include <math.h>
#include <stdio.h>

int main(void) {
    float acc = 0.0f, prod = 1.0f;
    for (int i = 1; i <= 30; i++) {
        float x = i * 0.1f;
        acc += sinf(x) + cosf(x) * expf(-x) + sqrtf(x);
        prod *= 1.0f + x / 100.0f;
    }
    float y = powf(2.0f, 0.5f) + logf(3.0f) + fabsf(-1.25f) + floorf(2.75f) + ceilf(-2.25f);
    printf("%.4f %.5f %.5f %d\n", acc, prod, y, (int)(acc * 100));
    return 0;
}
