# Third-party libraries of the course (GoogleTest, Google Benchmark) and of the grader (CLI11,
# nlohmann-json, toml++, fmt, GoogleTest): the installed package where find_package finds one,
# else the pinned release archive below, unpacked and built with the project by FetchContent.
# The fallback is for hosts without root or a package registry (README, "Without root").
#
#   REDUCE_FETCH_DEPENDENCIES   AUTO: fetch only what find_package does not find (default)
#                               ON:   fetch every library at its pinned version
#                               OFF:  never fetch; a missing library stops the configure
#   REDUCE_DEPENDENCY_ARCHIVES  a folder holding the pinned archives under the file names below,
#                               used instead of downloading (copy them from a machine with
#                               network); their SHA256 is checked all the same. Its default
#                               is the environment variable of the same name, so that a script
#                               that configures (tools/maint/gpu_check.sh) needs no new option
#   FETCHCONTENT_SOURCE_DIR_<NAME>  CMake's own override: an unpacked source tree to use as is
#
#   reduce_dependency(<Package> [OPTIONAL])
#   reduce_dependency_fetched(<var> <Package>)   <var>: ON where <Package> came from its archive
include_guard(GLOBAL)
include(FetchContent)

set(REDUCE_FETCH_DEPENDENCIES AUTO CACHE STRING
  "Fetch third-party libraries with FetchContent: AUTO (only those not found), ON (all), OFF (never)")
set_property(CACHE REDUCE_FETCH_DEPENDENCIES PROPERTY STRINGS AUTO ON OFF)
set(REDUCE_DEPENDENCY_ARCHIVES "$ENV{REDUCE_DEPENDENCY_ARCHIVES}" CACHE PATH
  "Folder with the pinned dependency archives, used instead of downloading them")
if(NOT REDUCE_FETCH_DEPENDENCIES MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "REDUCE_FETCH_DEPENDENCIES is '${REDUCE_FETCH_DEPENDENCIES}': AUTO, ON or OFF")
endif()

# The pinned archives: <Package> <FetchContent name> <version> <archive file> <URL> <SHA256>.
# Each SHA256 is that of the GitHub tag archive at the URL as public package recipes record it
# (the recipe named on each line). GoogleTest, Benchmark and nlohmann-json are also Debian 12's
# versions, and their hashes were checked against Debian's .orig.tar.gz, the same file. fmt,
# CLI11 and toml++ differ from Debian's repacked (+ds) sources, so their hashes rest on the
# recipes alone.
macro(_reduce_pin package name version file url sha256)
  set(_reduce_${package}_name ${name})
  set(_reduce_${package}_version ${version})
  set(_reduce_${package}_file ${file})
  set(_reduce_${package}_url ${url})
  set(_reduce_${package}_sha256 ${sha256})
endmacro()
# Homebrew, Bazel WORKSPACEs (google-cloud-cpp, opentelemetry-cpp); Debian googletest_1.12.1.orig
_reduce_pin(GTest googletest 1.12.1 googletest-release-1.12.1.tar.gz
  https://github.com/google/googletest/archive/refs/tags/release-1.12.1.tar.gz
  81964fe578e9bd7c94dfdb09c8e4d6e6759e19967e397dbea48d1c10e45d0df2)
# Arch Linux PKGBUILD, opentelemetry-cpp's Bazel deps; Debian benchmark_1.7.1.orig
_reduce_pin(benchmark benchmark 1.7.1 benchmark-1.7.1.tar.gz
  https://github.com/google/benchmark/archive/refs/tags/v1.7.1.tar.gz
  6430e4092653380d9dc4ccb45a1e2dc9259d581f4866dc0759713126056bc1d7)
# xmake-repo packages/n/nlohmann_json, google-cloud-cpp; Debian nlohmann-json3_3.11.2.orig
_reduce_pin(nlohmann_json nlohmann_json 3.11.2 json-3.11.2.tar.gz
  https://github.com/nlohmann/json/archive/refs/tags/v3.11.2.tar.gz
  d69f9deb6a75e2580465c6c4c5111b89c4dc2fa94e3a85fcd2ffcd9a143d9273)
# Homebrew fmt.rb (9.1.0), OpenImageIO's and Ceph's pinned fmt
_reduce_pin(fmt fmt 9.1.0 fmt-9.1.0.tar.gz
  https://github.com/fmtlib/fmt/archive/refs/tags/9.1.0.tar.gz
  5dea48d1fcddc3ec571ce2058e13910a0d4a6bab4cc09a809d8b1dd1c88ae6f2)
