# dlccModel.cmake — dlcc_add_model(), installed with dlcc's CMake package.
#
#   dlcc_add_model(<target> MODEL <file>
#                  [DEVICE cpu|gpu|fpga|hetero] [DEVICES <device>...] [NAME <c-name>]
#                  [TRIPLE <llvm-triple>] [MCPU <cpu>]
#                  [OPTIONS <dlcc flags>...])
#
# DEVICE hetero DEVICES cpu gpu fpga (docs/targets/hetero.md): the model
# partitioned across those devices (`dlcc -t hetero --devices cpu,gpu,fpga`);
# <target> is then an INTERFACE library of lib<NAME>_dlcc.a, an archive of
# every object dlcc writes (the FPGA partitions' C files compiled with this
# project's C compiler), and of dlcc::runtime_library (StarPU), or
# dlcc::runtime_mpi_library with OPTIONS --nodes N.  OPTIONS take --emulate,
# --device-file, --objective, --nodes, --in-flight.
#
# Runs dlcc at build time and makes <target> a STATIC library holding the
# generated object (cpu, gpu) or the generated C (fpga: NAME.c, the host
# wrapper), whose PUBLIC include directory holds NAME.h.  Link it:
#
#   target_link_libraries(app PRIVATE <target>)
#
# NAME (the prefix of every generated symbol: NAME_run, NAME_inputs, ...)
# defaults to <target> made into a C identifier.  TRIPLE and MCPU default to
# the variables DLCC_TRIPLE and DLCC_MCPU when those are set (a firmware
# project's toolchain file can set them once), else the host.  OPTIONS go to
# dlcc as they are (-O3, --no-libm, --static-workspace, --weights-section
# .flash_weights, ...).
#
# The model is compiled again when the model file or its weights file
# changes: the JSON model's "weights" key is read at configure time, and
# dlcc writes a depfile (--depfile) that Ninja and Makefile generators read.
# Sets on <target> the properties DLCC_NAME, DLCC_HEADER and DLCC_OUTPUT_DIR.

set(_DLCC_MODEL_DIR "${CMAKE_CURRENT_LIST_DIR}")   # dlccHetero.cmake, the build-time step of DEVICE hetero

