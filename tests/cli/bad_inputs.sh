#!/bin/sh
# Bad inputs end to end: every failure is one stderr line naming the input and the reason, the
# other inputs of the batch are still processed and printed, and the exit status says what
# happened (1: some inputs failed; 3: no usable device or models). Needs the models
# ($PPOCR_MODELS, else SRC/models). Fixtures: tests/data/bad (made by its make.py), the decoder
# fixtures of tests/data/images, and files made here in $TMP.
. "$(dirname "$0")/lib/common.sh"

IMG=$SRC/tests/data/images
BAD=$SRC/tests/data/bad
WORDS=$SRC/tests/data/corpus/paddleocr
MODELS=${PPOCR_MODELS:-$SRC/models}
for m in det cls rec; do
    [ -f "$MODELS/$m.pvk" ] || { echo "FAIL: $MODELS/$m.pvk missing (run tools/fetch-models.sh)" >&2; exit 1; }
done
export PPOCR_MODELS="$MODELS"

# expect_error NAME REASON DESCRIPTION: one stderr line names the input and gives the reason.
expect_error() {
    n=$(grep -c -- "^ppocr-vk: .*$1.*$2" "$TMP/err")
    if [ "$n" -eq 1 ]; then pass; else fail "$3: no single line with '$1' and '$2' in stderr: $(head -c 600 "$TMP/err")"; fi
}

# expect_text NAME DESCRIPTION: the JSON object of that input is there with at least one line.
expect_text() {
    if grep -q -- "^{\"file\":\"[^\"]*$1\".*\"lines\":\[{\"text\":\"[^\"]" "$TMP/out"; then pass
    else fail "$2: no recognised text for $1 in stdout: $(head -c 600 "$TMP/out")"; fi
}

# expect_size NAME WIDTH HEIGHT DESCRIPTION: that input was decoded to WIDTH x HEIGHT.
expect_size() {
    expect_grep "^{\"file\":\"[^\"]*$1\",\"width\":$2,\"height\":$3," "$TMP/out" "$4"
}

# ---- fixtures made at test time -------------------------------------------------------------
size() { wc -c <"$1" | tr -d ' '; }
: >"$TMP/zero.png"
echo "this is not an image" >"$TMP/text.png"
head -c "$(($(size "$WORDS/en_word_1.png") / 2))" "$WORDS/en_word_1.png" >"$TMP/cut.png"
head -c "$(($(size "$WORDS/word_2.jpg") / 2))" "$WORDS/word_2.jpg" >"$TMP/cut.jpg"
# IHDR width (bytes 16-19) set to 0
cp "$WORDS/en_word_1.png" "$TMP/zero_width.png"
printf '\000\000\000\000' | dd of="$TMP/zero_width.png" bs=1 seek=16 conv=notrunc 2>/dev/null
# a JPEG whose SOI is followed by garbage instead of markers
{ printf '\377\330\377'; head -c 200 /dev/zero; } >"$TMP/garbage_header.jpg"
mkdir "$TMP/no_images"
echo "notes" >"$TMP/no_images/readme.txt"

# ---- one batch: bad files between good ones ---------------------------------------------------
# The batch runs under a memory bound: `ulimit -v` where it works (not with AddressSanitizer,
# which reserves terabytes of address space), else ASan's own RSS limit. The 20000x20000 PNG
# (1.2 GB of pixels) must be refused from its header, not by running out of memory; the
# 10000x10000 one (the largest the decoder accepts) is read, scaled down to the engine's 16
# megapixels, within the bound (2 GB of address space: the decode peaks at 0.7 GB resident, the
# Vulkan driver reserves the rest), and the images after it are still processed.
LIMIT_KB=2000000
if (ulimit -v $LIMIT_KB && "$BIN" --version) >/dev/null 2>&1; then
    bound="ulimit -v $LIMIT_KB"
else
    bound=":"
    # AddressSanitizer keeps freed pages and adds shadow memory: the 10000x10000 decode and its
    # scaled-down copy peak at about 2.5 GB under it, against 0.7 GB in a release build.
    export ASAN_OPTIONS="${ASAN_OPTIONS:-}:hard_rss_limit_mb=3000"
fi
expect_exit 1 "batch with bad inputs" -- sh -c "$bound && exec \"\$0\" \"\$@\"" "$BIN" --format json \
    "$WORDS/en_word_1.png" \
    "$TMP/no_such_file.png" "$TMP/zero.png" "$TMP/text.png" \
    "$WORDS/en_word_2.png" \
    "$TMP/cut.png" "$TMP/cut.jpg" "$TMP/zero_width.png" "$TMP/garbage_header.jpg" "$TMP/no_images" \
    "$BAD/20000x20000.png" "$BAD/10000x10000.png" \
    "$BAD/1x1.png" "$BAD/1x5000.png" "$BAD/5000x1.png" \
    "$IMG/gray16.png" "$IMG/graya8.png" "$IMG/quad_cmyk.jpg" "$IMG/quad_progressive.jpg" \
    "$IMG/two_frames.gif" "$IMG/quad_exif6.jpg" \
    "$WORDS/en_word_1.png"
