# The labs of the course, in teaching order. Each entry names the lab's folder (the same in labs/,
# solutions/ and a submission), the operations it implements (one <op>.cu file each, tested by
# autograder/tests/<op>_test.cu) and, for sums, the summation order that sets its error bound:
#   serial  - one running total in arbitrary order (atomics): depth n-1
#   tree    - per-thread chains of bounded length, then a tree (see common/include/reduce/reference.hpp)
# An op named <op>_<mode> (sum_deterministic) implements <op>'s contract a second way: it is
# benchmarked as "<lab>_<mode>" and tested by autograder/tests/<op>_<mode>_test.cu.
reduce_course_lab(01_atomic_naive          OPS sum ORDER serial)
reduce_course_lab(02_interleaved_divergent OPS sum ORDER tree)
reduce_course_lab(03_interleaved_strided   OPS sum ORDER tree)
reduce_course_lab(04_sequential            OPS sum ORDER tree)
reduce_course_lab(05_first_add_load        OPS sum ORDER tree)
reduce_course_lab(06_unroll_last_warp      OPS sum ORDER tree)
reduce_course_lab(07_complete_unroll       OPS sum ORDER tree)
reduce_course_lab(08_many_per_thread       OPS sum ORDER tree)
reduce_course_lab(09_warp_shuffle          OPS sum ORDER tree)
reduce_course_lab(10_max_min               OPS maximum minimum)
reduce_course_lab(11_product               OPS product)
reduce_course_lab(12_mean                  OPS mean)
reduce_course_lab(13_argmax                OPS argmax)
reduce_course_lab(14_atomic_max            OPS atomic_max maximum)
reduce_course_lab(15_capstone              OPS sum sum_deterministic ORDER tree)