# xmake-repo packages/c/cli11, ndk-pkg formula cli11.sh (2.1.2, Debian's, is recorded by neither)
_reduce_pin(CLI11 cli11 2.2.0 CLI11-2.2.0.tar.gz
  https://github.com/CLIUtils/CLI11/archive/refs/tags/v2.2.0.tar.gz
  d60440dc4d43255f872d174e416705f56ba40589f6eb07727f76376fb8378fd6)
# xmake-repo packages/t/tomlplusplus, AUR PKGBUILDs bundling toml++ 3.3.0
_reduce_pin(tomlplusplus tomlplusplus 3.3.0 tomlplusplus-3.3.0.tar.gz
  https://github.com/marzer/tomlplusplus/archive/refs/tags/v3.3.0.tar.gz
  fc1a5eb410f3c67e90e5ad1264a1386d020067cfb01b633cc8c0441789aa6cf2)

function(reduce_dependency_fetched var package)
  get_property(fetched GLOBAL PROPERTY REDUCE_FETCHED_${package})
  if(fetched)
    set(${var} ON PARENT_SCOPE)
  else()
    set(${var} OFF PARENT_SCOPE)
  endif()
endfunction()

function(reduce_dependency package)
  cmake_parse_arguments(PARSE_ARGV 1 arg "OPTIONAL" "" "")
  if(NOT DEFINED _reduce_${package}_name)
    message(FATAL_ERROR "reduce_dependency: no pinned archive for ${package}")
  endif()
  get_property(done GLOBAL PROPERTY REDUCE_DEPENDENCY_${package})
  if(done)
    return()
  endif()
  # GTest through CMake's FindGTest module, as before; the others through their CMake packages.
  set(mode CONFIG)
  if(package STREQUAL "GTest")
    set(mode "")
  endif()
  if(NOT REDUCE_FETCH_DEPENDENCIES STREQUAL "ON")
    find_package(${package} ${mode} QUIET)
    if(${package}_FOUND)
      set_property(GLOBAL PROPERTY REDUCE_DEPENDENCY_${package} ON)
      return()
    endif()
    if(REDUCE_FETCH_DEPENDENCIES STREQUAL "OFF")
      if(NOT arg_OPTIONAL)
        message(STATUS "${package} not found and REDUCE_FETCH_DEPENDENCIES is OFF: install it "
                       "(tools/setup), or configure with -DREDUCE_FETCH_DEPENDENCIES=AUTO")
        find_package(${package} ${mode} REQUIRED)
      endif()
      return()
    endif()
  endif()

  set(name ${_reduce_${package}_name})
  set(version ${_reduce_${package}_version})
  set(sha256 ${_reduce_${package}_sha256})
  string(TOUPPER ${name} NAME)
  if(FETCHCONTENT_SOURCE_DIR_${NAME})
    # CMake's own override: FetchContent takes that tree and downloads nothing.
    message(STATUS "${package}: using the source in FETCHCONTENT_SOURCE_DIR_${NAME}="
                   "${FETCHCONTENT_SOURCE_DIR_${NAME}} (pinned: ${name} ${version})")
    set(archive_url "${_reduce_${package}_url}")
  else()
    message(STATUS "${package}: using ${name} ${version} from its release archive "
                   "(REDUCE_FETCH_DEPENDENCIES=${REDUCE_FETCH_DEPENDENCIES})")
    _reduce_archive(archive ${package})
    set(archive_url "${archive}")
  endif()

  # The libraries' own options (honoured as plain variables through CMP0077): no tests,
  # examples, docs or install rules of theirs in this build.
  set(CMAKE_POLICY_DEFAULT_CMP0077 NEW)
  # CMake 4 (PyPI's cmake today) refuses a cmake_minimum_required below 3.5, which
  # nlohmann-json 3.11.2 (3.1) and CLI11 2.2.0 (3.4) ask for; older CMakes ignore this.
  if(NOT DEFINED CMAKE_POLICY_VERSION_MINIMUM)
    set(CMAKE_POLICY_VERSION_MINIMUM 3.5)
  endif()
  set(subdir "")
  if(package STREQUAL "GTest")
    set(INSTALL_GTEST OFF)
    set(BUILD_GMOCK OFF)
  elseif(package STREQUAL "benchmark")
    set(BENCHMARK_ENABLE_TESTING OFF)
    set(BENCHMARK_ENABLE_GTEST_TESTS OFF)
    set(BENCHMARK_ENABLE_INSTALL OFF)
    set(BENCHMARK_INSTALL_DOCS OFF)
    # Its Release default adds -Werror: a newer compiler's new warning must not stop the build.
    set(BENCHMARK_ENABLE_WERROR OFF)
  elseif(package STREQUAL "nlohmann_json")
    set(JSON_BuildTests OFF)
    set(JSON_Install OFF)
  elseif(package STREQUAL "fmt")
    set(FMT_INSTALL OFF)
    set(FMT_TEST OFF)
    set(FMT_DOC OFF)
  elseif(package STREQUAL "CLI11")
    set(CLI11_BUILD_TESTS OFF)
    set(CLI11_BUILD_EXAMPLES OFF)
    set(CLI11_BUILD_DOCS OFF)
    set(CLI11_INSTALL OFF)
  elseif(package STREQUAL "tomlplusplus")
    # Header-only use: only its include/ folder (which has no CMakeLists.txt) is needed.
    set(subdir include)
  endif()
  set(subdir_args "")
  if(subdir)
    set(subdir_args SOURCE_SUBDIR ${subdir})
  endif()
  FetchContent_Declare(${name}
    URL "${archive_url}"
    URL_HASH SHA256=${sha256}
    DOWNLOAD_EXTRACT_TIMESTAMP TRUE
    ${subdir_args})
  FetchContent_MakeAvailable(${name})

  if(package STREQUAL "tomlplusplus")
    add_library(tomlplusplus::tomlplusplus INTERFACE IMPORTED GLOBAL)
    set_target_properties(tomlplusplus::tomlplusplus PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES ${${name}_SOURCE_DIR}/include)
  elseif(package STREQUAL "fmt")
    # Linked into the grader's static core and its executable.
    set_target_properties(fmt PROPERTIES POSITION_INDEPENDENT_CODE ON)
  endif()
  set_property(GLOBAL PROPERTY REDUCE_DEPENDENCY_${package} ON)
  set_property(GLOBAL PROPERTY REDUCE_FETCHED_${package} ON)
