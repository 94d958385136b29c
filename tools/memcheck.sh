#!/bin/sh
# valgrind memcheck over the tests that run on the CPU alone, and one whole OCR run of the command
# (det, cls and rec on lavapipe, which is slow under valgrind: minutes). Any invalid access or
# leak of ours fails it. The GPU test programs are left to AddressSanitizer (tools/test.sh):
# lavapipe's JIT under valgrind would take hours for them.
#   tools/memcheck.sh [BUILD_DIR]       (default build/, a Release build of tools/setup.sh)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
cmake --build "$build" -j"$(nproc)" >/dev/null
export PPOCR_MODELS="$root/models"
# libjpeg-turbo's SIMD code is opaque to memcheck (its output reads as uninitialised): use its C path.
export JSIMD_FORCENONE=1
vg="valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=99
    --suppressions=$root/tools/memcheck.supp"
failed=0
for t in test_ctc test_ctc_dict test_db_postprocess test_geometry test_image_decode test_image_errors \
    test_preprocess_resize test_preprocess_crop test_model_file test_onnx_decode test_convert_fold \
    test_convert_patterns test_eval_score test_cpu_shape test_cpu_ref_ops; do
    if $vg "$build/tests/$t" >/dev/null 2>"$build/memcheck-$t.log"; then
        echo "memcheck $t: clean"
    else
        echo "memcheck $t: FAILED (see $build/memcheck-$t.log)"
        failed=1
    fi
done
if PPOCR_VK_TIMEOUT_MS=3000000 $vg "$build/ppocr-vk" --boxes "$root/tests/data/corpus/paddleocr/en_word_3.png" \
    >/dev/null 2>"$build/memcheck-ppocr-vk.log"; then
    echo "memcheck ppocr-vk (one image, det + cls + rec): clean"
else
    echo "memcheck ppocr-vk: FAILED (see $build/memcheck-ppocr-vk.log)"
    failed=1
fi
exit $failed
