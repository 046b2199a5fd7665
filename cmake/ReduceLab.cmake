# Functions that turn a source tree (labs/, solutions/ or a student's submission) into lab
# libraries, test executables and a benchmark, always against this project's own common/ and
# tests: a submission supplies only its lab sources.

set(REDUCE_SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR}/.. CACHE INTERNAL "")
set_property(GLOBAL PROPERTY REDUCE_COURSE_LABS "")

# reduce_course_lab(<folder> OPS <op>... ORDER serial|tree)
# Registers one lab of the course (called from CourseLabs.cmake).
function(reduce_course_lab folder)
  cmake_parse_arguments(ARG "" "ORDER" "OPS" ${ARGN})
  if(NOT ARG_OPS)
    message(FATAL_ERROR "reduce_course_lab(${folder}): OPS is required")
  endif()
  if(NOT ARG_ORDER)
    set(ARG_ORDER tree)
  endif()
  set_property(GLOBAL APPEND PROPERTY REDUCE_COURSE_LABS ${folder})
  set_property(GLOBAL PROPERTY REDUCE_LAB_${folder}_OPS ${ARG_OPS})
  set_property(GLOBAL PROPERTY REDUCE_LAB_${folder}_ORDER ${ARG_ORDER})
endfunction()

# reduce_add_lab(TREE <name> TREE_DIR <dir> LAB <folder> OP <op> [STUB])
# Builds <dir>/<folder>/<op>.cu into the shared library lib<folder>_<op>.so and links it with the
# test suite of <op>. With STUB the tests are wrapped in a check that the stub fails cleanly.
function(reduce_add_lab)
  cmake_parse_arguments(ARG "STUB" "TREE;TREE_DIR;LAB;OP" "" ${ARGN})
  set(source ${ARG_TREE_DIR}/${ARG_LAB}/${ARG_OP}.cu)
  if(NOT EXISTS ${source})
    message(WARNING "${ARG_TREE}: ${ARG_LAB}/${ARG_OP}.cu is missing; that lab is not built")
    return()
  endif()
  string(REGEX MATCH "^[0-9]+" number ${ARG_LAB})
  get_property(order GLOBAL PROPERTY REDUCE_LAB_${ARG_LAB}_ORDER)
  set(lib ${ARG_TREE}_${ARG_LAB}_${ARG_OP})

  add_library(${lib} SHARED ${source} ${REDUCE_SOURCE_DIR}/common/src/export_${ARG_OP}.cu)
  target_link_libraries(${lib} PRIVATE reduce::common)
  # A lab may keep shared device code in a header of its own folder (lab 14's atomic_max.cuh).
  target_include_directories(${lib} PRIVATE ${ARG_TREE_DIR}/${ARG_LAB})
  # -lineinfo lets compute-sanitizer name the source line of a race or a bad access.
  target_compile_options(${lib} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
  set_target_properties(${lib} PROPERTIES
    OUTPUT_NAME ${ARG_LAB}_${ARG_OP}
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/${ARG_TREE}/lib)
  set(bench_name ${ARG_LAB})
  if(NOT ARG_OP MATCHES "^(sum|maximum|minimum|product|mean|argmax|atomic_max)$")
    set(bench_name ${ARG_LAB}_${ARG_OP})  # a second mode of an operation, e.g. sum_deterministic
  endif()
  set_property(GLOBAL APPEND PROPERTY REDUCE_TREE_${ARG_TREE}_LIBS
    "${bench_name}=$<TARGET_FILE:${lib}>")
  set_property(GLOBAL APPEND PROPERTY REDUCE_TREE_${ARG_TREE}_TARGETS ${lib})

  if(NOT REDUCE_BUILD_TESTS)
    return()
  endif()
  if(NOT EXISTS ${REDUCE_SOURCE_DIR}/autograder/tests/${ARG_OP}_test.cu)
    message(WARNING "no test suite autograder/tests/${ARG_OP}_test.cu: ${ARG_LAB}/${ARG_OP} is untested")
    return()
  endif()
  set(test ${lib}_test)
  add_executable(${test} ${REDUCE_SOURCE_DIR}/autograder/tests/${ARG_OP}_test.cu)
  target_link_libraries(${test} PRIVATE ${lib} reduce::test_support)
  if(order STREQUAL "serial")
    target_compile_definitions(${test} PRIVATE REDUCE_SERIAL_ORDER=1)
  endif()
  target_compile_definitions(${test} PRIVATE REDUCE_LAB_NAME="${ARG_LAB}")
  set_target_properties(${test} PROPERTIES
    OUTPUT_NAME ${ARG_LAB}_${ARG_OP}_test
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/${ARG_TREE}/bin)

  # One label per test that names lab, kind and tree: ctest -L takes a regular expression, so
  # -L lab04, -L gpu and -L solutions all select by it (a list would not survive
  # gtest_discover_tests' PROPERTIES).
  set(label "lab${number}-gpu-${ARG_TREE}")

  # Hidden tests: kept out of the student release, run by the grader.
  set(hidden_source ${REDUCE_SOURCE_DIR}/autograder/hidden/${ARG_OP}_hidden_test.cu)
  if(REDUCE_BUILD_HIDDEN_TESTS AND EXISTS ${hidden_source} AND NOT ARG_STUB)
    add_executable(${lib}_hidden_test ${hidden_source})
    target_link_libraries(${lib}_hidden_test PRIVATE ${lib} reduce::test_support)
    target_compile_definitions(${lib}_hidden_test PRIVATE REDUCE_LAB_NAME="${ARG_LAB}")
    set_target_properties(${lib}_hidden_test PROPERTIES
      OUTPUT_NAME ${ARG_LAB}_${ARG_OP}_hidden_test
      RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/${ARG_TREE}/bin)
    gtest_discover_tests(${lib}_hidden_test
      TEST_PREFIX "${ARG_TREE}.${ARG_LAB}.hidden."
      DISCOVERY_TIMEOUT 60
      PROPERTIES LABELS "${label}-hidden" TIMEOUT 600)
  endif()
  if(ARG_STUB)
    add_test(NAME ${ARG_TREE}.${ARG_LAB}.${ARG_OP}.stub_fails_cleanly
      COMMAND ${CMAKE_COMMAND} -DTEST_BINARY=$<TARGET_FILE:${test}>
              -P ${REDUCE_SOURCE_DIR}/cmake/CheckStub.cmake)
    set_tests_properties(${ARG_TREE}.${ARG_LAB}.${ARG_OP}.stub_fails_cleanly PROPERTIES
      LABELS "${label}-stub" TIMEOUT 120 SKIP_REGULAR_EXPRESSION "no CUDA device")
  else()
    gtest_discover_tests(${test}
      TEST_PREFIX "${ARG_TREE}.${ARG_LAB}."
      DISCOVERY_TIMEOUT 60
      PROPERTIES LABELS "${label}" TIMEOUT 600)
  endif()
endfunction()

# reduce_add_tree(<tree>)
# <tree> is 'labs', 'solutions', or the path of a submission (a copy of labs/ with stubs filled
# in). Adds every course lab found in it and the tree's benchmark, reduce_<name>_bench.
function(reduce_add_tree tree)
  if(tree STREQUAL "labs" OR tree STREQUAL "solutions")
    set(name ${tree})
    set(dir ${REDUCE_SOURCE_DIR}/${tree})
  else()
    get_filename_component(dir ${tree} ABSOLUTE)
    set(name submission)
  endif()
  if(NOT IS_DIRECTORY ${dir})
    message(FATAL_ERROR "REDUCE_TREES: '${tree}' is not a folder (expected labs, solutions or "
                        "the path of a submission)")
  endif()
  set(stub OFF)
  if(name STREQUAL "labs" AND REDUCE_LABS_ARE_STUBS)
    set(stub ON)
  endif()
  get_property(labs GLOBAL PROPERTY REDUCE_COURSE_LABS)
  foreach(lab IN LISTS labs)
    if(REDUCE_ONLY_LABS AND NOT lab IN_LIST REDUCE_ONLY_LABS)
      continue()
    endif()
    get_property(ops GLOBAL PROPERTY REDUCE_LAB_${lab}_OPS)
    foreach(op IN LISTS ops)
      if(stub)
        reduce_add_lab(TREE ${name} TREE_DIR ${dir} LAB ${lab} OP ${op} STUB)
      else()
        reduce_add_lab(TREE ${name} TREE_DIR ${dir} LAB ${lab} OP ${op})
      endif()
    endforeach()
  endforeach()
  get_property(targets GLOBAL PROPERTY REDUCE_TREE_${name}_TARGETS)
  add_custom_target(${name}_all DEPENDS ${targets})
  if(REDUCE_BUILD_BENCHMARKS)
    get_property(libs GLOBAL PROPERTY REDUCE_TREE_${name}_LIBS)
    reduce_add_bench(${name} "${libs}" "${targets}")
  endif()
endfunction()
