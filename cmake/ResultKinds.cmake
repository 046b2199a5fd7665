# The result kinds of course.json (an operation's `result`) as the build sees them: the C++ side
# of each kind (its bytes, whether it is per segment, whether it has a workspace) is the table in
# common/vocabulary/include/reduce_vocabulary/result_kind.hpp; this file says what the build writes
# for it (course_entries.inc, export_<op>.cu, the lab libraries' version script).
include_guard(GLOBAL)

# reduce_result_kind(<result> <prefix> [<who>])
# Sets, in the caller's scope, for the course.json result <result>:
#   <prefix>_KIND            the runner's ResultKind without its k: Float, Index, Apply, Segments,
#                            SegmentPairs
#   <prefix>_TABLE           the table of reduce/lab_entry_points.cuh a lab library exports the
#                            entry point by: FloatLab, ArgmaxLab, AtomicMaxLab or SegmentedLab
#   <prefix>_CALL            the entry point's arguments as its demangled name lists them
#                            (common/include/reduce/lab.cuh)
#   <prefix>_WORKSPACE_ARGS  the arguments of <entry>_workspace_bytes, demangled; empty when the
#                            entry point has no workspace
# Any other result stops the configuration; the message starts with <who> (e.g.
# "course.json: operation sum"), default "course.json".
function(reduce_result_kind result prefix)
  set(who "course.json")
  if(ARGC GREATER 2)
    set(who "${ARGV2}")
  endif()
  set(reduction "float const*, unsigned long")
  set(tail "reduce::Workspace, CUstream_st*")
  if(result STREQUAL "float")
    set(kind Float)
    set(table FloatLab)
    set(call "${reduction}, float*, ${tail}")
    set(workspace "unsigned long")
  elseif(result STREQUAL "index")
    set(kind Index)
    set(table ArgmaxLab)
    set(call "${reduction}, long*, ${tail}")
    set(workspace "unsigned long")
  elseif(result STREQUAL "apply")
    set(kind Apply)
    set(table AtomicMaxLab)
    set(call "${reduction}, float*, float*, CUstream_st*")
    set(workspace "")
  elseif(result STREQUAL "segments" OR result STREQUAL "segment_pairs")
    if(result STREQUAL "segments")
      set(kind Segments)
    else()
      set(kind SegmentPairs)
    endif()
    set(table SegmentedLab)
    set(call "${reduction}, long const*, unsigned long, float*, ${tail}")
    set(workspace "unsigned long, unsigned long")
  else()
    message(FATAL_ERROR "${who} has result '${result}' "
                        "(float, index, apply, segments or segment_pairs)")
  endif()
  set(${prefix}_KIND ${kind} PARENT_SCOPE)
  set(${prefix}_TABLE ${table} PARENT_SCOPE)
  set(${prefix}_CALL "${call}" PARENT_SCOPE)
  set(${prefix}_WORKSPACE_ARGS "${workspace}" PARENT_SCOPE)
endfunction()
