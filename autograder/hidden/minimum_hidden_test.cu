// Hidden tests of the minimum contract: run by the grader (course_graded_test) on every lab that
// implements reduce::minimum (lab 10), never shipped in the student release. The tests are in
// extremum_hidden_suite.cuh, written once for the maximum and negated for the minimum; this file
// picks the minimum.
#define REDUCE_EXTREMUM_MINIMUM
#include "extremum_hidden_suite.cuh"
