# The labs of the course, read from the catalogue (course.json): each lab's folder (the same in
# labs/, solutions/ and a submission), the operations it implements (one <op>.cu file each,
# tested by autograder/tests/<op>_test.cu) and, for sums, the summation order that sets its
# error bound:
#   serial  - one running total in arbitrary order (atomics): depth n-1
#   tree    - per-thread chains of bounded length, then a tree (see common/include/reduce/reference.hpp)
set(_reduce_catalogue ${CMAKE_CURRENT_LIST_DIR}/../course.json)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_reduce_catalogue})
file(READ ${_reduce_catalogue} _reduce_course)

string(JSON _reduce_op_count LENGTH "${_reduce_course}" operations)
math(EXPR _reduce_last "${_reduce_op_count} - 1")
set(REDUCE_COURSE_OPERATIONS "")
foreach(i RANGE ${_reduce_last})
  string(JSON _name GET "${_reduce_course}" operations ${i} name)
  string(JSON _entry GET "${_reduce_course}" operations ${i} entry)
  list(APPEND REDUCE_COURSE_OPERATIONS ${_name})
  set_property(GLOBAL PROPERTY REDUCE_OP_${_name}_ENTRY ${_entry})
endforeach()

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
