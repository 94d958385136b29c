#!/bin/sh
# valgrind memcheck over the tests that run on the CPU alone, and one whole OCR run of the command
# (det, cls and rec on lavapipe, which is slow under valgrind: minutes). Any invalid access or
# leak of ours fails it.
#
# --gpu also runs the GPU test programs on lavapipe, 25 to 250 times slower under valgrind than
# natively (its LLVM JIT and the shaders it compiles are instrumented too). Wall times measured on
# 2 shared cores (Release build, Mesa 22.3 lavapipe, valgrind 3.19), all clean:
#   test_gpu_device 13 s, test_gpu_pool 11 s, test_gpu_dispatch 60 s, test_gpu_cache 15 s,
#   test_gpu_image 92 s, test_gpu_op_elementwise 98 s, test_gpu_op_layout 13 s,
#   test_gpu_op_norm 82 s, test_gpu_op_matmul 11 min, test_gpu_op_timing 74 s,
#   test_gpu_net 4.5 min, test_gpu_parity 6.5 min: about 30 minutes (the whole script: 40).
# test_gpu_op_conv (7 s natively) is left out, to AddressSanitizer (tools/test.sh): it ran past
# 20 minutes twice, the second time with its other tests done, nothing reported, and
# test_timings (convolutions of up to 960 x 960, each checked against the CPU reference) running.
#   tools/memcheck.sh [--gpu] [BUILD_DIR]       (default build/, a Release build of tools/setup.sh)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
gpu=0
if [ "${1:-}" = --gpu ]; then
    gpu=1
    shift
fi
build=${1:-$root/build}
cmake --build "$build" -j"$(nproc)" >/dev/null
export PPOCR_MODELS="$root/models"
# libjpeg-turbo's SIMD code is opaque to memcheck (its output reads as uninitialised): use its C path.
export JSIMD_FORCENONE=1
# one fence wait under valgrind can take minutes: the default 120 s would fail a whole net's run
export PPOCR_VK_TIMEOUT_MS=3000000
vg="valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=99
    --suppressions=$root/tools/memcheck.supp"
failed=0

# check TEST: memcheck over one test program, its log in BUILD_DIR/memcheck-TEST.log
check() {
    if $vg "$build/tests/$1" >/dev/null 2>"$build/memcheck-$1.log"; then
        echo "memcheck $1: clean"
    else
        echo "memcheck $1: FAILED (see $build/memcheck-$1.log)"
        failed=1
    fi
}

for t in test_ctc test_ctc_dict test_db_postprocess test_geometry test_image_decode test_image_errors \
    test_preprocess_resize test_preprocess_crop test_model_file test_onnx_decode test_convert_fold \
    test_convert_patterns test_eval_score test_cpu_shape test_cpu_ref_ops; do
    check $t
done
if $vg "$build/ppocr-vk" --boxes "$root/tests/data/corpus/paddleocr/en_word_3.png" \
    >/dev/null 2>"$build/memcheck-ppocr-vk.log"; then
    echo "memcheck ppocr-vk (one image, det + cls + rec): clean"
else
    echo "memcheck ppocr-vk: FAILED (see $build/memcheck-ppocr-vk.log)"
    failed=1
fi
if [ $gpu = 1 ]; then
    for t in test_gpu_device test_gpu_pool test_gpu_dispatch test_gpu_cache test_gpu_image \
        test_gpu_op_elementwise test_gpu_op_layout test_gpu_op_norm test_gpu_op_matmul test_gpu_op_timing \
        test_gpu_net test_gpu_parity; do
        check $t
    done
fi
exit $failed
