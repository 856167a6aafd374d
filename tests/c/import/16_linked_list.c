// Linked lists: build, reverse, insert sorted, free.
#include <stdio.h>
#include <stdlib.h>

typedef struct node { int value; struct node *next; } node;

static node *push(node *head, int v) { node *n = malloc(sizeof *n); n->value = v; n->next = head; return n; }
static node *reverse(node *h) { node *p = 0; while (h) { node *n = h->next; h->next = p; p = h; h = n; } return p; }
static node *insert_sorted(node *h, int v) {
    node **pp = &h;
    while (*pp && (*pp)->value < v) pp = &(*pp)->next;
    node *n = malloc(sizeof *n); n->value = v; n->next = *pp; *pp = n;
    return h;
}

int main(void) {
    node *h = 0;
    for (int i = 0; i < 10; i++) h = push(h, i * i % 17);
    h = reverse(h);
    node *s = 0;
    for (node *p = h; p; p = p->next) s = insert_sorted(s, p->value);
    for (node *p = s; p; p = p->next) printf("%d ", p->value);
    printf("\n");
    while (h) { node *n = h->next; free(h); h = n; }
    while (s) { node *n = s->next; free(s); s = n; }
    return 0;
}
