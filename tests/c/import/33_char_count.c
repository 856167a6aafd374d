// Character histograms and classification over a text.
#include <stdio.h>

static const char text[] =
    "It was the best of times, it was the worst of times, it was the age of wisdom, "
    "it was the age of foolishness, it was the epoch of belief, it was the epoch of incredulity.";

int main(void) {
    int hist[26] = { 0 };
    int upper = 0, spaces = 0, punct = 0, words = 0, in_word = 0;
    for (const char *p = text; *p; p++) {
        char c = *p;
        if (c >= 'A' && c <= 'Z') { upper++; c = c - 'A' + 'a'; }
        if (c >= 'a' && c <= 'z') { hist[c - 'a']++; if (!in_word) words++; in_word = 1; }
        else { in_word = 0; if (c == ' ') spaces++; else punct++; }
    }
    int best = 0;
    for (int i = 1; i < 26; i++) if (hist[i] > hist[best]) best = i;
    printf("upper=%d spaces=%d punct=%d words=%d top=%c(%d) len=%zu\n", upper, spaces, punct, words, 'a' + best,
           hist[best], sizeof text - 1);
    return 0;
}
