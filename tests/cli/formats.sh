#!/bin/sh
# Output formats, input kinds (files, folders, stdin, @lists), -o, --draw, --shard, a bad file in
# the middle of a batch, and determinism (repeated runs and other --rec-batch-num give the same
# bytes). Small word images keep it quick on lavapipe.
. "$(dirname "$0")/lib/common.sh"

C="$SRC/tests/data/corpus/paddleocr"
mkdir -p "$TMP/in/sub"
cp "$C/en_word_1.png" "$TMP/in/b.png"
cp "$C/en_word_3.png" "$TMP/in/a.png"
cp "$C/en_word_4.png" "$TMP/in/sub/c.png"
echo "not an image" > "$TMP/in/notes.txt"

# Plain text: one line per text line.
expect_exit 0 "text" -- "$BIN" "$TMP/in/b.png"
expect_grep "^JOINT$" "$TMP/out" "text output"
expect_lines 1 "$TMP/out" "one text line"

# --boxes: four corners and a score before the text.
expect_exit 0 "--boxes" -- "$BIN" --boxes "$TMP/in/b.png"
expect_grep "^[0-9]*,[0-9]* [0-9]*,[0-9]* [0-9]*,[0-9]* [0-9]*,[0-9]*	0\.[0-9]*	JOINT$" "$TMP/out" "--boxes line"

# A folder: images found recursively, in sorted order, other files ignored; JSON Lines.
expect_exit 0 "folder json" -- "$BIN" --format json "$TMP/in"
expect_lines 3 "$TMP/out" "one JSON object per image"
order=$(sed 's/.*"file":"\([^"]*\)".*/\1/' "$TMP/out" | tr '\n' ' ')
[ "$order" = "$TMP/in/a.png $TMP/in/b.png $TMP/in/sub/c.png " ] && pass || fail "folder order: $order"
expect_grep '"width":[0-9]*,"height":[0-9]*,"lines":\[{"text":"154","score":0\.[0-9]*,"box":\[\[' "$TMP/out" "JSON fields"
cp "$TMP/out" "$TMP/folder.jsonl"

# TSV: a header, then one row per line with 8 coordinates.
expect_exit 0 "tsv" -- "$BIN" --format tsv "$TMP/in/a.png" "$TMP/in/b.png"
expect_lines 3 "$TMP/out" "TSV header + 2 rows"
expect_grep "^file	line	score	x1	y1	x2	y2	x3	y3	x4	y4	text$" "$TMP/out" "TSV header"
cols=$(sed -n 2p "$TMP/out" | awk -F'\t' '{print NF}')
[ "$cols" = 12 ] && pass || fail "TSV row has $cols columns"

# stdin and @list.
expect_exit 0 "stdin" -- sh -c "\"$BIN\" - < \"$TMP/in/a.png\""
expect_grep "^154$" "$TMP/out" "image bytes on stdin"
printf '%s\n\n%s\n' "$TMP/in/a.png" "$TMP/in/b.png" > "$TMP/list.txt"
expect_exit 0 "@list" -- "$BIN" "@$TMP/list.txt"
expect_grep "JOINT" "$TMP/out" "@list second image"
expect_grep "154" "$TMP/out" "@list first image"

# --shard: the slices, concatenated, are the whole run.
: > "$TMP/shards.jsonl"
for k in 1 2 3; do
    "$BIN" --format json --shard "$k/3" "$TMP/in" >> "$TMP/shards.jsonl" 2>/dev/null || fail "shard $k/3"
done
cmp -s "$TMP/shards.jsonl" "$TMP/folder.jsonl" && pass || fail "--shard slices differ from the whole run"

# -o: one file per image, named after its path under the input folder, no temporary left over.
expect_exit 0 "-o" -- "$BIN" --format json -o "$TMP/outdir" "$TMP/in"
[ -f "$TMP/outdir/a.png.json" ] && [ -f "$TMP/outdir/sub/c.png.json" ] && pass || fail "-o files: $(ls -R "$TMP/outdir")"
[ -z "$(find "$TMP/outdir" -name '*.tmp*')" ] && pass || fail "-o left a temporary file"
[ ! -s "$TMP/out" ] && pass || fail "-o still wrote results to stdout"

# --draw: a PNG per image.
expect_exit 0 "--draw" -- "$BIN" --draw "$TMP/drawn" "$TMP/in/b.png"
[ -s "$TMP/drawn/b.png.png" ] && pass || fail "--draw wrote no PNG"
expect_exit 0 "--draw output decodes" -- "$BIN" "$TMP/drawn/b.png.png"

# A bad file in the middle: reported on one line, the others still read, exit 1.
cp "$TMP/in/notes.txt" "$TMP/in/broken.png"
expect_exit 1 "bad file in a batch" -- "$BIN" "$TMP/in/a.png" "$TMP/in/broken.png" "$TMP/in/b.png"
expect_grep "^154$" "$TMP/out" "image before the bad one"
expect_grep "^JOINT$" "$TMP/out" "image after the bad one"
expect_grep "broken.png" "$TMP/err" "the bad file is named"
expect_lines 1 "$TMP/err" "one line for the bad file"

# Determinism: the same bytes twice, and with another --rec-batch-num.
S="$SRC/tests/data/sample.png"
"$BIN" --format json "$S" > "$TMP/r1.json" 2>/dev/null || fail "determinism run 1"
"$BIN" --format json "$S" > "$TMP/r2.json" 2>/dev/null || fail "determinism run 2"
"$BIN" --format json --rec-batch-num 1 "$S" > "$TMP/r3.json" 2>/dev/null || fail "determinism run 3"
cmp -s "$TMP/r1.json" "$TMP/r2.json" && pass || fail "two runs differ"
cmp -s "$TMP/r1.json" "$TMP/r3.json" && pass || fail "--rec-batch-num 1 differs from the default"
expect_grep '"lines":\[{"text":"This is a lot of 12 point text to test the"' "$TMP/r1.json" "sample's first line"

finish
