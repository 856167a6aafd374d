/* Shared by the forward-mode end-to-end programs: the reverse suite's enzyme.h (markers,
 * checker; found through -I tests/c/reverse) plus the forward-mode entry point, which
 * returns the tangent of the result. */
#ifndef ADC_FORWARD_FWD_H
#define ADC_FORWARD_FWD_H

#include "enzyme.h"

double __enzyme_fwddiff(void *, ...);

#endif
