#!/usr/bin/env bash
# make-parity-fixtures.sh - regenerate tests/data/parity/ (inputs and onnxruntime outputs for
# tests/nn/test_cpu_parity.c).
#
#   tools/ref/make-parity-fixtures.sh                 # reference installed in ~/.cache/ppocr-ref
#   REF_HOME=/path tools/ref/make-parity-fixtures.sh  # installed elsewhere
#
# 1. tools/ref/make_parity_inputs.mjs preprocesses real images of tests/data/corpus exactly as the
#    reference pipeline does: det_input, cls_input, rec_a_input, rec_b_input (.pvkt, see pvkt.mjs).
# 2. tools/ref/dump_onnx.mjs runs the ONNX models (REF_HOME/models) on them with onnxruntime:
#    det_prob (the probability map), cls_prob (softmax), rec_*_index / rec_*_max (argmax and maximum
#    of the rec softmax per time step; the full [N, T, 6625] output would be 1 MB a crop).
# The fixtures come from onnxruntime only, never from ppocr-vk.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
ref_home=${REF_HOME:-$HOME/.cache/ppocr-ref}
models=$ref_home/models
out=$repo/tests/data/parity
export REF_HOME=$ref_home

for m in ch_PP-OCRv4_det_infer.onnx ch_ppocr_mobile_v2.0_cls_infer.onnx ch_PP-OCRv4_rec_infer.onnx; do
  if [ ! -f "$models/$m" ]; then
    echo "missing $models/$m: install the reference with /work/shared/reference/setup.sh (REF_HOME=$ref_home)" >&2
    exit 1
  fi
done

mkdir -p "$out"
rm -f "$out"/*.pvkt
node "$repo/tools/ref/make_parity_inputs.mjs" "$repo/tests/data/corpus" "$out"

dump=$repo/tools/ref/dump_onnx.mjs
node "$dump" "$models/ch_PP-OCRv4_det_infer.onnx" "$out/det_input.pvkt" --out "$out/det_prob.pvkt"
node "$dump" "$models/ch_ppocr_mobile_v2.0_cls_infer.onnx" "$out/cls_input.pvkt" --out "$out/cls_prob.pvkt"
for b in rec_a rec_b; do
  node "$dump" "$models/ch_PP-OCRv4_rec_infer.onnx" "$out/${b}_input.pvkt" \
    --argmax "$out/${b}_index.pvkt" "$out/${b}_max.pvkt"
done
du -ch "$out"/*.pvkt | tail -1