expect_error "no_such_file.png" "no such file" "missing file"
expect_error "zero.png" "empty file" "zero-byte file"
expect_error "text.png" "not an image" "text file named .png"
expect_error "cut.png" "truncated PNG" "truncated PNG"
expect_error "cut.jpg" "truncated JPEG" "truncated JPEG"
expect_error "zero_width.png" "corrupt PNG" "PNG header with width 0"
expect_error "garbage_header.jpg" "JPEG" "JPEG without markers"
expect_error "no_images" "directory holds no images" "directory without images"
expect_error "20000x20000.png" "image too large (20000x20000" "20000x20000 refused from its header"
expect_lines 9 "$TMP/err" "one stderr line per bad input, nothing else"
# the good inputs around and after the bad ones
expect_text "en_word_1.png" "first image"
expect_text "en_word_2.png" "image between bad ones"
n=$(grep -c '^{"file":"[^"]*en_word_1.png".*"lines":\[{"text":"' "$TMP/out")
[ "$n" -eq 2 ] && pass || fail "last image of the batch: en_word_1.png printed $n times, expected 2"
expect_size "1x1.png" 1 1 "1x1 decoded"
expect_size "1x5000.png" 1 5000 "1x5000 decoded"
expect_size "5000x1.png" 5000 1 "5000x1 decoded"
expect_size "gray16.png" 7 5 "16-bit gray PNG decoded"
expect_size "graya8.png" 7 5 "gray + alpha PNG decoded"
expect_size "quad_cmyk.jpg" 32 24 "CMYK JPEG decoded"
expect_size "quad_progressive.jpg" 32 24 "progressive JPEG decoded"
expect_size "two_frames.gif" 7 5 "multi-frame GIF: first frame decoded"
# stored 32x24 with EXIF orientation 6: turned to 24x32, as cv2.imread does
expect_size "quad_exif6.jpg" 24 32 "EXIF orientation applied"
expect_size "10000x10000.png" 10000 10000 "10000x10000 read within the memory bound, boxes in its own pixels"
expect_lines 13 "$TMP/out" "one JSON object per decoded image"

# ---- a file the process may not read ----------------------------------------------------------
# Root reads anything: as root, the run loses CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (setpriv),
# so that mode 000 means what it means for everyone else.
cp "$WORDS/en_word_2.png" "$TMP/locked.png"
chmod 000 "$TMP/locked.png"
as_user=""
if [ "$(id -u)" -eq 0 ]; then
    if command -v setpriv >/dev/null 2>&1; then
        as_user="setpriv --inh-caps=-dac_override,-dac_read_search --bounding-set=-dac_override,-dac_read_search --"
    else
        as_user=skip
    fi
fi
if [ "$as_user" = skip ]; then
    echo "SKIP: unreadable file (running as root without setpriv)" >&2
else
    # and in a folder: an unreadable subfolder and a dangling link named .png are reported too
    mkdir -p "$TMP/tree/locked"
    cp "$WORDS/en_word_2.png" "$TMP/tree/a.png"
    cp "$WORDS/en_word_1.png" "$TMP/tree/locked/b.png"
    chmod 000 "$TMP/tree/locked"
    ln -s "$TMP/nowhere.png" "$TMP/tree/gone.png"
    expect_exit 1 "unreadable file and folder" -- $as_user "$BIN" --format json "$TMP/locked.png" "$TMP/tree" \
        "$WORDS/en_word_1.png"
    expect_error "locked.png" "permission denied" "unreadable file"
    expect_error "tree/locked" "cannot open directory: Permission denied" "unreadable subfolder"
    expect_error "tree/gone.png" "no such file" "dangling link in a folder"
    expect_lines 3 "$TMP/err" "unreadable file and folder: one line each"
    expect_text "a.png" "image of the folder"
    expect_text "en_word_1.png" "image after the unreadable ones"
    chmod 755 "$TMP/tree/locked"
fi

# ---- image bytes on stdin ---------------------------------------------------------------------
expect_exit 1 "garbage on stdin" -- sh -c 'echo garbage | "$0" --format json - "$1"' "$BIN" "$WORDS/en_word_2.png"
expect_error "stdin" "not an image" "garbage on stdin"
expect_text "en_word_2.png" "image after stdin"

