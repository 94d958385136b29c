#!/bin/sh
# --format hocr and --format alto on the bundled sample: the ALTO valid against the 4.4 schema,
# the hOCR well-formed with the sample's words, two images on stdout as two documents one after
# the other, -o naming the files .hocr and .xml. xmllint (libxml2-utils, from tools/setup.sh) is
# required: without it the test fails rather than passing unchecked.
. "$(dirname "$0")/lib/common.sh"

S="$SRC/tests/data/sample.png"
W="$SRC/tests/data/corpus/paddleocr/en_word_1.png"
if ! command -v xmllint >/dev/null 2>&1; then
    fail "xmllint not found (Debian package libxml2-utils; tools/setup.sh installs it)"
    finish
    exit 1
fi

# hOCR: the sample, then a word image, on stdout.
expect_exit 0 "hocr" -- "$BIN" --format hocr "$S" "$W"
[ "$(grep -c '^<?xml ' "$TMP/out")" = 2 ] && pass || fail "two images did not give two hOCR documents"
awk -v dir="$TMP" '/^<\?xml /{n++} {print > (dir "/doc" n ".hocr")}' "$TMP/out"
for d in 1 2; do
    xmllint --noout "$TMP/doc$d.hocr" 2>"$TMP/lint" && pass || fail "hOCR document $d is not well-formed: $(head -c 400 "$TMP/lint")"
done
words=$(sed -n "s/.*class='ocrx_word'[^>]*>\([^<]*\)<\/span>.*/\1/p" "$TMP/doc1.hocr" | head -11 | tr '\n' ' ')
[ "$words" = "This is a lot of 12 point text to test the " ] && pass || fail "hOCR's first words: $words"
expect_grep "<div class='ocr_page' id='page_1' title='image \"$S\"; bbox 0 0 640 480; ppageno 0'>" "$TMP/doc1.hocr" "ocr_page"
expect_grep "<span class='ppocr_line' id='line_1_1' title=\"bbox [0-9]* [0-9]* [0-9]* [0-9]*; baseline -\{0,1\}[0-9.]* -\{0,1\}[0-9.]*; x_size [0-9.]*\">" "$TMP/doc1.hocr" "ppocr_line title"
expect_grep ">JOINT</span>" "$TMP/doc2.hocr" "the second image's word"

# ALTO through -o: DIR/NAME.xml, valid against the schema.
expect_exit 0 "alto -o" -- "$BIN" --format alto -o "$TMP/alto" "$S"
A="$TMP/alto/sample.png.xml"
[ -f "$A" ] && pass || fail "-o wrote no sample.png.xml: $(ls -R "$TMP/alto")"
xmllint --noout --schema "$SRC/tests/data/schemas/alto-4-4.xsd" "$A" 2>"$TMP/lint" && pass \
    || fail "ALTO does not validate: $(head -c 600 "$TMP/lint")"
strings=$(sed -n 's/.*<String [^>]*CONTENT="\([^"]*\)".*/\1/p' "$A" | head -11 | tr '\n' ' ')
[ "$strings" = "This is a lot of 12 point text to test the " ] && pass || fail "ALTO's first strings: $strings"
[ "$(grep -c '<String ' "$A")" = "$(grep -c "class='ocrx_word'" "$TMP/doc1.hocr")" ] && pass \
    || fail "ALTO and hOCR have different word counts"

finish
