// The minimum suite: run on every lab that implements reduce::minimum (lab 10). The mirror image of
// maximum_test.cu: every check is bitwise against the IEEE 754-2019 minimum (NaN if any element is
// NaN, -0.0 below +0.0, +inf for no elements). All-positive arrays catch a reduction that starts
// from 0 instead of +inf; NaN at the first, middle and last place, signed zeros, the smallest
// element at warp and block boundaries and in the tail, rotating inputs and an input longer than
// 2^31 catch the rest.
//
// The tests are in extremum_suite.cuh, written once for the maximum (maximum_test.cu) and
// negated for the minimum; this file picks the minimum.
#define REDUCE_EXTREMUM_MINIMUM
#include "extremum_suite.cuh"
