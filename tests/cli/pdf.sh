#!/bin/sh
# PDF input: every page read through pdftoppm, one result per page with its number (JSON "page",
# TSV "FILE#N", text headers, -o NAME-pN files), PDFs found in a folder walk and kept in order with
# -j, --shard over pages, --pdf-dpi, a file name that looks like an option; poppler-utils missing,
# a damaged PDF, an encrypted one, a page pdftoppm fails on and a PDF on stdin are one line each
# while the other inputs are still read; no temporary folder is left behind, also after a second
# SIGINT in the middle of a page. The PDFs are made here from the
# project's images with img2pdf (python3-img2pdf, which ocrmypdf brings; tools/setup.sh installs
# both): without them the test fails rather than passing unchecked. Small pages keep it quick.
. "$(dirname "$0")/lib/common.sh"

C="$SRC/tests/data/corpus"
PY=""
for p in /usr/bin/python3 python3; do
    if "$p" -c 'import img2pdf, pikepdf' 2>/dev/null; then PY=$p; break; fi
done
if [ -z "$PY" ] || ! command -v pdftoppm >/dev/null 2>&1 || ! command -v pdfinfo >/dev/null 2>&1; then
    fail "needs pdftoppm and pdfinfo (poppler-utils) and python3-img2pdf (ocrmypdf): run tools/setup.sh"
    finish
    exit 1
fi
# ppocr-vk's scratch folders go here, so that the end can check that none is left
export TMPDIR="$TMP/scratch"
mkdir -p "$TMPDIR"

gt() { awk -F'\t' -v f="$1" '$1 == f {print $6}' "$C/manifest.tsv"; }
FIRST=$(gt tesseract/phototest.png | sed 's/ | .*//')
ZH=$(gt paddleocr/word_5.jpg)
# At 300 dpi in the PDF, pdftoppm's default 300 dpi gives each image back at its own size.
mkpdf() { out=$1; shift; "$PY" -m img2pdf -s 300dpi -o "$out" "$@"; }
mkpdf "$TMP/two.pdf" "$SRC/tests/data/sample.png" "$C/paddleocr/word_5.jpg"
mkpdf "$TMP/small.pdf" "$C/paddleocr/en_word_4.png" "$C/paddleocr/en_word_1.png"

# Two pages, two JSON objects, in page order, with the page's number and text.
expect_exit 0 "json" -- "$BIN" --format json "$TMP/two.pdf"
expect_lines 2 "$TMP/out" "one JSON object per page"
sed -n 1p "$TMP/out" > "$TMP/p1.json"
sed -n 2p "$TMP/out" > "$TMP/p2.json"
expect_grep "^{\"file\":\"$TMP/two.pdf\",\"page\":1,\"width\":640,\"height\":480," "$TMP/p1.json" "page 1's fields"
expect_grep "\"lines\":\[{\"text\":\"$FIRST\"" "$TMP/p1.json" "page 1's first line"
expect_grep "^{\"file\":\"$TMP/two.pdf\",\"page\":2," "$TMP/p2.json" "page 2's fields"
expect_grep "\"text\":\"$ZH\"" "$TMP/p2.json" "page 2's Chinese"

# A folder: PDFs are walked too (any case of .pdf), in name order; the pages keep their order
# with two engines; TSV names a page FILE#N.
mkdir -p "$TMP/in/sub"
cp "$C/paddleocr/en_word_3.png" "$TMP/in/a.png"
cp "$TMP/small.pdf" "$TMP/in/sub/b.PDF"
expect_exit 0 "folder tsv -j 2" -- "$BIN" -j 2 --format tsv "$TMP/in"
cut -f1,12 "$TMP/out" > "$TMP/tsv"
printf 'file\ttext\n%s\t154\n%s#1\t197\n%s#2\tJOINT\n' "$TMP/in/a.png" "$TMP/in/sub/b.PDF" "$TMP/in/sub/b.PDF" > "$TMP/want"
cmp -s "$TMP/tsv" "$TMP/want" && pass || fail "folder TSV: $(cat "$TMP/tsv")"

# Text: a header per page.
expect_exit 0 "text" -- "$BIN" "$TMP/small.pdf"
printf '==> %s page 1 <==\n197\n\n==> %s page 2 <==\nJOINT\n' "$TMP/small.pdf" "$TMP/small.pdf" > "$TMP/want"
cmp -s "$TMP/out" "$TMP/want" && pass || fail "text headers: $(cat "$TMP/out")"

# -o: NAME-pN files, for a name that begins with '-' and holds a space and quotes; --shard slices
# pages (the second half of two is page 2); --pdf-dpi 150 halves the 300-dpi page.
odd="-s p'a \"c\".pdf"
cp "$TMP/small.pdf" "$TMP/$odd"
expect_exit 0 "-o, odd name, --shard, --pdf-dpi" -- \
    sh -c 'cd "$1" && "$2" --format json --shard 2/2 --pdf-dpi 150 -o odir -- "$3"' sh "$TMP" "$BIN" "$odd"
