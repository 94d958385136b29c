#!/bin/sh
# The progress bar (stderr on a terminal, several images): done of all, the time left, and the
# file whose result comes next. A terminal from script(1) (util-linux); results still go to
# stdout, not into the bar. Needs the models ($PPOCR_MODELS, else SRC/models).
. "$(dirname "$0")/lib/common.sh"

WORDS=$SRC/tests/data/corpus/paddleocr
export PPOCR_MODELS="${PPOCR_MODELS:-$SRC/models}"
[ -f "$PPOCR_MODELS/rec.pvk" ] || { echo "FAIL: no models in $PPOCR_MODELS (run tools/fetch-models.sh)" >&2; exit 1; }
command -v script >/dev/null 2>&1 || { fail "needs script(1) (util-linux)"; finish; exit 1; }

# stdout to a file, stderr the terminal whose bytes script(1) keeps in $TMP/tty
# a bad file in the middle: its error line stands alone, the bar's line cleared before it
printf 'not an image' >"$TMP/bad.png"
export BIN WORDS TMP
script -qec 'exec "$BIN" "$WORDS/en_word_1.png" "$TMP/bad.png" "$WORDS/en_word_2.png" >"$TMP/out"' "$TMP/tty" >/dev/null 2>&1
rc=$?
[ "$rc" -eq 1 ] && pass || fail "exit $rc under a terminal, expected 1: $(cat "$TMP/tty")"
tr '\r' '\n' <"$TMP/tty" >"$TMP/bar"
expect_grep '0/3 ETA ?.*en_word_1\.png' "$TMP/bar" "before the first result: the file in progress"
expect_grep '1/3 ETA [0-9][0-9]*s.*bad\.png' "$TMP/bar" "after the first: the time left and the next file"
expect_grep "^$(printf '\033')\\[Kppocr-vk: $TMP/bad.png: " "$TMP/bar" "an error line on a line of its own"
expect_grep '3/3 in [0-9][0-9]*s' "$TMP/bar" "at the end: the time taken"
expect_lines 5 "$TMP/out" "the results on stdout: two headers, two lines, a blank line between"

finish
