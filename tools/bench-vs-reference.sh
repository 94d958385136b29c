#!/bin/sh
# ppocr-vk on each of its devices and the reference (PaddleOCR's pipeline on onnxruntime, CPU) on
# the same images, taking turns in one run (ROUNDS rounds of every side), so that the ratios
# compare like with like on this machine.
#   tools/bench-vs-reference.sh [IMAGE...]     (default: the sample and two corpus pages)
#   tools/bench-vs-reference.sh --whole [IMAGE...]
#                                        (default: every corpus image) whole processes instead:
#                                        one process of each side over all the images, process
#                                        start to its last result (model loading, start-up and
#                                        decoding included), ROUNDS rounds taking turns
# Needs the reference installed (REF_HOME, default ~/.cache/ppocr-ref: see shared/reference) and
# build/ppocr-vk (PPOCR_VK to use another). RUNS (default 5) timed runs per image and round for
# each side; ROUNDS (default 3); DEVICES: ppocr-vk's --device values (default: "cpu" where the
# build has the CPU backend, then "0"). The table holds the median over rounds of each round's
# median.
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

rounds=${ROUNDS:-3}
if [ -z "${DEVICES:-}" ]; then
    DEVICES=0
    "$vk" --list-devices 2>/dev/null | grep -q '^cpu: ' && DEVICES="cpu 0"
fi
median() { # the median of column 2 of FILE's rows whose column 1 is NAME
    awk -F'\t' -v n="$1" '$1 == n {print $2}' "$2" | sort -g | awk '{v[NR]=$1} END {if (NR) print (NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2)}'
}

if [ "${1:-}" = --whole ]; then
    shift
    [ $# -gt 0 ] || set -- $(find "$root/tests/data/corpus" -type f \( -name '*.png' -o -name '*.jpg' \) | sort)
    timed() { # SIDE COMMAND...: a row "SIDE<tab>wall seconds of the command"
        side=$1
        shift
        s=$(date +%s.%N)
        "$@" >/dev/null 2>&1 || echo "bench-vs-reference: failed: $*" >&2
        printf '%s\t%s\n' "$side" "$(echo "$(date +%s.%N) - $s" | bc)"
    }
    for r in $(seq "$rounds"); do
        for d in $DEVICES; do timed "$d" "$vk" --device "$d" "$@" >>"$tmp/whole.tsv"; done
        timed reference node "$ref/ref_ocr.mjs" --models "$ref/models" --out "$tmp/ref" --runs 1 --warmup 0 --quiet "$@" \
            >>"$tmp/whole.tsv"
    done
    refs=$(median reference "$tmp/whole.tsv")
    echo "whole processes over $# images, $(nproc) cores, medians of $rounds rounds taking turns"
    printf '%-24s %10s %8s\n' side seconds ratio
    for d in $DEVICES; do
        v=$(median "$d" "$tmp/whole.tsv")
        printf '%-24s %10.2f %7.2fx\n' "ppocr-vk --device $d" "$v" "$(echo "$v $refs" | awk '{print $1 / $2}')"
    done
    printf '%-24s %10.2f %7.2fx\n' "onnxruntime reference" "$refs" 1
    exit 0
fi

for r in $(seq "$rounds"); do
    for d in $DEVICES; do
        "$vk" --device "$d" --bench --bench-runs "$runs" "$@" > "$tmp/vk-$d-$r.txt"
        # each image's last end-to-end line: the run without timestamps where --bench made one
        awk '/^[^ ].*\(([0-9]+x[0-9]+), [0-9]+ lines\)$/ {name=$1; order[++n]=name}
             /^  end-to-end/ {ms[n]=$2}
             END {for (i = 1; i <= n; i++) print order[i] "\t" ms[i]}' "$tmp/vk-$d-$r.txt" >> "$tmp/vk-$d.tsv"
    done
    node "$ref/ref_ocr.mjs" --models "$ref/models" --out "$tmp/ref-$r" --runs "$runs" --warmup 1 --quiet "$@" > /dev/null
    node -e '
const t = require(process.argv[1]);
for (const k of Object.keys(t.images)) { const i = t.images[k]; console.log(i.file.split("/").pop() + "\t" + i.median_ms.total); }
' "$tmp/ref-$r/timings.json" >> "$tmp/ref.tsv"
done

for d in $DEVICES; do grep '^device:' "$tmp/vk-$d-1.txt" | head -1 | sed "s/^/--device $d: /"; done
echo "reference: $(node -e 'console.log(require(process.argv[1]).engine)' "$tmp/ref-1/timings.json"), $(nproc) cores"
echo "medians over $rounds rounds of $runs runs after a warm-up; ppocr-vk end to end (decoded image to result),"
echo "the reference from decoded image to result (its 'total'); ratio: ppocr-vk / reference"
printf '%-28s' image
for d in $DEVICES; do printf ' %12s %7s' "$d ms" ratio; done
printf ' %12s\n' "reference ms"
awk -F'\t' '!seen[$1]++ {print $1}' "$tmp/vk-$(echo $DEVICES | cut -d' ' -f1).tsv" | while read -r name; do
    refms=$(median "$name" "$tmp/ref.tsv")
    [ -n "$refms" ] || continue
    printf '%-28s' "$name"
    for d in $DEVICES; do
        vkms=$(median "$name" "$tmp/vk-$d.tsv")
        printf ' %12.1f %6.2fx' "$vkms" "$(echo "$vkms $refms" | awk '{print $1 / $2}')"
    done
    printf ' %12.1f\n' "$refms"
done
