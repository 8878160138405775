# BPF objects and their libbpf skeletons: Makefile.bpf builds every
# bpf/*.bpf.c and tests/bpf/progs/*.bpf.c into ${BPF_OUT}; the target
# bpf_objects stands for all of them. A module that includes a skeleton
# declares it with xo_module(... SKELETONS).

set(BPF_OUT ${CMAKE_BINARY_DIR}/bpf)
file(GLOB BPF_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/bpf/*.bpf.c
     ${CMAKE_SOURCE_DIR}/tests/bpf/progs/*.bpf.c)
file(GLOB BPF_HEADERS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/bpf/include/xoffload/*.h)
set(BPF_OUTPUTS)
foreach(src ${BPF_SOURCES})
  get_filename_component(name ${src} NAME_WE)
  list(APPEND BPF_OUTPUTS ${BPF_OUT}/${name}.bpf.o ${BPF_OUT}/${name}.skel.h)
endforeach()
add_custom_command(
  OUTPUT ${BPF_OUTPUTS}
  COMMAND $(MAKE) -s -C ${CMAKE_SOURCE_DIR} -f Makefile.bpf OUT=${BPF_OUT}
  DEPENDS ${BPF_SOURCES} ${BPF_HEADERS} ${CMAKE_SOURCE_DIR}/Makefile.bpf
  COMMENT "Building BPF objects and skeletons")
add_custom_target(bpf_objects ALL DEPENDS ${BPF_OUTPUTS})
