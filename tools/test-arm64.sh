#!/bin/sh
# The arm64 step of tools/test.sh: the whole tree (the CPU executor on oneDNN's arm64 headers, the
# tests too) cross-built for aarch64 in a release build with warnings as errors, as a native arm64
# tools/setup.sh builds it (GCC 12's aarch64 vectoriser has failed on code x86-64 builds). Then,
# under qemu-user, the host-side tests that start no thread (qemu-user hangs on a thread's start on
# these machines, so the GPU, engine and CLI tests cannot run there), and the CPU device's two
# cases: oneDNN missing (a one-line reason, exit status 3) and oneDNN there. Needs what
# tools/setup-arm64.sh installs; skipped with a message without it.
#   tools/test-arm64.sh            (ARM64_BUILD_DIR=build-arm64 by default)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ARM64_BUILD_DIR:-$root/build-arm64}
arch_libs=/usr/lib/aarch64-linux-gnu
if ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || [ ! -e $arch_libs/libvulkan.so ] ||
    [ ! -e $arch_libs/libjpeg.so ] || [ ! -e $arch_libs/libcmocka.so ]; then
    echo "test: no arm64 cross compiler and libraries (tools/setup-arm64.sh installs them): arm64 build skipped" >&2
    exit 0
fi

# oneDNN's arm64 package, unpacked into the build folder: installed beside the host's it would
# replace it (libdnnl-dev is not multiarch), and the executor loads the library at run time.
dnnl=$build/dnnl
mkdir -p "$build"
if [ ! -e "$dnnl/usr/include/dnnl.h" ]; then
    rm -rf "$build/debs" && mkdir -p "$build/debs"
    if (cd "$build/debs" && apt-get download -qq libdnnl-dev:arm64 libdnnl2:arm64 >/dev/null 2>&1); then
        for deb in "$build"/debs/*.deb; do dpkg -x "$deb" "$dnnl"; done
    else
        echo "test: oneDNN's arm64 package could not be fetched: the arm64 build leaves the CPU executor out" >&2
    fi
fi
dnnl_args=""
[ ! -e "$dnnl/usr/include/dnnl.h" ] ||
    dnnl_args="-DPPOCR_CPU_BACKEND=ON -DDNNL_INCLUDE_DIR=$dnnl/usr/include -DDNNL_LIBRARY=$dnnl$arch_libs/libdnnl.so"
echo "test: arm64 cross build ($build)" >&2
# shellcheck disable=SC2086
cmake -S "$root" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$root/tools/aarch64-linux-gnu.cmake" -DCMAKE_BUILD_TYPE=Release \
    -DPPOCR_WERROR=ON $dnnl_args >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null

if ! command -v qemu-aarch64-static >/dev/null 2>&1; then
    echo "test: no qemu-aarch64-static: the arm64 programs built, not run" >&2
    exit 0
fi
export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu PPOCR_MODELS="$root/models"
run() { # a program of the arm64 build, killed if it hangs
    timeout -s KILL 300 qemu-aarch64-static "$@"
}
host_tests="test_cpu_shape test_cpu_ref_ops test_model_file test_onnx_decode test_convert_fold test_convert_patterns
test_convert_numeric test_image_decode test_image_read test_ctc test_ctc_dict test_det_tiles test_fit test_geometry
test_layout test_preprocess_crop test_word_boxes test_cli_check test_cli_formats_xml test_cli_http_paddle
test_cli_shard test_cli_write test_eval_score"
failed=""
for t in $host_tests; do
    (cd "$build/tests" && run "./$t" >"$build/$t.log" 2>&1) || { tail -n 20 "$build/$t.log" >&2; failed="$failed $t"; }
done
[ -z "$failed" ] || { echo "test: arm64 tests failed under qemu:$failed" >&2; exit 1; }
echo "test: arm64: $(echo $host_tests | wc -w) host-side test programs passed under qemu" >&2

run "$build/ppocr-vk" --version >/dev/null
if [ -e "$dnnl$arch_libs/libdnnl.so.2" ]; then
    # without oneDNN on the library path: the CPU device says so in one line, exit status 3
    set +e
    why=$(run "$build/ppocr-vk" --device cpu --self-check 2>&1 >/dev/null)
    rc=$?
    set -e
    if [ $rc -ne 3 ] || [ "$(printf '%s\n' "$why" | wc -l)" -ne 1 ] || ! printf '%s' "$why" | grep -q "needs oneDNN"; then
        echo "test: arm64: --device cpu without oneDNN gave exit status $rc and: $why" >&2
        exit 1
    fi
    # with it (one OpenMP thread: see above)
    LD_LIBRARY_PATH="$dnnl$arch_libs" OMP_NUM_THREADS=1 run "$build/ppocr-vk" --device cpu --self-check >/dev/null
    echo "test: arm64: the CPU device's self-check passed with oneDNN, and without it said why" >&2
fi
