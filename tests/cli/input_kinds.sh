#!/bin/sh
# The edges of what an INPUT may be: what is not a regular file (a FIFO, a device) is refused at
# once instead of being waited on or read for ever; an @list is bounded (size, line length, no
# binary data) and may be a pipe; a folder walk names what it passes over (links to folders,
# FIFOs, folders too deep, paths too long) and joins paths without doubled slashes; a
# PPOCR_MODELS folder without models is an error, as --models is; an out-of-range --device says
# how many devices there are in words that agree. Images are 1 x 1 px: the refusals are the point.
# The runs are guarded by `timeout`: a refusal is immediate, and the guard only turns the old
# wait-for-ever into a failure instead of a hang.
. "$(dirname "$0")/lib/common.sh"

MODELS=${PPOCR_MODELS:-$SRC/models}
[ -f "$MODELS/rec.pvk" ] || { echo "FAIL: no models in $MODELS (run tools/fetch-models.sh)" >&2; exit 1; }
export PPOCR_MODELS="$MODELS"
DOT=$SRC/tests/data/bad/1x1.png
GUARD="timeout 300"

# expect_error NAME REASON DESCRIPTION: one stderr line names the input and gives the reason.
expect_error() {
    n=$(grep -c -F -- "$1: $2" "$TMP/err")
    if [ "$n" -eq 1 ]; then pass; else fail "$3: no single line '$1: $2' in stderr: $(head -c 800 "$TMP/err")"; fi
}
# expect_decoded FILE DESCRIPTION: the JSON object of exactly that file name is there.
expect_decoded() {
    n=$(grep -c -F -- "{\"file\":\"$1\",\"width\":1,\"height\":1," "$TMP/out")
    if [ "$n" -eq 1 ]; then pass; else fail "$2: $1 printed $n times: $(head -c 800 "$TMP/out")"; fi
}

# ---- fixtures -----------------------------------------------------------------------------------
mkfifo "$TMP/fifo.png"
printf '%s\n\000\000\000\n' "$DOT" >"$TMP/binary.txt"
{ head -c 5000 /dev/zero | tr '\0' a; echo; } >"$TMP/long_line.txt"
# one byte over the list limit (64 MiB), sparse: refused from its size
dd if=/dev/null of="$TMP/huge.txt" bs=1 seek=67108865 2>/dev/null
printf '%s\r\n\r\n%s\r\n' "$DOT" "$DOT" >"$TMP/crlf.txt"
mkfifo "$TMP/list.fifo"

T=$TMP/tree
mkdir -p "$T/real" "$T/deep"
cp "$DOT" "$T/a.png"
cp "$DOT" "$T/real/b.png"
ln -s "$T/real" "$T/linked"
mkfifo "$T/fifo.png"
mkfifo "$T/notes" # not an image name: not reported
# folders 1 to 64 levels below the input are read; the 65th is skipped, with one line
d=$T/deep
i=1
while [ $i -lt 64 ]; do d=$d/d; i=$((i + 1)); done
mkdir -p "$d/d"
cp "$DOT" "$d/x.png"
cp "$DOT" "$d/d/y.png"
deep65=$d/d
# a path past 4095 bytes: 17 folders of 250 characters (mkdir -p makes it one folder at a time)
long=$(head -c 250 /dev/zero | tr '\0' L)
long_path=$T
i=0
while [ $i -lt 17 ]; do long_path=$long_path/$long; i=$((i + 1)); done
mkdir -p "$long_path"
# the first folder whose path is over 4095 bytes is the one named (it holds the rest)
long_dir=$long_path
while [ ${#long_dir} -gt 4095 ]; do long_dir=${long_dir%/*}; done
long_dir=$long_dir/$long

# ---- one batch --------------------------------------------------------------------------------
# the FIFO list gets its writer in the background: a list from a pipe is waited for
(printf '%s\n' "$DOT" >"$TMP/list.fifo") &
writer=$!
expect_exit 1 "batch of refused inputs" -- $GUARD "$BIN" --format json "$DOT" /dev/null "$TMP/fifo.png" \
    @/dev/zero "@$TMP/binary.txt" "@$TMP/long_line.txt" "@$TMP/huge.txt" "@$TMP/crlf.txt" "@$TMP/list.fifo" "$T/"
kill $writer 2>/dev/null # still there only when the list was never opened (a failure above)
wait $writer
expect_error "/dev/null" "not a regular file (a character device" "a device as an image"
expect_error "$TMP/fifo.png" "not a regular file (a FIFO" "a FIFO as an image"
expect_error "@/dev/zero" "cannot read list: a character device, not a regular file or a pipe" "@/dev/zero"
expect_error "@$TMP/binary.txt" "not a list of paths: binary data" "a list with NUL bytes"
expect_error "@$TMP/long_line.txt" "line 1 is longer than the longest path (4095 bytes)" "a list line too long"
expect_error "@$TMP/huge.txt" "list too large (67108865 bytes, the limit is 67108864)" "a list over 64 MiB"
expect_error "$T/linked" "skipped (a link to a folder" "a linked subfolder"
expect_error "$T/fifo.png" "skipped (a FIFO, not a regular file)" "a FIFO in a folder"
expect_error "$deep65" "skipped (more than 64 folder levels deep)" "a folder 65 levels deep"
expect_error "$long_dir" "skipped (path longer than 4095 bytes)" "a path too long"
expect_lines 10 "$TMP/err" "one stderr line per refused or skipped input, nothing else"
# what is readable around them, each once, without doubled slashes
n=$(grep -c -F "{\"file\":\"$DOT\"," "$TMP/out")
[ "$n" -eq 4 ] && pass || fail "the image as an input, twice from the CRLF list, once from the FIFO list: $n times"
expect_decoded "$T/a.png" "an image of the folder given as tree/"
expect_decoded "$T/real/b.png" "an image of a subfolder"
expect_decoded "$d/x.png" "an image 64 levels deep"
expect_lines 7 "$TMP/out" "one JSON object per image read"
grep -q '//' "$TMP/out" "$TMP/err" && fail "a doubled slash in a path: $(grep -h '//' "$TMP/out" "$TMP/err" | head -c 300)" || pass

# ---- a list on stdin, and image bytes on stdin, still work ------------------------------------
expect_exit 0 "@- from a pipe" -- sh -c 'printf "%s\n" "$1" | $2 "$0" --format json @-' "$BIN" "$DOT" "$GUARD"
expect_decoded "$DOT" "@- from a pipe"
expect_exit 0 "- from a pipe" -- sh -c '$2 "$0" --format json - <"$1"' "$BIN" "$DOT" "$GUARD"
expect_grep '^{"file":"-","width":1,"height":1,' "$TMP/out" "- from a pipe"

# ---- PPOCR_MODELS naming a folder without models: exit 3, as --models -------------------------
expect_exit 3 "PPOCR_MODELS missing" -- env PPOCR_MODELS="$TMP/no_models" "$BIN" "$DOT"
expect_grep "no models in $TMP/no_models" "$TMP/err" "PPOCR_MODELS folder named"
expect_lines 1 "$TMP/err" "PPOCR_MODELS missing: one line"

# ---- a device number past the last: the count in words that agree -----------------------------
expect_exit 3 "--device out of range" -- "$BIN" --device 99 "$DOT"
expect_grep "there is only 1 device, number 0\|there are only [0-9]* devices, numbered 0 to" "$TMP/err" \
    "device count in words"
expect_lines 1 "$TMP/err" "--device out of range: one line"

finish
