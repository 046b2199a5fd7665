# The labs of the course, read from the catalogue (course.json): each lab's folder (the same in
# labs/, solutions/ and a submission), the operations it implements (one <op>.cu file each,
# tested by autograder/tests/<op>_test.cu) and, for sums, the summation order that sets its
# error bound:
#   serial  - one running total in arbitrary order (atomics): depth n-1
#   tree    - per-thread chains of bounded length, then a tree (see common/include/reduce/reference.hpp)
#   tree_atomic - a tree, or one block for small inputs, whose block partials may meet in atomics
#             (lab 15)
include(${CMAKE_CURRENT_LIST_DIR}/ResultKinds.cmake)
set(_reduce_catalogue ${CMAKE_CURRENT_LIST_DIR}/../course.json)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_reduce_catalogue})
file(READ ${_reduce_catalogue} _reduce_course)

string(JSON _reduce_op_count LENGTH "${_reduce_course}" operations)
math(EXPR _reduce_last "${_reduce_op_count} - 1")
set(REDUCE_COURSE_OPERATIONS "")
# Each entry point of lab.cuh, once, as the C++ side sees it: a line of
# <build>/generated/reduce/course_entries.inc, REDUCE_ENTRY(entry, getter, ResultKind, LabTable),
# for the runner's protocol table, the checkers' forwarding functions and the C names a lab
# library exports (generated/export_<op>.cu). The getter is the one reduce_name_entry_getters()
# (LabExports.cmake) names, REDUCE_ENTRY_<entry>_GETTER: reduce_sum_lab serves sum and
# sum_deterministic.
include(${CMAKE_CURRENT_LIST_DIR}/LabExports.cmake)
reduce_name_entry_getters(${_reduce_catalogue})
set(REDUCE_GENERATED_INCLUDE_DIR ${CMAKE_BINARY_DIR}/generated CACHE INTERNAL "")
set(_reduce_entries "// Generated from course.json by cmake/CourseLabs.cmake: do not edit.\n")
set(_reduce_seen_entries "")
foreach(i RANGE ${_reduce_last})
  string(JSON _name GET "${_reduce_course}" operations ${i} name)
  string(JSON _entry GET "${_reduce_course}" operations ${i} entry)
  string(JSON _result GET "${_reduce_course}" operations ${i} result)
  list(APPEND REDUCE_COURSE_OPERATIONS ${_name})
  set_property(GLOBAL PROPERTY REDUCE_OP_${_name}_ENTRY ${_entry})
  # The operations whose suites test this one, on its own entry point (default: itself); read by
  # autograder/tests/CMakeLists.txt for the operation's test filters.
  set(_suites ${_name})
  string(JSON _suite_count ERROR_VARIABLE _no_suites LENGTH "${_reduce_course}" operations ${i}
         suites)
  if(NOT _no_suites AND _suite_count GREATER 0)
    set(_suites "")
    math(EXPR _suite_last "${_suite_count} - 1")
    foreach(k RANGE ${_suite_last})
      string(JSON _suite GET "${_reduce_course}" operations ${i} suites ${k})
      list(APPEND _suites ${_suite})
    endforeach()
  endif()
  set_property(GLOBAL PROPERTY REDUCE_OP_${_name}_SUITES ${_suites})
  reduce_result_kind("${_result}" _result_kind "course.json: operation ${_name}")
  set(_table ${_result_kind_TABLE})
  get_property(_getter GLOBAL PROPERTY REDUCE_ENTRY_${_entry}_GETTER)
  if(NOT _entry IN_LIST _reduce_seen_entries)
    list(APPEND _reduce_seen_entries ${_entry})
    string(APPEND _reduce_entries
           "REDUCE_ENTRY(${_entry}, ${_getter}, ${_result_kind_KIND}, ${_table})\n")
  endif()
  set(_workspace "")
  if(NOT _result_kind_WORKSPACE_ARGS STREQUAL "")
    set(_workspace "&reduce::${_entry}_workspace_bytes, ")
  endif()
  file(CONFIGURE OUTPUT ${REDUCE_GENERATED_INCLUDE_DIR}/export_${_name}.cu CONTENT
"// Generated from course.json by cmake/CourseLabs.cmake: linked into every lab library that
// implements ${_name}, so that a process that loads labs (the runner, the benchmark) finds its
// entry point by a C name.
#include <reduce/lab_entry_points.cuh>

extern \"C\" const reduce::${_table}* ${_getter}() {
  static const reduce::${_table} lab{${_workspace}&reduce::${_entry}};
  return &lab;
}
")
endforeach()
file(CONFIGURE OUTPUT ${REDUCE_GENERATED_INCLUDE_DIR}/reduce/course_entries.inc
     CONTENT "${_reduce_entries}")

string(JSON _reduce_lab_count LENGTH "${_reduce_course}" labs)
math(EXPR _reduce_last "${_reduce_lab_count} - 1")
foreach(i RANGE ${_reduce_last})
  string(JSON _folder GET "${_reduce_course}" labs ${i} folder)
  string(JSON _order GET "${_reduce_course}" labs ${i} order)
  string(JSON _op_count LENGTH "${_reduce_course}" labs ${i} ops)
  math(EXPR _op_last "${_op_count} - 1")
  set(_ops "")
  foreach(k RANGE ${_op_last})
    string(JSON _op GET "${_reduce_course}" labs ${i} ops ${k})
    if(NOT _op IN_LIST REDUCE_COURSE_OPERATIONS)
      message(FATAL_ERROR "course.json: lab ${_folder} names the unknown operation ${_op}")
    endif()
    list(APPEND _ops ${_op})
  endforeach()
  reduce_course_lab(${_folder} OPS ${_ops} ORDER ${_order})
endforeach()
