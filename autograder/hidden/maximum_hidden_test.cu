// Hidden tests of the maximum contract: run by the grader (course_graded_test) on every lab that
// implements reduce::maximum (lab 10 with two launches, lab 14 with one atomic_max per block),
// never shipped in the student release. The tests are in extremum_hidden_suite.cuh, written once
// for the maximum and its mirror image, the minimum; this file picks the maximum.
#define REDUCE_EXTREMUM_MAXIMUM
#include "extremum_hidden_suite.cuh"