# ---- models: missing, truncated, foreign, wrong kind -> exit 3, one line ----------------------
# expect_model_error DESCRIPTION REASON: run with --models $TMP/m, exit 3, one line, the reason.
expect_model_error() {
    expect_exit 3 "$1" -- "$BIN" --models "$TMP/m" "$WORDS/en_word_1.png"
    expect_lines 1 "$TMP/err" "$1: one line"
    expect_grep "$2" "$TMP/err" "$1: reason"
    [ -s "$TMP/out" ] && fail "$1: printed output" || pass
}
models_dir() { # fresh $TMP/m with links to the good models
    rm -rf "$TMP/m" && mkdir "$TMP/m"
    for m in det cls rec; do ln -s "$MODELS/$m.pvk" "$TMP/m/$m.pvk"; done
}
models_dir; rm "$TMP/m/det.pvk"
expect_model_error "no det.pvk" "no models in"
models_dir; rm "$TMP/m/rec.pvk"
expect_model_error "no rec.pvk" "rec.pvk"
models_dir; rm "$TMP/m/det.pvk"; head -c 100000 "$MODELS/det.pvk" >"$TMP/m/det.pvk"
expect_model_error "truncated det.pvk" "det.pvk: file is 100000 bytes"
models_dir; rm "$TMP/m/rec.pvk"; head -c 4096 "$MODELS/rec.pvk" >"$TMP/m/rec.pvk"
expect_model_error "truncated rec.pvk" "rec.pvk: file is 4096 bytes"
models_dir; rm "$TMP/m/cls.pvk"; cp "$WORDS/en_word_1.png" "$TMP/m/cls.pvk"
expect_model_error "foreign cls.pvk (a PNG)" "cls.pvk: not a ppocr-vk model"
models_dir; rm "$TMP/m/rec.pvk"; : >"$TMP/m/rec.pvk"
expect_model_error "empty rec.pvk" "rec.pvk: empty"
models_dir; rm "$TMP/m/rec.pvk"; ln -s "$MODELS/cls.pvk" "$TMP/m/rec.pvk"
expect_model_error "classifier given as rec.pvk" "not a detector, classifier and recogniser"
# one flipped byte in the middle of the weights: the checksum catches it
models_dir; rm "$TMP/m/det.pvk"; cp "$MODELS/det.pvk" "$TMP/m/det.pvk"
printf 'X' | dd of="$TMP/m/det.pvk" bs=1 seek=$(($(size "$MODELS/det.pvk") / 2)) conv=notrunc 2>/dev/null
expect_model_error "corrupt det.pvk" "det.pvk: checksum mismatch"

# ---- a dictionary that does not match the recogniser: the converter refuses it ---------------
# (the engine's own check of a rec.pvk whose dictionary was altered afterwards is
# tests/ocr/test_engine_model_checks.c: making such a file needs the checksum rewritten)
CONVERT=$(dirname "$BIN")/ppocr-convert
ONNX=$MODELS/ch_PP-OCRv4_rec_infer.onnx
if [ -x "$CONVERT" ] && [ -f "$ONNX" ] && [ -f "$MODELS/ppocr_keys_v1.txt" ]; then
    head -n 100 "$MODELS/ppocr_keys_v1.txt" >"$TMP/short_dict.txt"
    expect_exit 1 "converter, dictionary too short" -- "$CONVERT" --kind rec --dict "$TMP/short_dict.txt" "$ONNX" "$TMP/rec_short.pvk"
    expect_grep "dictionary gives" "$TMP/err" "converter names the dictionary mismatch"
    [ -e "$TMP/rec_short.pvk" ] && fail "converter wrote a model with a wrong dictionary" || pass
    # the file has no newline at its end: the extra entry starts a line of its own
    { cat "$MODELS/ppocr_keys_v1.txt"; printf '\nextra\n'; } >"$TMP/long_dict.txt"
    expect_exit 1 "converter, dictionary one entry too long" -- "$CONVERT" --kind rec --dict "$TMP/long_dict.txt" "$ONNX" "$TMP/rec_long.pvk"
    expect_grep "dictionary gives" "$TMP/err" "converter names the off-by-one dictionary"
else
    echo "SKIP: converter dictionary check ($CONVERT or $ONNX missing)" >&2
fi

# ---- no Vulkan device: exit 3, one line (no validation layer: the loader adds its own lines) --
expect_exit 3 "no Vulkan driver" -- env -u PPOCR_VK_VALIDATE VK_ICD_FILENAMES=/dev/null VK_DRIVER_FILES=/dev/null \
    "$BIN" --device vulkan "$WORDS/en_word_1.png"
expect_lines 1 "$TMP/err" "no driver: one line"
[ -s "$TMP/out" ] && fail "no driver: printed output" || pass

# ---- device memory exhausted (pool cap) on one image: a clean error, the next one still runs ---
# fp32 weights (about 17 MB) + the 640x480 page's detection activations (about 25 MB) are over a
# 32 MB cap; a word image fits.
expect_exit 1 "device out of memory" -- env PPOCR_VK_POOL_CAP=32000000 "$BIN" --device vulkan --fp32 --format json \
    "$SRC/tests/data/corpus/tesseract/phototest.png" "$WORDS/en_word_1.png"
expect_error "phototest.png" "cap of 32000000 bytes" "device out of memory named"
expect_lines 1 "$TMP/err" "device out of memory: one line"
expect_text "en_word_1.png" "image after the out-of-memory one"

finish
