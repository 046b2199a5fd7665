// Planted cheat: lab 09's stub with its body replaced by the reference solution, reached through
// the course's own include path: common/include/reduce/../../../ is the course's root, which
// holds solutions/. The file contains no kernel at all; a grader that builds the submission with
// the course's include directories compiles the reference solution in its place.
#include <reduce/../../../solutions/09_warp_shuffle/sum.cu>
