#!/bin/sh
# A folder of images through ppocr-vk, several ways taking turns in one run, as a table of wall
# time and images/s (process start to exit, decoding included) with each way's output checked
# against the first's, byte for byte.
#   tools/bench-folder.sh [-n COPIES] [-r ROUNDS] [SOURCE_DIR] -- 'ARGS' ['ARGS'...]
# The folder is COPIES copies (default 100) of SOURCE_DIR's images (default tests/data/corpus),
# made once in a temporary folder. Each ARGS is one way: ppocr-vk's arguments before the folder.
# ' + ' inside ARGS runs several processes at once on the folder, each with its own arguments
# (their --shard K/N), and their outputs are joined in the order given:
#   tools/bench-folder.sh -- '--device 0' '--device all' \
#       '--device 0 --shard 1/2 + --device 1 --shard 2/2'
# PPOCR_BIN (default build/ppocr-vk); --format json is added where ARGS names no --format.
# ROUNDS (default 3) rounds, each running every way once in the order given; the table has the
# median, the slowest and the fastest round. Exit status 1 when an output differs or a process
# fails.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${PPOCR_BIN:-$root/build/ppocr-vk}
copies=100
rounds=3
src=$root/tests/data/corpus
while [ $# -gt 0 ]; do
    case $1 in
    -n) copies=$2; shift 2 ;;
    -r) rounds=$2; shift 2 ;;
    --) shift; break ;;
    -*) echo "bench-folder: unknown option $1" >&2; exit 2 ;;
    *) src=$1; shift ;;
    esac
done
[ $# -gt 0 ] || { echo "bench-folder: no way to run (give ARGS after --)" >&2; exit 2; }
[ -x "$bin" ] || { echo "bench-folder: no $bin (build first, or set PPOCR_BIN)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/folder"
find "$src" -type f \( -iname '*.png' -o -iname '*.jpg' -o -iname '*.jpeg' -o -iname '*.tif' -o -iname '*.tiff' \
    -o -iname '*.bmp' -o -iname '*.pnm' -o -iname '*.webp' \) | sort >"$tmp/images"
[ -s "$tmp/images" ] || { echo "bench-folder: no images in $src" >&2; exit 2; }
c=0
while [ "$c" -lt "$copies" ]; do
    c=$((c + 1))
    while IFS= read -r f; do
        cp "$f" "$tmp/folder/$(printf 'c%05d_' "$c")$(basename "$f")"
    done <"$tmp/images"
done
n_images=$(find "$tmp/folder" -type f | wc -l)

# run_way WAY OUT: the processes of WAY at once, their outputs joined into OUT; 0 when all succeed
run_way() {
    printf '%s\n' "$1" | awk 'BEGIN { RS = " [+] " } { sub(/\n$/, ""); print }' >"$tmp/parts"
    k=0
    pids=
    while IFS= read -r args; do
        k=$((k + 1))
        case " $args " in *" --format "*) fmt= ;; *) fmt="--format json" ;; esac
        # shellcheck disable=SC2086 # ARGS are words by design
        "$bin" $args $fmt "$tmp/folder" >"$tmp/part$k" 2>"$tmp/err$k" &
        pids="$pids $!"
    done <"$tmp/parts"
    ok=0
    for p in $pids; do wait "$p" || ok=1; done
    : >"$2"
    i=0
    while [ "$i" -lt "$k" ]; do
        i=$((i + 1))
        cat "$tmp/part$i" >>"$2"
        [ "$ok" -eq 0 ] || sed "s/^/  process $i: /" "$tmp/err$i" | tail -3 >&2
    done
    return $ok
}

now() { date +%s.%N; }
status=0
r=0
while [ "$r" -lt "$rounds" ]; do
    r=$((r + 1))
    w=0
    for way in "$@"; do
        w=$((w + 1))
        t0=$(now)
        if ! run_way "$way" "$tmp/out$w"; then
            echo "bench-folder: '$way' failed in round $r" >&2
            status=1
        fi
        t1=$(now)
        printf '%d\t%s\n' "$w" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" >>"$tmp/times"
        sha256sum <"$tmp/out$w" | cut -c1-16 >>"$tmp/sums$w"
    done
done

echo "folder: $n_images images ($copies copies of the $(wc -l <"$tmp/images") images of $src), $rounds rounds taking turns"
printf '%-52s %9s %9s %21s  %s\n' way "median s" "images/s" "rounds' range" output
w=0
ref_sum=
for way in "$@"; do
    w=$((w + 1))
    stats=$(awk -F'\t' -v w="$w" -v n="$n_images" '$1 == w { t[++c] = $2 }
        END {
            for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (t[j] < t[i]) { x = t[i]; t[i] = t[j]; t[j] = x }
            m = c % 2 ? t[(c + 1) / 2] : (t[c / 2] + t[c / 2 + 1]) / 2
            printf "%9.2f %9.1f %10.1f-%-10.1f", m, n / m, n / t[c], n / t[1]
        }' "$tmp/times")
    sums=$(sort -u "$tmp/sums$w")
    if [ "$(printf '%s\n' "$sums" | wc -l)" -ne 1 ]; then
        verdict="differs between its rounds"
        status=1
    elif [ -z "$ref_sum" ]; then
        ref_sum=$sums
        verdict="$sums (the reference)"
    elif [ "$sums" = "$ref_sum" ]; then
        verdict="$sums, the same bytes"
    else
        verdict="$sums, DIFFERS from the first way"
        status=1
    fi
    printf '%-52s %s  %s\n' "$way" "$stats" "$verdict"
done
exit $status
