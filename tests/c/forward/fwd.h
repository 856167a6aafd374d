/* Shared by the forward-mode end-to-end programs: the reverse suite's enzyme.h (markers,
 * checker; found through -I tests/c/reverse) plus the forward-mode entry points. Any
 * function whose name contains __enzyme_fwddiff is one; the suffixed ones declare the
 * result of vector forward mode (enzyme_width N): a struct of N tangents. */
#ifndef ADC_FORWARD_FWD_H
#define ADC_FORWARD_FWD_H

#include "enzyme.h"

extern int enzyme_width, enzyme_dupv;

double __enzyme_fwddiff(void *, ...);

typedef struct {
  double d[2];
} tangents2;
typedef struct {
  double d[4];
} tangents4;
typedef struct {
  double d[8];
} tangents8;

tangents2 __enzyme_fwddiff_w2(void *, ...);
tangents4 __enzyme_fwddiff_w4(void *, ...);
tangents8 __enzyme_fwddiff_w8(void *, ...);

#endif