[ "$(ls "$TMP/odir")" = "$odd-p2.json" ] && pass || fail "-o files: $(ls "$TMP/odir")"
expect_grep '"page":2,"width":57,"height":17,' "$TMP/odir/$odd-p2.json" "page 2 at 150 dpi (114 x 34 at 300)"

# Without poppler-utils: one line naming the package. A PDF on stdin is refused with a reason. The
# image after them is still read.
expect_exit 1 "no pdftoppm, stdin" -- \
    sh -c 'PATH=/nonexistent "$1" "$2" - "$3" < "$2"' sh "$BIN" "$TMP/small.pdf" "$C/paddleocr/en_word_3.png"
expect_grep "^ppocr-vk: $TMP/small.pdf: reading PDF needs pdftoppm (Debian package poppler-utils)$" "$TMP/err" "missing pdftoppm"
expect_grep "^ppocr-vk: stdin: a PDF is read from its file, not from stdin: give its path$" "$TMP/err" "PDF on stdin"
expect_lines 2 "$TMP/err" "one line each"
expect_grep "^154$" "$TMP/out" "the image after them"

# A damaged PDF, an encrypted one (a user password), and pages pdftoppm fails on (a stand-in
# that fails as poppler does): one line each, naming the file, and the page where it is one.
printf '%%PDF-1.4\nnot a PDF after all\n' > "$TMP/broken.pdf"
"$PY" -c 'import sys, pikepdf; pikepdf.Pdf.open(sys.argv[1]).save(sys.argv[2], encryption=pikepdf.Encryption(owner="o", user="u"))' \
    "$TMP/small.pdf" "$TMP/locked.pdf"
mkdir -p "$TMP/bin"
printf '#!/bin/sh\necho "Syntax Error: stand-in failure" >&2\nexit 1\n' > "$TMP/bin/pdftoppm"
chmod +x "$TMP/bin/pdftoppm"
expect_exit 1 "bad PDFs" -- env PATH="$TMP/bin:$PATH" "$BIN" "$TMP/broken.pdf" "$TMP/locked.pdf" "$TMP/small.pdf" \
    "$C/paddleocr/en_word_3.png"
expect_grep "^ppocr-vk: $TMP/broken.pdf: cannot read the PDF: Syntax Error: " "$TMP/err" "damaged PDF"
expect_grep "^ppocr-vk: $TMP/locked.pdf: cannot read the PDF: it is encrypted and needs a password$" "$TMP/err" "encrypted PDF"
expect_grep "^ppocr-vk: $TMP/small.pdf page 2: cannot rasterise the page: Syntax Error: stand-in failure$" "$TMP/err" "page pdftoppm fails on"
expect_lines 4 "$TMP/err" "one line each"
expect_grep "^154$" "$TMP/out" "the image after them"

# A second SIGINT while a page is being rendered (a stand-in pdftoppm that has begun its page and
# then waits): the tool is killed and its scratch folder removed, the process ends by the signal.
printf '#!/bin/sh\nfor a; do root=$a; done\nprintf P6 >"$root.ppm"\nexec sleep 600\n' > "$TMP/bin/pdftoppm"
env PATH="$TMP/bin:$PATH" "$BIN" "$TMP/small.pdf" >"$TMP/out" 2>"$TMP/err" &
pid=$!
n=0
child=""
while [ -z "$child" ] && [ $n -lt 1200 ]; do
    child=$(ps -o pid= -o args= --ppid $pid 2>/dev/null | awk '/sleep 600/ {print $1}')
    [ -z "$child" ] && sleep 0.1
    n=$((n + 1))
done
[ -n "$child" ] && pass || fail "second SIGINT while rendering: the stand-in pdftoppm never ran"
kill -INT $pid
n=0 # until the first is taken (two at once would be one)
while [ $n -lt 100 ] && grep -Eq '^(SigPnd|ShdPnd):.*[1-9a-f]' /proc/$pid/status 2>/dev/null; do sleep 0.05; n=$((n + 1)); done
kill -INT $pid
wait $pid
rc=$?
[ "$rc" -eq 130 ] && pass || fail "second SIGINT while rendering: exit $rc, expected 130"
if [ -n "$child" ] && kill -0 "$child" 2>/dev/null; then
    fail "second SIGINT while rendering: pdftoppm still runs"
    kill "$child"
else
    pass
fi

[ -z "$(ls -A "$TMPDIR")" ] && pass || fail "temporary folders left: $(ls -A "$TMPDIR")"
finish