function(dlcc_add_model target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "MODEL;DEVICE;NAME;TRIPLE;MCPU" "OPTIONS;DEVICES")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "dlcc_add_model(${target}): unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_MODEL)
    message(FATAL_ERROR "dlcc_add_model(${target}): MODEL <file> is required")
  endif()
  if(NOT DEFINED DLCC_EXECUTABLE)
    message(FATAL_ERROR "dlcc_add_model(${target}): call find_package(dlcc) first")
  endif()
  get_filename_component(model "${ARG_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${model}")
    message(FATAL_ERROR "dlcc_add_model(${target}): no model file ${model}")
  endif()

  set(device cpu)
  if(ARG_DEVICE)
    set(device "${ARG_DEVICE}")
  endif()
  if(NOT device MATCHES "^(cpu|gpu|fpga|hetero)$")
    message(FATAL_ERROR "dlcc_add_model(${target}): DEVICE is cpu, gpu, fpga or hetero, not '${device}'")
  endif()
  if(device STREQUAL "hetero" AND NOT ARG_DEVICES)
    message(FATAL_ERROR "dlcc_add_model(${target}): DEVICE hetero needs DEVICES, e.g. DEVICES cpu gpu fpga")
  endif()
  if(ARG_DEVICES AND NOT device STREQUAL "hetero")
    message(FATAL_ERROR "dlcc_add_model(${target}): DEVICES belongs to DEVICE hetero")
  endif()
  if(ARG_NAME)
    set(name "${ARG_NAME}")
  else()
    string(MAKE_C_IDENTIFIER "${target}" name)
  endif()
  if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "dlcc_add_model(${target}): NAME must be a C identifier, not '${name}'")
  endif()
  set(triple "${ARG_TRIPLE}")
  if(NOT triple AND DLCC_TRIPLE)
    set(triple "${DLCC_TRIPLE}")
  endif()
  set(mcpu "${ARG_MCPU}")
  if(NOT mcpu AND DLCC_MCPU)
    set(mcpu "${DLCC_MCPU}")
  endif()

  # Dependencies known at configure time: the model and, for the JSON
  # format, the weights file beside it.
  set(deps "${model}")
  if(model MATCHES "\\.json$")
    file(READ "${model}" text)
    string(JSON weights ERROR_VARIABLE err GET "${text}" weights)
    if(NOT err AND weights)
      get_filename_component(dir "${model}" DIRECTORY)
      list(APPEND deps "${dir}/${weights}")
    endif()
  endif()

  set(outdir "${CMAKE_CURRENT_BINARY_DIR}/dlcc_${target}")
  set(header "${outdir}/${name}.h")
  if(device STREQUAL "fpga")
    set(product "${outdir}/${name}.c")
  else()
    set(product "${outdir}/${name}${CMAKE_C_OUTPUT_EXTENSION}")
    if(NOT CMAKE_C_OUTPUT_EXTENSION OR CMAKE_C_OUTPUT_EXTENSION STREQUAL ".obj")
      set(product "${outdir}/${name}.o")
    endif()
  endif()
  set(cmd "${DLCC_EXECUTABLE}" "${model}" -t ${device} -o "${outdir}" --name ${name}
      --depfile "${outdir}/${name}.d")
  if(triple)
    list(APPEND cmd --triple "${triple}")
  endif()
  if(mcpu)
    list(APPEND cmd --mcpu "${mcpu}")
  endif()
  list(APPEND cmd ${ARG_OPTIONS})

  if(device STREQUAL "hetero")
    _dlcc_add_hetero("${target}" "${name}" "${outdir}" "${header}" "${cmd}" "${deps}" "${ARG_DEVICES}"
                     "${ARG_OPTIONS}" "${ARG_MODEL}")
    return()
  endif()

  set(depfile_arg)
  if(CMAKE_GENERATOR MATCHES "Ninja" OR (CMAKE_GENERATOR MATCHES "Makefiles" AND
                                          NOT CMAKE_VERSION VERSION_LESS 3.20))
    set(depfile_arg DEPFILE "${outdir}/${name}.d")
  endif()
  add_custom_command(
    OUTPUT "${product}" "${header}"
    COMMAND ${cmd}
    DEPENDS ${deps}
    ${depfile_arg}
    COMMENT "dlcc: compiling ${ARG_MODEL} for ${device} ${triple} into ${name}"
    VERBATIM)

  add_library(${target} STATIC "${product}" "${header}")
  set_source_files_properties("${header}" PROPERTIES HEADER_FILE_ONLY TRUE GENERATED TRUE)
  if(NOT device STREQUAL "fpga")
    set_source_files_properties("${product}" PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  endif()
  set_target_properties(${target} PROPERTIES LINKER_LANGUAGE C
    DLCC_NAME "${name}" DLCC_HEADER "${header}" DLCC_OUTPUT_DIR "${outdir}")
  target_include_directories(${target} PUBLIC "$<BUILD_INTERFACE:${outdir}>")
  target_link_libraries(${target} PUBLIC dlcc::runtime)
  # -t gpu and --threads N > 1 call into the runtime library (Halide's CUDA interface, thread pool).
  set(threads 1)
  list(FIND ARG_OPTIONS "--threads" ti)
  if(ti GREATER -1)
    math(EXPR ti "${ti} + 1")
    list(LENGTH ARG_OPTIONS n_opts)
    if(ti LESS n_opts)
      list(GET ARG_OPTIONS ${ti} threads)
    endif()
  endif()
  if((device STREQUAL "gpu" AND NOT "--gpu-emulate" IN_LIST ARG_OPTIONS) OR threads GREATER 1)
    if(NOT TARGET dlcc::runtime_library)
      message(FATAL_ERROR "dlcc_add_model(${target}): -t gpu and --threads N need the dlcc runtime library, "
                          "which this dlcc was built without (Halide 14 or a C++ compiler was missing)")
    endif()
    target_link_libraries(${target} PUBLIC dlcc::runtime_library)
  endif()
  # The math the generated code calls comes from libm, unless --no-libm.
  if(NOT "--no-libm" IN_LIST ARG_OPTIONS AND NOT MSVC)
    target_link_libraries(${target} PUBLIC m)
  endif()
endfunction()

# DEVICE hetero: the files of the partitions are known only once dlcc has
# partitioned the model, so the build step (dlccHetero.cmake, run with
# cmake -P) runs dlcc, compiles the FPGA partitions' C files and archives
# every object into lib<NAME>_dlcc.a, the one output CMake knows of.
function(_dlcc_add_hetero target name outdir header cmd deps devices options model)
  list(REMOVE_ITEM cmd --depfile "${outdir}/${name}.d")
  list(JOIN devices "," devs)
  list(APPEND cmd -t hetero --devices "${devs}")
  set(archive "${outdir}/lib${name}_dlcc.a")
  set(script "${CMAKE_CURRENT_BINARY_DIR}/dlcc_${target}_hetero.cmake")
  string(REPLACE "\\" "\\\\" cmd_text "${cmd}")              # as a quoted argument of set(): the list stays a list
  string(REPLACE "\"" "\\\"" cmd_text "${cmd_text}")
  string(REPLACE "$" "\\$" cmd_text "${cmd_text}")
  file(WRITE "${script}"
    "set(cmd \"${cmd_text}\")\nset(outdir \"${outdir}\")\nset(name \"${name}\")\n"
    "set(archive \"${archive}\")\nset(cc \"${CMAKE_C_COMPILER}\")\nset(ar \"${CMAKE_AR}\")\n"
    "include(\"${_DLCC_MODEL_DIR}/dlccHetero.cmake\")\n")
  add_custom_command(
    OUTPUT "${archive}" "${header}"
    COMMAND "${CMAKE_COMMAND}" -P "${script}"
    DEPENDS ${deps} "${script}"
    COMMENT "dlcc: compiling ${model} for hetero (${devs}) into ${name}"
    VERBATIM)
  add_custom_target(${target}_dlcc DEPENDS "${archive}" "${header}")
  add_library(${target} INTERFACE)
  add_dependencies(${target} ${target}_dlcc)
  set_target_properties(${target} PROPERTIES
    DLCC_NAME "${name}" DLCC_HEADER "${header}" DLCC_OUTPUT_DIR "${outdir}")
  target_include_directories(${target} INTERFACE "$<BUILD_INTERFACE:${outdir}>")
  set(runtime dlcc::runtime_library)
  if("--nodes" IN_LIST options)
    set(runtime dlcc::runtime_mpi_library)
  endif()
  if(NOT TARGET ${runtime})
    message(FATAL_ERROR "dlcc_add_model(${target}): DEVICE hetero needs ${runtime}, which this dlcc was built "
                        "without (StarPU 1.3, and for --nodes StarPU-MPI and MPI, were missing)")
  endif()
  target_link_libraries(${target} INTERFACE "${archive}" dlcc::runtime ${runtime})
  if(NOT MSVC)
    target_link_libraries(${target} INTERFACE m)
  endif()
endfunction()
