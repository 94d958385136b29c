#!/bin/sh
# Names: how -o and --draw name their files and what they refuse (an empty folder name, a folder
# that cannot be made, two inputs of one output name), and file names no output may trust: bytes
# that are not UTF-8 (JSON stays valid), a newline or a terminal escape (stderr and text headers
# stay one line each, with no raw control byte), a name near NAME_MAX under -o. Needs the models
# ($PPOCR_MODELS, else SRC/models).
. "$(dirname "$0")/lib/common.sh"

WORDS=$SRC/tests/data/corpus/paddleocr
export PPOCR_MODELS="${PPOCR_MODELS:-$SRC/models}"
[ -f "$PPOCR_MODELS/rec.pvk" ] || { echo "FAIL: no models in $PPOCR_MODELS (run tools/fetch-models.sh)" >&2; exit 1; }
ESC=$(printf '\033')

# ---- empty folder names: usage errors, nothing written at the root ---------------------------------
for opt in -o --draw; do
    expect_exit 2 "$opt ''" -- "$BIN" "$opt" "" "$WORDS/en_word_1.png"
    expect_grep "the folder name is empty" "$TMP/err" "$opt '': says why"
    expect_exit 2 "$opt=" -- "$BIN" "$opt=" "$WORDS/en_word_1.png"
done

# ---- a folder that cannot be made: one line at once, no image read -----------------------------------
: >"$TMP/a_file"
for opt in -o --draw; do
    expect_exit 2 "$opt under a file" -- "$BIN" --format json "$opt" "$TMP/a_file/sub" "$WORDS/en_word_1.png" "$WORDS/en_word_2.png"
    expect_lines 1 "$TMP/err" "$opt under a file: one line, not one per image"
    expect_grep "$opt $TMP/a_file/sub: cannot create the folder" "$TMP/err" "$opt under a file: names the folder"
    [ -s "$TMP/out" ] && fail "$opt under a file: images were read" || pass
done

# ---- two inputs of one output name: the later is refused, the first's file kept; -j alike -----------
mkdir "$TMP/a" "$TMP/b"
cp "$WORDS/en_word_1.png" "$TMP/a/x.png" # JOINT
cp "$WORDS/en_word_2.png" "$TMP/b/x.png"
expect_exit 1 "same name" -- "$BIN" -j 1 --format json -o "$TMP/o1" --draw "$TMP/d1" "$TMP/a/x.png" "$TMP/b/x.png"
cp "$TMP/err" "$TMP/err1"
expect_lines 1 "$TMP/err" "same name: one line"
expect_grep "b/x.png: same output name 'x.png' as $TMP/a/x.png" "$TMP/err" "same name: names both"
expect_grep '"text":"JOINT"' "$TMP/o1/x.png.json" "same name: the first input's result is kept"
[ "$(find "$TMP/o1" "$TMP/d1" -type f | wc -l)" -eq 2 ] && pass || fail "same name: $(find "$TMP/o1" "$TMP/d1" -type f)"
expect_exit 1 "same name -j 2" -- "$BIN" -j 2 --format json -o "$TMP/o2" --draw "$TMP/d2" "$TMP/a/x.png" "$TMP/b/x.png"
diff -r "$TMP/o1" "$TMP/o2" >/dev/null && cmp -s "$TMP/err1" "$TMP/err" && pass || fail "same name: -j 2 differs from -j 1"

# ---- names that are not UTF-8, hold a newline or a terminal escape ----------------------------------
mkdir "$TMP/n"
cp "$WORDS/en_word_1.png" "$TMP/n/$(printf 'bad\377\376name.png')"
printf 'not an image' >"$TMP/n/$(printf 'new\nline.png')"
printf 'not an image' >"$TMP/n/$(printf 'esc\033[31mred.png')"
expect_exit 1 "odd names" -- "$BIN" --format json "$TMP/n"
expect_lines 1 "$TMP/out" "odd names: one JSON line"
python3 -c 'import json, sys; [json.loads(l.decode("utf-8")) for l in open(sys.argv[1], "rb")]' "$TMP/out" 2>/dev/null &&
    pass || fail "odd names: the JSON is not valid UTF-8 JSON: $(od -c "$TMP/out" | head -3)"
python3 -c 'import sys; sys.exit(0 if "bad\ufffd\ufffdname.png" in open(sys.argv[1], "rb").read().decode() else 1)' "$TMP/out" &&
    pass || fail "odd names: the bad bytes are not U+FFFD each"
expect_lines 2 "$TMP/err" "odd names: one stderr line per error"
grep -q "$ESC" "$TMP/err" && fail "odd names: an escape byte reached stderr" || pass
expect_grep 'new\\nline.png: ' "$TMP/err" "odd names: the newline shown as \\n"
expect_grep 'esc\\x1B\[31mred.png: ' "$TMP/err" "odd names: the escape shown as \\x1B"

# text mode's headers: one line each
cp "$WORDS/en_word_1.png" "$TMP/$(printf 'h\nx.png')"
expect_exit 0 "text headers" -- "$BIN" "$TMP/$(printf 'h\nx.png')" "$WORDS/en_word_1.png"
[ "$(grep -c '^==> .* <==$' "$TMP/out")" -eq 2 ] && pass || fail "text headers: not two whole header lines: $(cat "$TMP/out")"
expect_lines 5 "$TMP/out" "text headers: two headers, two lines, a blank line between"

# a name of 244 bytes: NAME.json is 249, within NAME_MAX (255), whatever the temporary name
long=$(printf '%0240d' 0).png
cp "$WORDS/en_word_1.png" "$TMP/$long"
expect_exit 0 "long name -o" -- "$BIN" --format json -o "$TMP/ol" "$TMP/$long"
[ -f "$TMP/ol/$long.json" ] && pass || fail "long name -o: no $long.json"
[ "$(find "$TMP/ol" -type f | wc -l)" -eq 1 ] && pass || fail "long name -o: stray files: $(ls -a "$TMP/ol")"

finish
