// Deeper recursion: Towers of Hanoi and Ackermann.
#include <stdio.h>

static long moves;
static int checksum;
static void hanoi(int n, int from, int to, int via) {
    if (n == 0) return;
    hanoi(n - 1, from, via, to);
    moves++;
    checksum = (checksum * 31 + from * 3 + to) % 1000003;
    hanoi(n - 1, via, to, from);
}
static int ack(int m, int n) {
    if (m == 0) return n + 1;
    if (n == 0) return ack(m - 1, 1);
    return ack(m - 1, ack(m, n - 1));
}

int main(void) {
    hanoi(12, 1, 3, 2);
    printf("moves=%ld checksum=%d ack(2,3)=%d ack(3,3)=%d\n", moves, checksum, ack(2, 3), ack(3, 3));
    return 0;
}
