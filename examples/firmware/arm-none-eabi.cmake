# CMake toolchain file: bare-metal Cortex-M4F with GNU Arm's
# arm-none-eabi-gcc and newlib (Debian: gcc-arm-none-eabi,
# libnewlib-arm-none-eabi).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)   # no semihosting at configure time
set(CMAKE_C_FLAGS_INIT "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -ffunction-sections -fdata-sections")
# newlib's objects lack .note.GNU-stack, which ld 2.40 warns about for no reason on Cortex-M
set(CMAKE_EXE_LINKER_FLAGS_INIT "--specs=rdimon.specs -nostartfiles -Wl,--gc-sections -Wl,--no-warn-execstack")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE NEVER)   # dlcc's CMake package is a host tool
