#!/bin/sh
# Several images in flight (-j): the same bytes on stdout, the same stderr lines in the same order,
# the same exit status and the same -o files as one engine, with a bad file and a missing one in
# the middle of the batch, on the default device and on a Vulkan one, with images decoded ahead of
# the engines or not. Small word images keep it quick.
. "$(dirname "$0")/lib/common.sh"

C="$SRC/tests/data/corpus/paddleocr"
mkdir -p "$TMP/in"
cp "$C/en_word_1.png" "$TMP/in/1.png"
cp "$C/en_word_2.png" "$TMP/in/2.png"
echo "not an image" > "$TMP/in/3.png"
cp "$C/en_word_3.png" "$TMP/in/4.png"
cp "$C/en_word_4.png" "$TMP/in/5.png"
cp "$C/en_word_5.png" "$TMP/in/6.png"
set -- "$TMP/in/1.png" "$TMP/in/2.png" "$TMP/in/3.png" "$TMP/missing.png" "$TMP/in/4.png" "$TMP/in/5.png" \
    "$TMP/in/6.png"

for fmt in text json tsv; do
    expect_exit 1 "-j 1 $fmt" -- "$BIN" -j 1 --boxes --format "$fmt" "$@"
    mv "$TMP/out" "$TMP/one.out"
    mv "$TMP/err" "$TMP/one.err"
    expect_exit 1 "-j 3 $fmt" -- "$BIN" -j 3 --boxes --format "$fmt" "$@"
    cmp -s "$TMP/one.out" "$TMP/out" && pass || fail "-j 3 $fmt: stdout differs from -j 1"
    grep -v 'worker' "$TMP/err" > "$TMP/err.kept"
    cmp -s "$TMP/one.err" "$TMP/err.kept" && pass || fail "-j 3 $fmt: stderr differs from -j 1: $(cat "$TMP/err")"
    # images decoded ahead of the engines on threads of their own (by default on GPUs only)
    expect_exit 1 "-j 3 --decode-threads 2 $fmt" -- "$BIN" -j 3 --decode-threads 2 --boxes --format "$fmt" "$@"
    cmp -s "$TMP/one.out" "$TMP/out" && pass || fail "-j 3 --decode-threads 2 $fmt: stdout differs from -j 1"
    cmp -s "$TMP/one.err" "$TMP/err" && pass ||
        fail "-j 3 --decode-threads 2 $fmt: stderr differs from -j 1: $(cat "$TMP/err")"
done
# A Vulkan device with its memory not mapped, as on discrete GPUs: weights and images go through
# staging copies, from several engines at once, each reading the images decoded ahead of it in one
# run (several images on the device at once). The same bytes.
expect_exit 1 "-j 3 unmapped" -- env PPOCR_VK_NO_MAPPED_DEVICE=1 "$BIN" --device vulkan --fp32 -j 3 --decode-threads 2 \
    --boxes --format tsv "$@"
cmp -s "$TMP/one.out" "$TMP/out" && pass || fail "-j 3 without mapped device memory: stdout differs from -j 1"
expect_lines 6 "$TMP/one.out" "TSV: header and the five word images' lines"
expect_grep "3.png" "$TMP/one.err" "the bad file is named"
expect_grep "missing.png" "$TMP/one.err" "the missing file is named"

# -o: the same files with the same contents.
expect_exit 1 "-j 1 -o" -- "$BIN" -j 1 --format json -o "$TMP/o1" "$@"
expect_exit 1 "-j 4 -o" -- "$BIN" -j 4 --format json -o "$TMP/o4" "$@"
diff -r "$TMP/o1" "$TMP/o4" >/dev/null && pass || fail "-o folders differ between -j 1 and -j 4"
expect_exit 1 "-j 2 --decode-threads 3 -o" -- "$BIN" -j 2 --decode-threads 3 --format json -o "$TMP/o2" "$@"
diff -r "$TMP/o1" "$TMP/o2" >/dev/null && pass || fail "-o folders differ between -j 1 and -j 2 --decode-threads 3"
[ "$(ls "$TMP/o4" | wc -l)" -eq 5 ] && pass || fail "-o: $(ls "$TMP/o4" | wc -l) files, expected 5"

# A closed stdout: reported once, exit 1, the images still in flight (and those decoded ahead)
# dropped. The inputs four times over, so that results are still written once the reader is gone
# (an engine may read several images in one run and write them at once).
for decoders in 0 2; do
    ( "$BIN" -j 3 --decode-threads $decoders --format json "$@" "$@" "$@" "$@" 2>"$TMP/err"; echo $? >"$TMP/rc" ) |
        head -c 1 >/dev/null
    [ "$(cat "$TMP/rc")" = 1 ] && pass ||
        fail "-j 3 --decode-threads $decoders into a closed pipe: exit $(cat "$TMP/rc"), expected 1"
    [ "$(grep -c 'cannot write to standard output' "$TMP/err")" = 1 ] && pass ||
        fail "-j 3 --decode-threads $decoders into a closed pipe: $(cat "$TMP/err")"
done

# More jobs than inputs, and a bad value.
expect_exit 0 "-j 8 on one image" -- "$BIN" -j 8 "$TMP/in/1.png"
expect_grep "^JOINT$" "$TMP/out" "-j 8 on one image"
expect_exit 2 "-j 0" -- "$BIN" -j 0 "$TMP/in/1.png"
expect_exit 2 "--decode-threads -1" -- "$BIN" -j 2 --decode-threads -1 "$TMP/in/1.png"
finish
