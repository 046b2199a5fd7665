# reduce_write_lab_exports_map(<catalogue> <output>)
# Writes the GNU ld version script of every lab library from the catalogue (course.json): it
# exports the entry points of common/include/reduce/lab.cuh and nothing else, so a student's
# reduce::sum_helper or reduce_evil_lab stays local. Linked with
#   -Xlinker --version-script=<output>   (nvcc)
#   -Wl,--version-script=<output>        (g++)
# Names are exact (quoted C++ names are not globs). The grader checks the exports again from the
# same catalogue (library_check.hpp). Used by the course build and by the grader's tests.
include(${CMAKE_CURRENT_LIST_DIR}/ResultKinds.cmake)

function(reduce_write_lab_exports_map catalogue output)
  file(READ ${catalogue} course)
  string(JSON count LENGTH "${course}" operations)
  math(EXPR last "${count} - 1")
  set(seen "")
  set(c_names "")
  set(cxx_names "")
  foreach(i RANGE ${last})
    string(JSON name GET "${course}" operations ${i} name)
    string(JSON entry GET "${course}" operations ${i} entry)
    string(JSON result GET "${course}" operations ${i} result)
    if(entry IN_LIST seen)
      continue()  # the getter is named after the first operation with that entry
    endif()
    list(APPEND seen ${entry})
    string(APPEND c_names "    reduce_${name}_lab;\n")
    # The demangled signatures of lab.cuh, as the result kind has them.
    reduce_result_kind("${result}" kind "${catalogue}: operation ${name}")
    if(NOT kind_WORKSPACE_ARGS STREQUAL "")
      string(APPEND cxx_names
             "      \"reduce::${entry}_workspace_bytes(${kind_WORKSPACE_ARGS})\";\n")
    endif()
    string(APPEND cxx_names "      \"reduce::${entry}(${kind_CALL})\";\n")
  endforeach()
  file(CONFIGURE OUTPUT ${output} CONTENT
"/* Generated from course.json by cmake/LabExports.cmake: do not edit. */
{
  global:
${c_names}    extern \"C++\" {
${cxx_names}    };
  local:
    *;
};
" @ONLY)
endfunction()
