# dlccHetero.cmake — the build step of dlcc_add_model(... DEVICE hetero ...)
# (dlccModel.cmake), run as `cmake -P` with a script that sets cmd (the dlcc
# command), outdir, name, archive, cc and ar: runs dlcc, compiles the FPGA
# partitions' NAME_pK.c (the HLS C with its host wrapper) with cc, and
# archives every object of the folder into `archive` (docs/targets/hetero.md,
# "Linking").
file(GLOB old "${outdir}/${name}_p*" "${outdir}/${name}.o")   # a partition count that shrank leaves none behind
if(old)
  file(REMOVE ${old})
endif()
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dlcc failed (${rc})")
endif()
file(GLOB sources "${outdir}/${name}_p*.c")
foreach(c IN LISTS sources)
  execute_process(COMMAND "${cc}" -std=c99 -O2 -fPIC -Wno-unknown-pragmas -I "${outdir}" -c "${c}" -o "${c}.o"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "compiling ${c} failed (${rc})")
  endif()
endforeach()
file(GLOB objects "${outdir}/${name}.o" "${outdir}/${name}_p*.o")
file(REMOVE "${archive}")
execute_process(COMMAND "${ar}" qc "${archive}" ${objects} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${ar} failed (${rc})")
endif()
