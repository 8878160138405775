# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# One static library per user/src/<module>; target_link_libraries states the
# direction of every dependency, so a module calling into one it does not
# declare fails to link, and tests/tools/check-build fails a source that
# includes such a module's headers.
#
# xo_module(<target> [SKELETONS] [GLOB] [SOURCES files...] [DEPENDS modules...] [LIBS libs...])
#   SOURCES  the module's .cpp files, relative to its directory
#   GLOB     every .cpp of the directory instead (picks up new files by itself)
#   SKELETONS  includes bpftool skeletons: built after bpf_objects, ${BPF_OUT} on its path
# XO_MODULES (global property) lists the modules in the order they were added,
# each after the modules it depends on.
function(xo_module name)
  cmake_parse_arguments(M "SKELETONS;GLOB" "" "SOURCES;DEPENDS;LIBS" ${ARGN})
  if(M_GLOB)
    file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  else()
    set(srcs ${M_SOURCES})
    list(TRANSFORM srcs PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/)
  endif()
  add_library(${name} STATIC ${srcs})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/user/include ${PROJECT_SOURCE_DIR}/bpf/include)
  target_link_libraries(${name} PUBLIC ${M_DEPENDS} ${M_LIBS})
  if(M_SKELETONS)
    add_dependencies(${name} bpf_objects)
    target_include_directories(${name} PRIVATE ${BPF_OUT})
  endif()
  set_property(GLOBAL APPEND PROPERTY XO_MODULES ${name})
endfunction()
