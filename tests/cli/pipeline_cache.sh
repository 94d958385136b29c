#!/bin/sh
# The pipeline cache: a run saves it where PPOCR_CACHE_DIR says, a run that built nothing new
# leaves the file alone, and a failing image beside a good one changes neither the output nor the
# exit status. With and without the validation layer.
. "$(dirname "$0")/lib/common.sh"

export PPOCR_MODELS="${PPOCR_MODELS:-$SRC/models}"
[ -f "$PPOCR_MODELS/rec.pvk" ] || { echo "FAIL: no models in $PPOCR_MODELS (run tools/fetch-models.sh)" >&2; exit 1; }
WORD=$SRC/tests/data/corpus/paddleocr/en_word_1.png

cache_file() { find "$TMP/cache" -name 'pipelines-*.bin' 2>/dev/null | head -n 1; }

expect_exit 0 "first run, no validation" -- env -u PPOCR_VK_VALIDATE PPOCR_CACHE_DIR="$TMP/cache" "$BIN" --device vulkan "$WORD"
expect_grep "^JOINT$" "$TMP/out" "text of the first run"
expect_lines 0 "$TMP/err" "first run is quiet"
f=$(cache_file)
[ -n "$f" ] && [ "$(wc -c <"$f")" -gt 100 ] && pass || fail "no pipeline cache saved: $(ls -la "$TMP/cache" 2>&1)"
sum=$(cksum <"$f")

expect_exit 0 "second run, no validation" -- env -u PPOCR_VK_VALIDATE PPOCR_CACHE_DIR="$TMP/cache" "$BIN" --device vulkan "$WORD"
expect_grep "^JOINT$" "$TMP/out" "text of the second run"
[ "$(cksum <"$f")" = "$sum" ] && pass || fail "a run that built nothing new rewrote the pipeline cache"

# a failing image still ends with its exit status and the others' output
expect_exit 1 "bad image beside a good one" -- env -u PPOCR_VK_VALIDATE PPOCR_CACHE_DIR="$TMP/cache" "$BIN" --device vulkan "$SRC/README.md" "$WORD"
expect_grep "^JOINT$" "$TMP/out" "the good image's text"
expect_lines 1 "$TMP/err" "one line for the bad image"

expect_exit 0 "with validation" -- env PPOCR_VK_VALIDATE=1 PPOCR_CACHE_DIR="$TMP/cache" "$BIN" --device vulkan "$WORD"
expect_grep "^JOINT$" "$TMP/out" "text with validation"
expect_lines 0 "$TMP/err" "no validation message"

finish
