# CMake toolchain for an arm64 (aarch64) build on an x86-64 Debian machine: Debian's cross compiler
# (crossbuild-essential-arm64) and the arm64 libraries installed beside the host's (multiarch, see
# tools/setup-arm64.sh). Programs built with it run under qemu-user, which ctest uses as the
# emulator. The shaders are compiled by the host's glslangValidator, as in a native build.
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=tools/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# pkg-config's arm64 .pc files, not the host's (libmicrohttpd for --http)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
