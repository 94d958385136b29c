#!/usr/bin/env bash
# make-goldens.sh - regenerate tests/golden/{cls,nocls}/ from the reference pipeline.
#
#   tools/ref/make-goldens.sh                 # all images under tests/data/corpus
#   REF_HOME=/path tools/ref/make-goldens.sh  # reference installed elsewhere
#
# Runs the trusted reference (PaddleOCR 2.x's pipeline on onnxruntime-node, see
# /work/shared/reference/README.md) on every image of tests/data/corpus, once with the direction
# classifier and once without, and writes one file per image:
#   tests/golden/cls/<path relative to tests/data/corpus>.json
#   tests/golden/nocls/<path relative to tests/data/corpus>.json
# Each file is the reference's output wrapped with the image size, in the same shape as one line
# of `ppocr-vk --format json`, so that ppocr-eval reads both with one parser:
#   {"file": "tesseract/phototest.png", "width": 640, "height": 480,
#    "lines": [{"box": [[x,y]x4], "text": "...", "score": 0.98, "cls": {"label": "0", "score": 0.99}}]}
# Goldens come from the reference only, never from ppocr-vk.
#
# The reference is installed into REF_HOME (default ~/.cache/ppocr-ref) with the shared setup.sh
# (REF_SETUP, default /work/shared/reference/setup.sh) when it is missing.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
ref_home=${REF_HOME:-$HOME/.cache/ppocr-ref}
ref_setup=${REF_SETUP:-/work/shared/reference/setup.sh}
corpus=$repo/tests/data/corpus
golden=$repo/tests/golden

if [ ! -f "$ref_home/ref_ocr.mjs" ] || [ ! -f "$ref_home/models/ch_PP-OCRv4_det_infer.onnx" ]; then
  echo "reference missing in $ref_home; installing with $ref_setup" >&2
  REF_HOME=$ref_home bash "$ref_setup"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The reference names its outputs by image basename, so run it once per folder: two images of
# different folders may share a basename.
mapfile -t dirs < <(cd "$corpus" && find . -type f \( -iname '*.png' -o -iname '*.jpg' -o -iname '*.jpeg' \) \
                      -printf '%h\n' | sed 's|^\./||; s|^\.$||' | sort -u)

for mode in cls nocls; do
  flag=()
  [ "$mode" = nocls ] && flag=(--no-cls)
  rm -rf "${golden:?}/$mode"
  for d in "${dirs[@]}"; do
    mapfile -t imgs < <(cd "$corpus" && find "./$d" -maxdepth 1 -type f \
                          \( -iname '*.png' -o -iname '*.jpg' -o -iname '*.jpeg' \) | sed 's|^\./||' | sort)
    out=$tmp/$mode/$d
    mkdir -p "$out"
    echo "reference ($mode): ${#imgs[@]} images in ${d:-.}" >&2
    (cd "$corpus" && node "$ref_home/ref_ocr.mjs" --models "$ref_home/models" --out "$out" \
       --runs 1 --warmup 0 --quiet "${flag[@]}" "${imgs[@]}" >/dev/null)
    # Wrap each result with the image size the reference decoded (from its timings.json).
    node - "$out" "$golden/$mode" "${imgs[@]}" <<'JS'
const fs = require('fs'), path = require('path');
const [out, dst, ...imgs] = process.argv.slice(2);
const timings = JSON.parse(fs.readFileSync(path.join(out, 'timings.json'), 'utf8'));
for (const rel of imgs) {
  const name = path.basename(rel).replace(/\.[^.]+$/, '');
  const t = timings.images[name];
  if (!t || t.file !== rel) throw new Error(`no reference timing entry for ${rel}`);
  const lines = JSON.parse(fs.readFileSync(path.join(out, `${name}.json`), 'utf8'));
  const file = path.join(dst, `${rel}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // one text line per file line: small diffs when the reference changes
  const body = lines.map((l) => '  ' + JSON.stringify(l)).join(',\n');
  const head = JSON.stringify({ file: rel, width: t.width, height: t.height }).slice(0, -1);
  fs.writeFileSync(file, `${head}, "lines": [\n${body}${lines.length ? '\n' : ''}]}\n`);
}
JS
  done
done
echo "goldens written to $golden/cls and $golden/nocls" >&2
