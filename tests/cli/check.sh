#!/bin/sh
# --check GOLDEN: a golden made on one device (the Vulkan device in fp32: lavapipe here) passes on
# another (the CPU backend where the build has it); one character changed in the golden fails and
# the diff names the line and both texts; --check-edits lets it pass; an input without an entry
# and an input that cannot be read fail; -j keeps the report in input order; a missing or
# malformed golden and misused flags are usage errors (2) of one line. Two small images, since
# lavapipe is slow under the sanitizers.
. "$(dirname "$0")/lib/common.sh"

C="$SRC/tests/data/corpus/paddleocr"
set -- "$C/en_word_1.png" "$C/word_3.jpg"

expect_exit 0 "golden from the Vulkan device in fp32" -- "$BIN" --device vulkan --fp32 --format json "$@"
cp "$TMP/out" "$TMP/golden.jsonl"
expect_lines 2 "$TMP/golden.jsonl" "the golden: one entry per image"
expect_grep '"text":"JOINT"' "$TMP/golden.jsonl" "the golden reads the word"

DEVICE=vulkan
if "$BIN" --list-devices 2>/dev/null | grep -q '^cpu: '; then
    DEVICE=cpu
fi

expect_exit 0 "check on --device $DEVICE" -- "$BIN" --device "$DEVICE" --check "$TMP/golden.jsonl" "$@"
expect_lines 1 "$TMP/out" "a match prints the summary alone"
expect_grep "^check: 2 images match, 0 differ, 0 failed, against .*golden.jsonl (box corners within 2 px, scores within 0.05, texts exact" \
    "$TMP/out" "the summary names the counts, the golden and the limits"

# one character of the first image's line changed in the golden
awk 'NR == 1 { sub(/"text":"JOINT"/, "\"text\":\"JOINX\"") } { print }' "$TMP/golden.jsonl" >"$TMP/changed.jsonl"
expect_grep '"text":"JOINX"' "$TMP/changed.jsonl" "the golden changed"
expect_exit 1 "a changed character" -- "$BIN" --device "$DEVICE" --check "$TMP/changed.jsonl" "$@"
if grep -F -q "en_word_1.png: line 1: text \"JOINT\" != golden \"JOINX\"" "$TMP/out"; then pass; else
    fail "the diff names the line and both texts: $(head -c 400 "$TMP/out")"; fi
expect_lines 2 "$TMP/out" "one diff line and the summary"
expect_grep "^check: 1 image matches, 1 differs, 0 failed" "$TMP/out" "the summary counts the difference"
expect_exit 0 "a changed character within --check-edits 1" -- \
    "$BIN" --device "$DEVICE" --check "$TMP/changed.jsonl" --check-edits 1 "$@"
expect_grep "texts within 1 edit; .*1 line within --check-edits" "$TMP/out" "the summary says the text was let pass"

# an input the golden does not know, one that cannot be read, and -j 2: the report in input order
echo "not an image" >"$TMP/bad.png"
expect_exit 1 "an input without an entry, a bad input" -- "$BIN" --device "$DEVICE" -j 2 --check "$TMP/changed.jsonl" \
    "$C/en_word_2.png" "$TMP/bad.png" "$@"
expect_grep "en_word_2.png: no golden entry" "$TMP/out" "the input without an entry is named"
expect_grep "bad.png" "$TMP/err" "the bad input is named on stderr"
if head -1 "$TMP/out" | grep -q "en_word_2.png: no golden entry" && sed -n 2p "$TMP/out" | grep -q "en_word_1.png: line 1"; then
    pass; else fail "-j 2: the report is not in input order: $(head -c 400 "$TMP/out")"; fi
expect_grep "^check: 1 image matches, 2 differ, 1 failed" "$TMP/out" "the summary counts all three"
expect_exit 0 "golden entries not among the inputs are passed over" -- \
    "$BIN" --device "$DEVICE" --check "$TMP/golden.jsonl" "$C/word_3.jpg"
expect_grep "1 golden entry not among the inputs" "$TMP/out" "the summary counts them"

# goldens that cannot be used, and misused flags: one line, exit 2, before any device is opened
expect_exit 2 "a missing golden" -- "$BIN" --check "$TMP/no-such-golden.jsonl" "$@"
expect_lines 1 "$TMP/err" "a missing golden: one line"
expect_grep "no-such-golden.jsonl: No such file or directory" "$TMP/err" "a missing golden is named"
{ head -1 "$TMP/golden.jsonl"; echo '{"file":"x.png","lines":[{"text":"a","score":0.9}]}'; } >"$TMP/malformed.jsonl"
expect_exit 2 "a malformed golden" -- "$BIN" --check "$TMP/malformed.jsonl" "$@"
expect_lines 1 "$TMP/err" "a malformed golden: one line"
expect_grep "malformed.jsonl: line 2: \"lines\" item 1 has no \"box\"" "$TMP/err" "the file and line are named"
"$BIN" --device "$DEVICE" --format tsv "$@" >"$TMP/golden.tsv" 2>/dev/null
expect_exit 2 "a TSV file for a golden" -- "$BIN" --check "$TMP/golden.tsv" "$@"
expect_grep "golden.tsv: line 1, column 1" "$TMP/err" "not JSON: where"
expect_exit 2 "--check-px without --check" -- "$BIN" --check-px 3 "$@"
expect_grep "need --check" "$TMP/err" "--check-px without --check"
expect_exit 2 "--check with -o" -- "$BIN" --check "$TMP/golden.jsonl" -o "$TMP/o" "$@"
expect_exit 2 "--check-score out of range" -- "$BIN" --check "$TMP/golden.jsonl" --check-score 2 "$@"
expect_exit 2 "--check-edits not a number" -- "$BIN" --check "$TMP/golden.jsonl" --check-edits x "$@"

finish
