#!/bin/sh
# The test suite: a sanitizer build (ASan + UBSan, warnings as errors) and every ctest test, with
# the Khronos validation layer on. Needs what tools/setup.sh installs (packages and models).
#   tools/test.sh [ctest arguments...]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TEST_BUILD_DIR:-$root/build-test}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPPOCR_SANITIZE=ON -DPPOCR_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
export PPOCR_MODELS="$root/models"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" "$@"
