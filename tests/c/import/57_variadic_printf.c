// A printf-style function defined with varargs (va_start, vsnprintf, va_copy, va_arg of
// ints, doubles, longs and strings, more of them than fit in registers), a va_list handed
// to a helper, and vprintf; the interpreter, the JIT and the object must print the same.
#include <stdarg.h>
#include <stdio.h>

static int logged;

static void vlog(const char *prefix, const char *fmt, va_list ap) {
    char line[128];
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(line, sizeof line, fmt, copy);
    va_end(copy);
    logged += n;
    printf("%s[%d] %s\n", prefix, n, line);
}

static void log_line(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vlog("log", fmt, ap);
    va_end(ap);
}

static int say(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vprintf(fmt, ap);
    va_end(ap);
    return n;
}

// Reads `kinds` to decide each argument's type: i int, l long, d double, s string.
static double fold(const char *kinds, ...) {
    va_list ap;
    va_start(ap, kinds);
    double acc = 0;
    for (const char *k = kinds; *k; k++) {
        switch (*k) {
        case 'i': acc = acc * 2 + va_arg(ap, int); break;
        case 'l': acc = acc * 2 + (double)va_arg(ap, long); break;
        case 'd': acc = acc * 2 + va_arg(ap, double); break;
        case 's': acc = acc * 2 + va_arg(ap, const char *)[1]; break;
        }
    }
    va_end(ap);
    return acc;
}

int main(int argc, char **argv) {
    (void)argv;
    log_line("start %d of %s", argc, "main");
    log_line("%5.2f|%-4d|%x|%c|%s", 3.14159, 42, 255, 'q', "tail");
    double f = fold("ididldsdddddddd", 1, 0.5, 2, 1.5, 3000000000L, 2.5, "ab", 0.25, 1.0, 2.0,
                    3.0, 4.0, 5.0, 6.0, 7.0);
    int n = say("fold %.4f, %d+%d=%d\n", f, argc, 2, argc + 2);
    log_line("%d %d %d %d %d %d %d %d %.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f", 1, 2, 3,
             4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5);
    printf("said %d, logged %d\n", n, logged);
    return 0;
}
