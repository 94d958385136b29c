#!/bin/sh
# Soak: N images through one ppocr-vk process, printing its memory at intervals, to show that it
# stays flat after warm-up (no leak per image). The images are the corpus' word crops, repeated.
#   tools/soak.sh N [INTERVAL_SECONDS]        (PPOCR_BIN=build/ppocr-vk by default)
# Columns: seconds, images done, resident memory (VmRSS), peak (VmHWM), mapped (VmSize), in KB.
# On a CPU device (lavapipe) the device memory pools are host memory and count in VmRSS; on a GPU
# they do not (the engine has no accessor for its pool use yet).
# Exit status: 0 when the run finished, 1 when ppocr-vk failed or RSS grew by more than
# SOAK_MAX_GROWTH_KB (default 20480) between the end of the warm-up (the first 10% of the images)
# and the end.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
n=${1:?usage: tools/soak.sh N [INTERVAL_SECONDS]}
interval=${2:-5}
bin=${PPOCR_BIN:-$root/build/ppocr-vk}
max_growth=${SOAK_MAX_GROWTH_KB:-20480}
export PPOCR_MODELS="${PPOCR_MODELS:-$root/models}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

set -- "$root"/tests/data/corpus/paddleocr/en_word_*.png "$root"/tests/data/corpus/paddleocr/word_*.jpg \
    "$root"/tests/data/corpus/mmocr_words/*.jpg
i=0
while [ $i -lt "$n" ]; do
    for f in "$@"; do
        [ $i -lt "$n" ] || break
        echo "$f"
        i=$((i + 1))
    done
done >"$tmp/list"

"$bin" --format json "@$tmp/list" >"$tmp/out" 2>"$tmp/err" &
pid=$!
start=$(date +%s)
kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0; }
echo "seconds images rss_kb peak_kb vm_kb"
warm_rss="" last_rss=0
while kill -0 $pid 2>/dev/null; do
    done_n=$(wc -l <"$tmp/out" | tr -d ' ')
    rss=$(kb VmRSS)
    [ -n "$rss" ] || break
    echo "$(($(date +%s) - start)) $done_n $rss $(kb VmHWM) $(kb VmSize)"
    [ -z "$warm_rss" ] && [ "$done_n" -ge $((n / 10)) ] && [ "$done_n" -gt 0 ] && warm_rss=$rss
    last_rss=$rss
    sleep "$interval"
done
rc=0
wait $pid || rc=$?
done_n=$(wc -l <"$tmp/out" | tr -d ' ')
echo "soak: $done_n of $n images in $(($(date +%s) - start)) s, exit $rc; RSS after warm-up ${warm_rss:-?} KB, last sample $last_rss KB"
[ -s "$tmp/err" ] && { echo "soak: stderr:"; head -20 "$tmp/err"; }
[ "$rc" -eq 0 ] && [ "$done_n" -eq "$n" ] || exit 1
if [ -n "$warm_rss" ] && [ $((last_rss - warm_rss)) -gt "$max_growth" ]; then
    echo "soak: RSS grew by $((last_rss - warm_rss)) KB after warm-up (limit $max_growth KB)"
    exit 1
fi
