// An enum-driven state machine (a tiny tokenizer).
#include <stdio.h>

enum state { START, NUMBER, IDENT, OPERATOR, DONE };

int main(void) {
    const char *src = "x1 = 42 + foo*7 - bar_9 / 3";
    enum state st = START;
    int numbers = 0, idents = 0, ops = 0;
    long value_sum = 0, cur = 0;
    for (const char *p = src;; p++) {
        char c = *p;
        int digit = c >= '0' && c <= '9', alpha = (c >= 'a' && c <= 'z') || c == '_';
        switch (st) {
        case NUMBER:
            if (digit) { cur = cur * 10 + (c - '0'); continue; }
            value_sum += cur; numbers++; break;
        case IDENT:
            if (alpha || digit) continue;
            idents++; break;
        default: break;
        }
        if (!c) { st = DONE; break; }
        if (digit) { st = NUMBER; cur = c - '0'; }
        else if (alpha) st = IDENT;
        else if (c != ' ') { st = OPERATOR; ops++; }
        else st = START;
    }
    printf("numbers=%d idents=%d ops=%d sum=%ld state=%d\n", numbers, idents, ops, value_sum, (int)st);
    return 0;
}
