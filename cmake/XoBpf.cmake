# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# BPF objects and their libbpf skeletons: Makefile.bpf builds every
# bpf/*.bpf.c and tests/bpf/progs/*.bpf.c into ${BPF_OUT}; the target
# bpf_objects stands for all of them. A module that includes a skeleton
# declares it with xo_module(... SKELETONS).

# The make that runs Makefile.bpf: under a Makefiles generator the calling
# make ($(MAKE), sharing its jobserver), under any other (Ninja) make itself.
if(CMAKE_GENERATOR MATCHES "Makefiles")
  set(XO_MAKE "$(MAKE)")
else()
  find_program(XO_MAKE_PROGRAM NAMES make gmake REQUIRED)
  set(XO_MAKE ${XO_MAKE_PROGRAM})
endif()

set(BPF_OUT ${PROJECT_BINARY_DIR}/bpf)
file(GLOB BPF_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/bpf/*.bpf.c
     ${PROJECT_SOURCE_DIR}/tests/bpf/progs/*.bpf.c)
file(GLOB BPF_HEADERS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/bpf/include/xoffload/*.h)
set(BPF_OUTPUTS)
foreach(src ${BPF_SOURCES})
  get_filename_component(name ${src} NAME_WE)
  list(APPEND BPF_OUTPUTS ${BPF_OUT}/${name}.bpf.o ${BPF_OUT}/${name}.skel.h)
endforeach()
add_custom_command(
  OUTPUT ${BPF_OUTPUTS}
  COMMAND ${XO_MAKE} -s -C ${PROJECT_SOURCE_DIR} -f Makefile.bpf OUT=${BPF_OUT}
  DEPENDS ${BPF_SOURCES} ${BPF_HEADERS} ${PROJECT_SOURCE_DIR}/Makefile.bpf
  COMMENT "Building BPF objects and skeletons")
add_custom_target(bpf_objects ALL DEPENDS ${BPF_OUTPUTS})
