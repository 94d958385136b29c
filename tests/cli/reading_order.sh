#!/bin/sh
# Reading order end to end: a page scanned upside down reads first line first (PaddleOCR's order,
# kept by --paddle-parity, starts from the far end), and JSON carries the page's blocks.
. "$(dirname "$0")/lib/common.sh"

PAGE="$SRC/tests/data/corpus/tesseract/phototest-rotated-180.png"
expect_exit 0 "upside-down page" -- "$BIN" "$PAGE"
grep -v '^$' "$TMP/out" > "$TMP/lines"
head -n 1 "$TMP/lines" | grep -q '^This is a lot of 12 point text to test the$' && pass ||
    fail "upside-down page: first line is '$(head -n 1 "$TMP/lines")'"
tail -n 1 "$TMP/lines" | grep -q 'brown dog jumped over the lazy fox' && pass ||
    fail "upside-down page: last line is '$(tail -n 1 "$TMP/lines")'"

expect_exit 0 "upside-down page, --paddle-parity" -- "$BIN" --paddle-parity "$PAGE"
at=$(grep -n '^This is a lot of 12 point text to test the$' "$TMP/out" | cut -d: -f1)
[ -n "$at" ] && [ "$at" -gt 4 ] && pass ||
    fail "--paddle-parity keeps PaddleOCR's order (from the page's far end): the first line is line '$at'"

expect_exit 0 "json blocks" -- "$BIN" --format json "$SRC/tests/data/sample.png"
expect_grep '"blocks":\[{"bbox":\[[0-9]*,[0-9]*,[0-9]*,[0-9]*\],"paragraphs":\[{"bbox":\[[0-9,]*\],"lines":\[0,' "$TMP/out" "JSON blocks over the lines"
expect_grep '"words":\[{"text":"This","score":0\.[0-9]*,"box":\[\[' "$TMP/out" "JSON words"
finish
