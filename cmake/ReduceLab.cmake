# Functions that turn a source tree (labs/, solutions/ or a student's submission) into lab
# libraries and registers their tests. The tests themselves are course binaries, built once
# (autograder/tests: course_test and course_graded_test, every operation's suites): a checker
# never loads a lab, it starts reduce_lab_runner for the lab library named on its command line
# (--lab=...), and runs the tests its --lab-filter selects.

get_filename_component(REDUCE_SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR}/.. ABSOLUTE)
set(REDUCE_SOURCE_DIR ${REDUCE_SOURCE_DIR} CACHE INTERNAL "")
set_property(GLOBAL PROPERTY REDUCE_COURSE_LABS "")
# The headers a lab may include from common/include (the lab contract), and the version script
# that keeps every other symbol of a lab library local.
set(REDUCE_CONTRACT_HEADERS reduce/lab.cuh reduce/cuda_check.cuh reduce/multi_pass.cuh
    reduce/not_implemented.hpp CACHE INTERNAL "")
include(${CMAKE_CURRENT_LIST_DIR}/LabExports.cmake)
set(REDUCE_LAB_EXPORTS_MAP ${CMAKE_BINARY_DIR}/generated/lab_exports.map CACHE INTERNAL "")
reduce_write_lab_exports_map(${CMAKE_CURRENT_LIST_DIR}/../course.json ${REDUCE_LAB_EXPORTS_MAP})

# reduce_course_lab(<folder> OPS <op>... ORDER serial|tree|tree_atomic)
# Registers one lab of the course (called from CourseLabs.cmake, which reads course.json).
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

# reduce_lab_library(<target> SOURCE <file.cu> OP <op> LAB_DIR <dir> OUTPUT_DIR <dir> NAME <name>)
# One lab library: the lab's source, the C export of its operation, the lab contract.
function(reduce_lab_library target)
  cmake_parse_arguments(ARG "" "SOURCE;OP;LAB_DIR;OUTPUT_DIR;NAME" "" ${ARGN})
  add_library(${target} SHARED ${ARG_SOURCE})
  target_link_libraries(${target} PRIVATE reduce_lab_contract reduce_export_${ARG_OP})
  # A lab may keep shared device code in a header of its own folder (lab 14's atomic_max.cuh).
  target_include_directories(${target} PRIVATE ${ARG_LAB_DIR})
  # -lineinfo lets compute-sanitizer name the source line of a race or a bad access.
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
  # Every symbol resolved at link time: a lab whose function does not match the contract's
  # signature fails here ("undefined reference"), not later in the runner.
  target_link_options(${target} PRIVATE "LINKER:--no-undefined")
  if(EXISTS ${REDUCE_LAB_EXPORTS_MAP})
    target_link_options(${target} PRIVATE "LINKER:--version-script=${REDUCE_LAB_EXPORTS_MAP}")
  endif()
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${ARG_NAME} LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIR})
endfunction()

