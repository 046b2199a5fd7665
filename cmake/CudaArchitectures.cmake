# Default CMAKE_CUDA_ARCHITECTURES: the GPU in this machine when one answers. Else (a login node,
# CI) machine code for Turing (T4), Ampere (A100; also runs on A10, L4 and other 8.x) and Hopper,
# plus Hopper's PTX, which the driver compiles for any newer GPU when the program loads.
# Any value given on the command line or in a preset wins.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
  set(_reduce_arch "")
  find_program(_reduce_nvidia_smi nvidia-smi)
  if(_reduce_nvidia_smi)
    execute_process(COMMAND ${_reduce_nvidia_smi} --query-gpu=compute_cap --format=csv,noheader
      OUTPUT_VARIABLE _reduce_caps RESULT_VARIABLE _reduce_rc ERROR_QUIET
      OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(_reduce_rc EQUAL 0 AND _reduce_caps MATCHES "^([0-9]+)\\.([0-9]+)")
      set(_reduce_arch "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
    endif()
  endif()
  if(_reduce_arch STREQUAL "")
    set(_reduce_arch "75-real;80-real;90-real;90-virtual")
    message(STATUS "No GPU answered: building for CUDA architectures ${_reduce_arch}")
  else()
    message(STATUS "Building for the GPU present: CUDA architecture ${_reduce_arch}")
  endif()
  set(CMAKE_CUDA_ARCHITECTURES ${_reduce_arch} CACHE STRING "CUDA architectures to build for")
endif()
