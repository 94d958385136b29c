#!/bin/sh
# The OCRmyPDF plugin (tools/ocrmypdf/ppocr_vk_ocrmypdf.py): a two-page scan (the bundled sample, a
# Chinese sign) becomes a searchable PDF whose text layer, read back by pdftotext, holds the
# sample's lines in order and the Chinese text, through OCRmyPDF's default PDF/A output; the
# sidecar text too, also on the CPU backend; a missing ppocr-vk is a clear error. ocrmypdf and
# poppler-utils come from tools/setup.sh: without them the test fails rather than passing unchecked.
. "$(dirname "$0")/lib/common.sh"

C="$SRC/tests/data/corpus"
PLUGIN="$SRC/tools/ocrmypdf/ppocr_vk_ocrmypdf.py"
PY=/usr/bin/python3 # Debian's, with ocrmypdf's modules
if ! command -v ocrmypdf >/dev/null 2>&1 || ! command -v pdftotext >/dev/null 2>&1 || ! "$PY" -c 'import img2pdf' 2>/dev/null; then
    fail "needs ocrmypdf and pdftotext (poppler-utils): run tools/setup.sh"
    finish
    exit 1
fi

gt() { awk -F'\t' -v f="$1" '$1 == f {print $6}' "$C/manifest.tsv"; }
gt tesseract/phototest.png | sed 's/ | /\n/g' > "$TMP/sample.gt"
ZH=$(gt paddleocr/word_5.jpg)
"$PY" -m img2pdf -s 300dpi -o "$TMP/scan.pdf" "$SRC/tests/data/sample.png" "$C/paddleocr/word_5.jpg"

expect_exit 0 "ocrmypdf" -- ocrmypdf --plugin "$PLUGIN" --ppocr-vk "$BIN" --sidecar "$TMP/side.txt" \
    "$TMP/scan.pdf" "$TMP/searchable.pdf"
pdftotext "$TMP/searchable.pdf" "$TMP/text.txt" && pass || fail "pdftotext cannot read the output"

# In order: each ground-truth line of the sample (letters and digits only: spacing and final
# full stops are the recogniser's) found after the one before it.
in_order() {
    rest=$(tr -cd '[:alnum:]' <"$1")
    ok=1
    while read -r line; do
        key=$(printf '%s' "$line" | tr -cd '[:alnum:]')
        case $rest in
        *"$key"*) rest=${rest#*"$key"} ;;
        *) ok=0; fail "$2: '$line' not found after the lines before it: $(head -c 600 "$1")"; break ;;
        esac
    done <"$TMP/sample.gt"
    [ "$ok" = 1 ] && pass
}
in_order "$TMP/text.txt" "text layer"
tr -d ' \n' <"$TMP/text.txt" | grep -qF "$ZH" && pass || fail "text layer lacks '$ZH': $(cat "$TMP/text.txt")"
in_order "$TMP/side.txt" "sidecar"
grep -qF "$ZH" "$TMP/side.txt" && pass || fail "sidecar lacks '$ZH': $(cat "$TMP/side.txt")"

# On the CPU backend, where the build has it: OCRmyPDF runs its OCR engines with OMP_THREAD_LIMIT=1,
# which once left half of each net's work undone (both pages misread).
if "$BIN" --list-devices 2>/dev/null | grep -q '^cpu: '; then
    expect_exit 0 "ocrmypdf, CPU backend" -- ocrmypdf --plugin "$PLUGIN" --ppocr-vk "$BIN" --ppocr-vk-arg=--device=cpu \
        --sidecar "$TMP/side_cpu.txt" "$TMP/scan.pdf" "$TMP/searchable_cpu.pdf"
    in_order "$TMP/side_cpu.txt" "sidecar, CPU backend"
    grep -qF "$ZH" "$TMP/side_cpu.txt" && pass || fail "sidecar, CPU backend, lacks '$ZH': $(cat "$TMP/side_cpu.txt")"
fi

# No ppocr-vk on the PATH and none given: a clear error, OCRmyPDF's exit status for a missing
# dependency (3).
if ! PATH=/usr/bin:/bin command -v ppocr-vk >/dev/null 2>&1; then
    expect_exit 3 "no ppocr-vk" -- env PATH=/usr/bin:/bin ocrmypdf --plugin "$PLUGIN" "$TMP/scan.pdf" "$TMP/none.pdf"
    expect_grep "ppocr-vk was not found on the PATH: give --ppocr-vk PATH" "$TMP/err" "missing ppocr-vk"
fi
finish