# reduce_add_lab(TREE <name> TREE_DIR <dir> LAB <folder> OP <op> [STUB])
# Builds <dir>/<folder>/<op>.cu into lib<folder>_<op>.so and registers the tests of <op> for it.
# With STUB the tests are wrapped in a check that the stub fails cleanly.
function(reduce_add_lab)
  cmake_parse_arguments(ARG "STUB" "TREE;TREE_DIR;LAB;OP" "" ${ARGN})
  set(source ${ARG_TREE_DIR}/${ARG_LAB}/${ARG_OP}.cu)
  if(NOT EXISTS ${source})
    message(WARNING "${ARG_TREE}: ${ARG_LAB}/${ARG_OP}.cu is missing; that lab is not built")
    return()
  endif()
  string(REGEX MATCH "^[0-9]+" number ${ARG_LAB})
  get_property(order GLOBAL PROPERTY REDUCE_LAB_${ARG_LAB}_ORDER)
  get_property(entry GLOBAL PROPERTY REDUCE_OP_${ARG_OP}_ENTRY)
  set(lib ${ARG_TREE}_${ARG_LAB}_${ARG_OP})
  reduce_lab_library(${lib} SOURCE ${source} OP ${ARG_OP} LAB_DIR ${ARG_TREE_DIR}/${ARG_LAB}
    OUTPUT_DIR ${CMAKE_BINARY_DIR}/${ARG_TREE}/lib NAME ${ARG_LAB}_${ARG_OP})
  # The middle part of the library's benchmark rows (<family>/<bench_name>/<n>): the lab, or
  # <lab>_<op> for a second mode of an operation. Named here only: the benchmark reads it from
  # labs.txt, the grader from course-manifest.json.
  set(bench_name ${ARG_LAB})
  if(NOT ARG_OP STREQUAL entry AND NOT ARG_OP STREQUAL "atomic_max")
    set(bench_name ${ARG_LAB}_${ARG_OP})
  endif()
  set_property(GLOBAL APPEND PROPERTY REDUCE_TREE_${ARG_TREE}_LIBS
    "${bench_name}=$<TARGET_FILE:${lib}>")
  set_property(GLOBAL APPEND PROPERTY REDUCE_TREE_${ARG_TREE}_TARGETS ${lib})
  set(manifest_entry "{\"lab\": \"${ARG_LAB}\", \"op\": \"${ARG_OP}\", ")
  string(APPEND manifest_entry
    "\"library\": \"$<TARGET_FILE:${lib}>\", \"bench_name\": \"${bench_name}\"}")
  set_property(GLOBAL APPEND PROPERTY REDUCE_TREE_${ARG_TREE}_MANIFEST "${manifest_entry}")

  if(NOT REDUCE_BUILD_TESTS)
    return()
  endif()
  get_property(public_filter GLOBAL PROPERTY REDUCE_OP_${ARG_OP}_PUBLIC_FILTER)
  if(NOT TARGET reduce_course_test OR public_filter STREQUAL "")
    message(WARNING "no test suite autograder/tests/${ARG_OP}_test.cu: ${ARG_LAB}/${ARG_OP} is untested")
    return()
  endif()
  set(lab_args --lab=$<TARGET_FILE:${lib}> --lab-entry=${entry} --lab-order=${order}
               --lab-name=${ARG_LAB})
  # One label per test that names lab, kind and tree: ctest -L takes a regular expression, so
  # -L lab04, -L gpu and -L solutions all select by it.
  set(label "lab${number}-gpu-${ARG_TREE}")
  if(ARG_STUB)
    add_test(NAME ${ARG_TREE}.${ARG_LAB}.${ARG_OP}.stub_fails_cleanly
      COMMAND ${CMAKE_COMMAND} -DTEST_BINARY=$<TARGET_FILE:reduce_course_test>
              "-DLAB_ARGS=${lab_args};--lab-filter=${public_filter}"
              -P ${REDUCE_SOURCE_DIR}/cmake/CheckStub.cmake)
    set_tests_properties(${ARG_TREE}.${ARG_LAB}.${ARG_OP}.stub_fails_cleanly PROPERTIES
      LABELS "${label}-stub" TIMEOUT 120 SKIP_REGULAR_EXPRESSION "no CUDA device")
    return()
  endif()
  # PRE_TEST: the checker lists its tests when ctest runs, and listing never starts a runner,
  # so no student code runs at build time. The operation's filter selects its tests, for the
  # listing (TEST_FILTER) and for each test's run (--lab-filter).
  gtest_discover_tests(reduce_course_test
    TEST_PREFIX "${ARG_TREE}.${ARG_LAB}."
    TEST_FILTER ${public_filter}
    EXTRA_ARGS ${lab_args} --lab-filter=${public_filter}
    DISCOVERY_MODE PRE_TEST
    DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS "${label}" TIMEOUT 600)
  # Hidden tests: kept out of the student release, run by the grader.
  get_property(hidden_filter GLOBAL PROPERTY REDUCE_OP_${ARG_OP}_HIDDEN_FILTER)
  if(TARGET reduce_course_graded_test AND NOT hidden_filter STREQUAL "")
    gtest_discover_tests(reduce_course_graded_test
      TEST_PREFIX "${ARG_TREE}.${ARG_LAB}.hidden."
      TEST_FILTER ${hidden_filter}
      EXTRA_ARGS ${lab_args} --lab-filter=${hidden_filter}
      DISCOVERY_MODE PRE_TEST
      DISCOVERY_TIMEOUT 60
      PROPERTIES LABELS "${label}-hidden" TIMEOUT 600)
  endif()
endfunction()

# reduce_add_tree(<tree>)
# <tree> is 'labs', 'solutions', or the path of a submission (a copy of labs/ with stubs filled
# in). Adds every course lab found in it, and <build>/<name>/labs.txt, the list the benchmark
# loads (tools/ladder).
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
  get_property(libs GLOBAL PROPERTY REDUCE_TREE_${name}_LIBS)
  string(JOIN "\n" lines ${libs})
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/${name}/labs.txt CONTENT "${lines}\n")
  set_property(GLOBAL APPEND PROPERTY REDUCE_TREE_NAMES ${name})
endfunction()