endfunction()

# Sets <var> to the local path of <package>'s pinned archive with its SHA256 checked: the copy in
# REDUCE_DEPENDENCY_ARCHIVES, else one downloaded into the build folder. Failing that, stops
# with what could not be fetched and the ways to do without network.
function(_reduce_archive var package)
  set(file ${_reduce_${package}_file})
  set(url ${_reduce_${package}_url})
  set(sha256 ${_reduce_${package}_sha256})
  string(TOUPPER ${_reduce_${package}_name} NAME)
  set(alternatives
    "Without network here, any one of:\n"
    "  - install the libraries: tools/setup as root (apt), or the conda environment "
    "tools/environment.yml (README, \"Without root\")\n"
    "  - copy ${file} (${url}, SHA256 ${sha256}) from a machine with network into a folder and "
    "configure with -DREDUCE_DEPENDENCY_ARCHIVES=<that folder>\n"
    "  - configure with -DFETCHCONTENT_SOURCE_DIR_${NAME}=<its unpacked source>\n"
    "  - build in the course's container (tools/container/)")
  if(REDUCE_FETCH_DEPENDENCIES STREQUAL "ON")
    set(needed "REDUCE_FETCH_DEPENDENCIES=ON fetches every library; AUTO fetches only those "
               "that are not installed.")
  else()
    set(needed "It is fetched because find_package(${package}) did not find it installed.")
  endif()
  if(REDUCE_DEPENDENCY_ARCHIVES AND EXISTS "${REDUCE_DEPENDENCY_ARCHIVES}/${file}")
    set(archive "${REDUCE_DEPENDENCY_ARCHIVES}/${file}")
  else()
    set(archive "${FETCHCONTENT_BASE_DIR}/archives/${file}")
    if(EXISTS "${archive}")
      file(SHA256 "${archive}" have)
      if(NOT have STREQUAL sha256)
        file(REMOVE "${archive}")
      endif()
    endif()
    if(NOT EXISTS "${archive}")
      set(where "")
      if(REDUCE_DEPENDENCY_ARCHIVES)
        set(where " (not in REDUCE_DEPENDENCY_ARCHIVES=${REDUCE_DEPENDENCY_ARCHIVES})")
      endif()
      message(STATUS "${package}: downloading ${url}${where}")
      file(DOWNLOAD "${url}" "${archive}.part" STATUS status INACTIVITY_TIMEOUT 60 TLS_VERIFY ON)
      list(GET status 0 code)
      if(NOT code EQUAL 0)
        list(GET status 1 why)
        file(REMOVE "${archive}.part")
        message(FATAL_ERROR
          "Could not fetch ${package} (${_reduce_${package}_name} ${_reduce_${package}_version}) "
          "from ${url}: ${why}.\n"
          "${needed}\n" ${alternatives})
      endif()
      file(RENAME "${archive}.part" "${archive}")
    endif()
  endif()
  file(SHA256 "${archive}" have)
  if(NOT have STREQUAL sha256)
    message(FATAL_ERROR
      "${archive} has SHA256 ${have}, not the pinned ${sha256} of ${url}: not used.\n"
      ${alternatives})
  endif()
  set(${var} "${archive}" PARENT_SCOPE)
endfunction()
