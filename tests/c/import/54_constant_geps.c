// Constant GEPs that print alike but index different types: `&u.a.x` and `&u.c.y` are both
// `getelementptr (T, @u, 0, 1)` with T = struct A or struct C (offsets 4 and 8), in global
// initializers and in instructions, nested inside other constant GEPs.
#include <stdio.h>

struct A { char c; int x; };
struct C { double d; int y; };
union U { struct A a; struct C c; };
struct Outer { int pad; union U u[3]; };

union U u;
struct Outer outer;
int *p1 = &u.a.x;
int *p2 = &u.c.y;
int *table[4] = {&outer.u[1].a.x, &outer.u[1].c.y, &outer.u[2].a.x, &outer.u[2].c.y};
char *bytes_c = (char *)&u.c.y;
char *bytes_a = (char *)&u.a.x;

int main(void) {
    u.a.x = 11;
    u.c.y = 22;
    outer.u[1].a.x = 33;
    outer.u[1].c.y = 44;
    outer.u[2].a.x = 55;
    outer.u[2].c.y = 66;
    int sum = 0;
    for (int i = 0; i < 4; i++) sum = sum * 100 + *table[i];
    printf("%d %d %d %ld %d %d\n", *p1, *p2, sum, (long)(bytes_c - bytes_a), u.a.x + u.c.y,
           (int)((char *)&outer.u[2].c.y - (char *)&outer));
    return 0;
}
