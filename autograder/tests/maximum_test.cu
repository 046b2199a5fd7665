// The maximum suite: run on every lab that implements reduce::maximum (lab 10 with two launches,
// lab 14 with one atomic_max per block). The maximum involves no rounding, so every check is
// bitwise: the result must be exactly the IEEE 754-2019 maximum (NaN if any element is NaN, +0.0
// above -0.0, -inf for no elements). Inputs are chosen so that each classic bug fails a test of its
// own: all-negative arrays (a reduction that starts from 0), NaN at the first, middle and last
// place (a comparison that drops NaN), signed zeros (a comparison that keeps the first of two equal
// values), the largest element at warp and block boundaries and in the tail (index bugs), rotating
// inputs (cached results) and an input longer than 2^31.
//
// The tests are in extremum_suite.cuh, written once for the maximum and its mirror image, the
// minimum (minimum_test.cu); this file picks the maximum.
#define REDUCE_EXTREMUM_MAXIMUM
#include "extremum_suite.cuh"