# reduce_write_manifest()
# Writes <build>/course-manifest.json: the course's checkers, each operation's entry point, its C
# getter (REDUCE_ENTRY_<entry>_GETTER) and the GoogleTest filters that select its public, hidden
# and graded (both) tests there, the compile settings of a lab library, and the lab libraries of
# each tree with their benchmark rows' name. The grader reads paths, getters, filters and row
# names from it.
function(reduce_write_manifest)
  set(public_checker "")
  set(graded_checker "")
  if(TARGET reduce_course_test)
    set(public_checker "$<TARGET_FILE:reduce_course_test>")
  endif()
  if(TARGET reduce_course_graded_test)
    set(graded_checker "$<TARGET_FILE:reduce_course_graded_test>")
  endif()
  set(checkers "")
  foreach(op IN LISTS REDUCE_COURSE_OPERATIONS)
    get_property(entry GLOBAL PROPERTY REDUCE_OP_${op}_ENTRY)
    get_property(getter GLOBAL PROPERTY REDUCE_ENTRY_${entry}_GETTER)
    set(fields "\"entry\": \"${entry}\", \"getter\": \"${getter}\"")
    foreach(kind IN ITEMS public hidden graded)
      string(TOUPPER ${kind} upper)
      get_property(filter GLOBAL PROPERTY REDUCE_OP_${op}_${upper}_FILTER)
      string(APPEND fields ", \"${kind}_filter\": \"${filter}\"")
    endforeach()
    list(APPEND checkers
      "\"${op}\": {${fields}, \"export_object\": \"$<TARGET_OBJECTS:reduce_export_${op}>\"}")
  endforeach()
  string(JOIN ",\n    " checkers ${checkers})
  set(trees "")
  get_property(names GLOBAL PROPERTY REDUCE_TREE_NAMES)
  foreach(name IN LISTS names)
    get_property(entries GLOBAL PROPERTY REDUCE_TREE_${name}_MANIFEST)
    string(JOIN ",\n      " entries ${entries})
    list(APPEND trees "\"${name}\": [\n      ${entries}\n    ]")
  endforeach()
  string(JOIN ",\n    " trees ${trees})
  set(headers "")
  foreach(h IN LISTS REDUCE_CONTRACT_HEADERS)
    list(APPEND headers "\"${h}\"")
  endforeach()
  string(JOIN ", " headers ${headers})
  set(bench "")
  if(TARGET reduce_bench)
    set(bench "$<TARGET_FILE:reduce_bench>")
  endif()
  # cub::DeviceReduce::Sum as a lab library per sum mode (autograder/bench/references).
  set(cub_references "")
  foreach(op IN ITEMS sum sum_deterministic)
    if(TARGET reduce_cub_reference_${op})
      list(APPEND cub_references "\"${op}\": \"$<TARGET_FILE:reduce_cub_reference_${op}>\"")
    endif()
  endforeach()
  string(JOIN ", " cub_references ${cub_references})
  string(TOUPPER "${CMAKE_BUILD_TYPE}" config)
  string(REPLACE "\"" "\\\"" cuda_flags "${CMAKE_CUDA_FLAGS} ${CMAKE_CUDA_FLAGS_${config}}")
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/course-manifest.json CONTENT "{
  \"version\": 2,
  \"source_dir\": \"${REDUCE_SOURCE_DIR}\",
  \"build_dir\": \"${CMAKE_BINARY_DIR}\",
  \"cuda_compiler\": \"${CMAKE_CUDA_COMPILER}\",
  \"host_compilers\": [\"${CMAKE_CXX_COMPILER}\", \"${CMAKE_CUDA_HOST_COMPILER}\"],
  \"cuda_architectures\": \"${CMAKE_CUDA_ARCHITECTURES}\",
  \"cuda_flags\": \"${cuda_flags}\",
  \"cuda_standard\": \"${CMAKE_CUDA_STANDARD}\",
  \"contract_include_dir\": \"${REDUCE_CONTRACT_INCLUDE_DIR}\",
  \"contract_headers\": [${headers}],
  \"lab_exports_map\": \"${REDUCE_LAB_EXPORTS_MAP}\",
  \"lab_support_library\": \"$<TARGET_FILE:reduce_lab_support>\",
  \"runner\": \"$<TARGET_FILE:reduce_lab_runner>\",
  \"bench\": \"${bench}\",
  \"cub_references\": {${cub_references}},
  \"checkers\": {\"public\": \"${public_checker}\", \"graded\": \"${graded_checker}\"},
  \"operations\": {
    ${checkers}
  },
  \"trees\": {
    ${trees}
  }
}
")
endfunction()
