#!/bin/sh
# Soak: N images through one ppocr-vk process, printing its memory at intervals, to show that it
# stays flat after warm-up (no leak per image). The images are the corpus' word crops, repeated.
#   tools/soak.sh [--serve] N [INTERVAL_SECONDS]        (PPOCR_BIN=build/ppocr-vk by default)
# --serve sends them as N requests to one `ppocr-vk --serve --profile` instead: paths, JSON
# requests with ids and options, base64 bytes, and every tenth a bad request (an error answer);
# its overhead line (time per request beyond decoding and the engine) ends the report.
# Columns: seconds, images done, resident memory (VmRSS), peak (VmHWM), mapped (VmSize), in KB.
# On a CPU device (lavapipe) the device memory pools are host memory and count in VmRSS; on a GPU
# they do not (the engine has no accessor for its pool use yet).
# Exit status: 0 when the run finished, 1 when ppocr-vk failed or RSS grew by more than
# SOAK_MAX_GROWTH_KB (default 20480) between the end of the warm-up (the first 10% of the images)
# and the end.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
serve=0
[ "${1:-}" = --serve ] && { serve=1; shift; }
n=${1:?usage: tools/soak.sh [--serve] N [INTERVAL_SECONDS]}
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
        if [ $serve = 0 ]; then
            echo "$f"
        elif [ $((i % 10)) = 1 ]; then
            echo "{\"id\":$i,\"path\":\"$f\",\"drop_score\":\"high\"}"
        elif [ $((i % 3)) = 0 ]; then
            echo "$f"
        elif [ $((i % 3)) = 1 ]; then
            echo "{\"id\":$i,\"path\":\"$f\",\"drop_score\":0.6,\"det_limit_side_len\":736}"
        else
            echo "{\"id\":$i,\"image\":\"$(base64 -w0 "$f")\"}"
        fi
        i=$((i + 1))
    done
done >"$tmp/list"

if [ $serve = 1 ]; then
    "$bin" --serve --profile <"$tmp/list" >"$tmp/out" 2>"$tmp/err" &
else
    "$bin" --format json "@$tmp/list" >"$tmp/out" 2>"$tmp/err" &
fi
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
if [ $serve = 1 ]; then
    echo "soak: $(grep -c '"error":' "$tmp/out") error answers (every tenth request is bad)"
    grep '^profile serve:' "$tmp/err" || true
    grep -v '^profile' "$tmp/err" | head -20
else
    [ -s "$tmp/err" ] && { echo "soak: stderr:"; head -20 "$tmp/err"; }
fi
[ "$rc" -eq 0 ] && [ "$done_n" -eq "$n" ] || exit 1
if [ -n "$warm_rss" ] && [ $((last_rss - warm_rss)) -gt "$max_growth" ]; then
    echo "soak: RSS grew by $((last_rss - warm_rss)) KB after warm-up (limit $max_growth KB)"
    exit 1
fi
