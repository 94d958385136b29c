#!/bin/sh
# ppocr-vk and the reference (PaddleOCR's pipeline on onnxruntime, CPU) on the same images, one
# after the other in one run, so that the ratio compares like with like on this machine.
#   tools/bench-vs-reference.sh [IMAGE...]     (default: the sample and two corpus pages)
# Needs the reference installed (REF_HOME, default ~/.cache/ppocr-ref: see shared/reference) and
# build/ppocr-vk (PPOCR_VK to use another). RUNS (default 5) timed runs per image for both.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
vk=${PPOCR_VK:-$root/build/ppocr-vk}
ref=${REF_HOME:-$HOME/.cache/ppocr-ref}
runs=${RUNS:-5}
[ $# -gt 0 ] || set -- "$root/tests/data/sample.png" "$root/tests/data/corpus/tesseract/phototest_2.png" \
    "$root/tests/data/corpus/paddleocr/00009282.jpg"
[ -f "$ref/ref_ocr.mjs" ] || { echo "bench-vs-reference: no reference in $ref (run shared/reference/setup.sh with REF_HOME)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$vk" --bench --bench-runs "$runs" "$@" > "$tmp/vk.txt"
node "$ref/ref_ocr.mjs" --models "$ref/models" --out "$tmp/ref" --runs "$runs" --warmup 1 --quiet "$@" > /dev/null

# ppocr-vk's end-to-end medians, in the order of the images: each image's last end-to-end line,
# the run without timestamps where --bench made one (what a user's run costs).
awk '/^[^ ].*\(([0-9]+x[0-9]+), [0-9]+ lines\)$/ {name=$1; order[++n]=name}
     /^  end-to-end/ {ms[n]=$2}
     END {for (i = 1; i <= n; i++) print order[i] "\t" ms[i]}' "$tmp/vk.txt" > "$tmp/vk.tsv"
node -e '
const t = require(process.argv[1]);
for (const k of Object.keys(t.images)) { const i = t.images[k]; console.log(i.file.split("/").pop() + "\t" + i.median_ms.total); }
' "$tmp/ref/timings.json" > "$tmp/ref.tsv"

grep '^device:' "$tmp/vk.txt" | head -1
echo "reference: $(node -e 'console.log(require(process.argv[1]).engine)' "$tmp/ref/timings.json"), $(nproc) cores"
echo "medians of $runs runs after a warm-up; ppocr-vk end to end (decoded image to result),"
echo "the reference from decoded image to result (its 'total')"
printf '%-28s %14s %14s %8s\n' image "ppocr-vk ms" "reference ms" ratio
while IFS="$(printf '\t')" read -r name vkms; do
    refms=$(awk -F'\t' -v n="$name" '$1 == n {print $2}' "$tmp/ref.tsv")
    [ -n "$refms" ] || continue
    printf '%-28s %14.1f %14.1f %7.2fx\n' "$name" "$vkms" "$refms" "$(echo "$vkms $refms" | awk '{print $1 / $2}')"
done < "$tmp/vk.tsv"
tail -3 "$tmp/vk.txt"
