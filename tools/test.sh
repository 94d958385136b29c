#!/bin/sh
# The test suite: a sanitizer build (ASan + UBSan, warnings as errors) and every ctest test, with
# the Khronos validation layer on. Needs what tools/setup.sh installs (packages and models).
#   tools/test.sh [ctest arguments...]
# A ThreadSanitizer build instead (in build-tsan, TSAN_BUILD_DIR; no fuzz run): the tests that run
# threads of ours (worker pools, -j, an engine's parallel start-up), or the ctest selection given.
# Reports inside the Vulkan loader, layer and driver are suppressed (tests/tsan.supp).
#   tools/test.sh --tsan [ctest arguments...]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
threaded_tests='^(test_workers|test_cli_workers|test_db_postprocess|test_gpu_cache|test_gpu_net_[0-9]+|test_engine_model_checks'
threaded_tests="$threaded_tests|test_engine_words|test_engine_limits|test_preprocess_resize|cli_jobs|cli_basics|cli_pdf)\$"
if [ "${1:-}" = --tsan ]; then
    shift
    build=${TSAN_BUILD_DIR:-$root/build-tsan}
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPPOCR_TSAN=ON -DPPOCR_WERROR=ON >/dev/null
    cmake --build "$build" -j"$(nproc)"
    export PPOCR_MODELS="$root/models"
    # oneDNN's OpenMP threads synchronise in libgomp, which is not instrumented: every read of what
    # they wrote would be a report (and, suppressed, checked address by address: one image took
    # more than ten minutes). With one OpenMP thread the threads left are ours.
    export OMP_NUM_THREADS=1
    [ $# -gt 0 ] || set -- -R "$threaded_tests"
    exec ctest --test-dir "$build" --output-on-failure -j"$(nproc)" "$@"
fi
build=${TEST_BUILD_DIR:-$root/build-test}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPPOCR_SANITIZE=ON -DPPOCR_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
export PPOCR_MODELS="$root/models"

# The Vulkan kernels into the driver's shader cache first, by the release build of tools/setup.sh
# (brought up to date) running the tests that compile the most of them: on lavapipe, LLVM
# compiles each kernel at its first dispatch, about four times slower inside a sanitizer build
# (ASan's allocator under LLVM's), and the sanitizer build's kernels are the same SPIR-V, so its
# tests then find them compiled. This run only warms the cache: the sanitizer build's tests below
# are the verdict. Skipped where ctest arguments choose the tests, or where there is no release
# build: the tests then compile the kernels themselves.
warm_tests='^(warm_net_kernels|test_gpu_parity|test_gpu_op_conv_[0-9]+|test_gpu_op_matmul|test_gpu_op_elementwise)$'
if [ $# -eq 0 ] && [ -x "$root/build/ppocr-vk" ] && cmake --build "$root/build" -j"$(nproc)" >/dev/null; then
    echo "test: the Vulkan kernels into the shader cache (build/, the tests that compile the most)" >&2
    ctest --test-dir "$root/build" -j"$(nproc)" -R "$warm_tests" >/dev/null ||
        echo "test: a release-build test failed while warming the shader cache (the tests below decide)" >&2
fi
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" "$@"

# Fuzz smoke run: each libFuzzer target for FUZZ_SECONDS (30) from its seed corpus, when clang
# with libFuzzer is installed (tools/setup.sh installs it): fuzz_image (ASan + UBSan), the same
# decoders under MemorySanitizer (fuzz_image_msan, from the same seeds) and fuzz_model. A finding
# fails the run; its input is left in $fuzz/findings/ (add it to tests/fuzz/regressions/<corpus>/
# once fixed).
fuzz=${FUZZ_BUILD_DIR:-$root/build-fuzz}
if command -v clang >/dev/null 2>&1 &&
    echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
    clang -x c -fsanitize=fuzzer -o /dev/null - >/dev/null 2>&1; then
    CC=clang cmake -S "$root" -B "$fuzz" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPPOCR_FUZZ=ON >/dev/null
    cmake --build "$fuzz" -j"$(nproc)" --target fuzz_image fuzz_image_msan fuzz_model
    for target in image image_msan model; do
        seeds=${target%_msan}
        rm -rf "$fuzz/corpus_$target" && mkdir -p "$fuzz/corpus_$target" "$fuzz/findings"
        cp "$root/tests/fuzz/corpus_$seeds"/* "$fuzz/corpus_$target/"
        echo "fuzz_$target: ${FUZZ_SECONDS:-30} s" >&2
        "$fuzz/tests/fuzz/fuzz_$target" -max_total_time="${FUZZ_SECONDS:-30}" -timeout=30 -rss_limit_mb=3072 \
            -print_final_stats=1 -artifact_prefix="$fuzz/findings/$target-" "$fuzz/corpus_$target" 2>"$fuzz/fuzz_$target.log" ||
            { tail -n 40 "$fuzz/fuzz_$target.log" >&2; exit 1; }
        grep '^stat::number_of_executed_units' "$fuzz/fuzz_$target.log" >&2
    done
else
    echo "test: no clang with libFuzzer: fuzz smoke run skipped" >&2
fi

# arm64: the tree cross-built for aarch64 and its host-side tests run under qemu-user
# (tools/test-arm64.sh), where tools/setup-arm64.sh installed the cross compiler and libraries;
# skipped with a message otherwise, and with ctest arguments.
[ $# -gt 0 ] || "$root/tools/test-arm64.sh"
