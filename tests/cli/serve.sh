#!/bin/sh
# --serve, the long-running mode, on the CPU backend: one JSON line per request, in request order
# with one engine and with three; a path request answers exactly what --format json prints for the
# file, and the same image sent as base64 the same; per-request options; every kind of bad request
# answered with an error object while the process stays up; an answer written before the next
# request is even sent (a client waiting on it); a PDF by its path, one object with its pages;
# the end of input and SIGTERM end it with status 0; usage errors; a closed stdout. Small word
# images keep it quick.
. "$(dirname "$0")/lib/common.sh"

C="$SRC/tests/data/corpus/paddleocr"
SAMPLE="$SRC/tests/data/sample.png"
W1="$C/en_word_1.png"
W2="$C/en_word_2.png"
set -- --device cpu
B64=$(base64 -w0 "$W1")

# The reference answers: --format json of each file.
"$BIN" "$@" --format json "$W1" >"$TMP/w1.json" 2>"$TMP/err" || fail "--format json of en_word_1: $(cat "$TMP/err")"
"$BIN" "$@" --format json "$W2" >"$TMP/w2.json" 2>"$TMP/err" || fail "--format json of en_word_2: $(cat "$TMP/err")"

# Paths, blank lines (no request), JSON requests with ids, base64 bytes named as the file.
{
    echo "$W1"
    echo ""
    echo "{\"path\":\"$W2\"}"
    echo "   "
    echo "{\"id\":\"b64\",\"image\":\"$B64\",\"name\":\"$W1\"}"
    echo "{\"id\":9,\"image\":\"data:image/png;base64,$B64\"}"
} >"$TMP/requests"
expect_exit 0 "four requests" -- "$BIN" "$@" --serve <"$TMP/requests"
expect_lines 4 "$TMP/out" "one answer per request, none for blank lines"
sed -n 1p "$TMP/out" | cmp -s - "$TMP/w1.json" && pass || fail "a path's answer differs from --format json: $(sed -n 1p "$TMP/out" | head -c 300)"
sed -n 2p "$TMP/out" | cmp -s - "$TMP/w2.json" && pass || fail "a {\"path\"} answer differs from --format json"
sed -n 3p "$TMP/out" | sed 's/^{"id":"b64",/{/' | cmp -s - "$TMP/w1.json" && pass ||
    fail "base64 bytes named as the file do not give the file's answer: $(sed -n 3p "$TMP/out" | head -c 300)"
expect_grep '^{"id":9,"file":"-","width":' "$TMP/out" "a data URL's answer, its id first, file \"-\""

# Per-request options: a drop score above every line's score leaves no line; the next request,
# without it, has its lines again (an option holds for its own request only).
printf '%s\n' "{\"id\":1,\"path\":\"$SAMPLE\",\"drop_score\":1}" "{\"id\":2,\"path\":\"$SAMPLE\"}" \
    "{\"id\":3,\"path\":\"$SAMPLE\",\"det_limit_side_len\":64,\"use_cls\":false}" >"$TMP/requests"
expect_exit 0 "options" -- "$BIN" "$@" --serve <"$TMP/requests"
expect_grep '^{"id":1,.*"lines":\[\],' "$TMP/out" "drop_score 1 leaves no line"
expect_grep '^{"id":2,.*"text":"This is a lot of 12 point text to test the"' "$TMP/out" "the next request has its lines"
expect_lines 3 "$TMP/out" "three answers"

# Bad requests: each answered with its error, in order, and the good one after them still read.
{
    echo '{"id":1,"path":'
    echo '{"id":2,"path":"/no/such/file.png"}'
    echo '{"id":3,"image":"not base64!"}'
    echo '{"id":4,"path":"x.png","drop_scor":0.5}'
    echo '{"id":5,"path":"x.png","drop_score":"high"}'
    echo '{"id":6,"path":"x.png","det_db_thresh":0.2}'
    echo "{\"id\":7,\"path\":\"$W1\",\"drop_score\":2}"
    echo '{"id":8}'
    echo '{"id":[8],"path":"x.png"}'
    echo '[1,2]'
    echo "{\"id\":11,\"image\":\"$(printf 'not an image' | base64 -w0)\"}"
    echo "{\"id\":12,\"path\":\"$W1\"}"
} >"$TMP/requests"
expect_exit 0 "bad requests" -- "$BIN" "$@" --serve <"$TMP/requests"
expect_lines 12 "$TMP/out" "one answer per bad request"
expect_grep '^{"file":null,"error":"not a JSON request: line 1, column' "$TMP/out" "malformed JSON"
expect_grep '^{"id":2,"file":"/no/such/file.png","error":".*no such file' "$TMP/out" "a missing file"
expect_grep '^{"id":3,"file":null,"error":"\\"image\\": base64: not a base64 character' "$TMP/out" "bad base64"
expect_grep '^{"id":4,"file":null,"error":"unknown member \\"drop_scor\\""' "$TMP/out" "a misspelt option"
expect_grep '^{"id":5,.*"error":"\\"drop_score\\" must be a number"' "$TMP/out" "an option of the wrong type"
expect_grep '^{"id":6,.*"error":"\\"det_db_thresh\\" is fixed' "$TMP/out" "det_db_thresh per request"
expect_grep '^{"id":7,.*"error":"drop_score 2 is not within 0 to 1"' "$TMP/out" "an option out of range"
expect_grep '^{"id":8,"file":null,"error":"a request gives either' "$TMP/out" "neither path nor image"
expect_grep '^{"file":null,"error":"\\"id\\" must be a string' "$TMP/out" "an id of the wrong type"
expect_grep '^{"file":"\[1,2\]","error":' "$TMP/out" "a line that is not an object is a path"
expect_grep '^{"id":11,"file":"-","error":"-: ' "$TMP/out" "bytes that are no image"
sed -n 12p "$TMP/out" | sed 's/^{"id":12,/{/' | cmp -s - "$TMP/w1.json" && pass || fail "the good request after the bad ones"

# Three engines: the same answers in the same order as one.
: >"$TMP/requests"
for i in 1 2 3 4 5 6 7 8; do
    echo "{\"id\":$i,\"path\":\"$([ $((i % 2)) -eq 0 ] && echo "$W1" || echo "$W2")\"}" >>"$TMP/requests"
done
echo '{"id":9,"path":"/missing.png"}' >>"$TMP/requests"
expect_exit 0 "-j 1" -- "$BIN" "$@" --serve -j 1 <"$TMP/requests"
mv "$TMP/out" "$TMP/one.out"
expect_exit 0 "-j 3" -- "$BIN" "$@" --serve -j 3 <"$TMP/requests"
cmp -s "$TMP/one.out" "$TMP/out" && pass || fail "--serve -j 3 answers differ from -j 1"
expect_lines 9 "$TMP/out" "nine answers with three engines"

# A client that waits for each answer before it sends the next request: the answer comes while
# stdin is still open; SIGTERM then ends the process cleanly.
mkfifo "$TMP/fifo"
"$BIN" "$@" --serve <"$TMP/fifo" >"$TMP/live.out" 2>"$TMP/live.err" &
pid=$!
exec 3>"$TMP/fifo"
echo "{\"id\":\"live\",\"path\":\"$W1\"}" >&3
i=0
while [ "$(wc -l <"$TMP/live.out")" -lt 1 ] && [ $i -lt 600 ]; do
    sleep 0.1
    i=$((i + 1))
done
expect_grep '^{"id":"live",' "$TMP/live.out" "an answer written while stdin stays open"
kill -TERM $pid
wait $pid
rc=$?
exec 3>&-
[ "$rc" -eq 0 ] && pass || fail "SIGTERM: exit $rc, expected 0; stderr: $(cat "$TMP/live.err")"
expect_lines 1 "$TMP/live.out" "nothing more after SIGTERM"

# A PDF by its path: one answer, its pages inside (img2pdf comes with ocrmypdf, which
# tools/setup.sh installs).
PY=""
for p in /usr/bin/python3 python3; do
    if "$p" -c 'import img2pdf' 2>/dev/null; then PY=$p; break; fi
done
if [ -n "$PY" ] && command -v pdftoppm >/dev/null 2>&1; then
    "$PY" -m img2pdf -s 300dpi -o "$TMP/two.pdf" "$W1" "$W2"
    echo "{\"id\":\"doc\",\"path\":\"$TMP/two.pdf\"}" | "$BIN" "$@" --serve >"$TMP/out" 2>"$TMP/err"
    expect_lines 1 "$TMP/out" "one answer for a PDF"
    expect_grep "^{\"id\":\"doc\",\"file\":\"$TMP/two.pdf\",\"pages\":\[{\"file\":\"$TMP/two.pdf\",\"page\":1,.*\"page\":2," \
        "$TMP/out" "the PDF's pages in its answer"
    echo "{\"id\":\"pdfbytes\",\"image\":\"$(base64 -w0 "$TMP/two.pdf")\"}" | "$BIN" "$@" --serve >"$TMP/out" 2>"$TMP/err"
    expect_grep '"error":"a PDF is given by its \\"path\\"' "$TMP/out" "PDF bytes are refused in one line"
else
    fail "needs pdftoppm (poppler-utils) and python3-img2pdf (ocrmypdf): run tools/setup.sh"
fi

# Usage errors, and a closed stdout.
expect_exit 2 "--serve with an input" -- "$BIN" "$@" --serve "$W1"
expect_exit 2 "--serve --format tsv" -- "$BIN" "$@" --serve --format tsv
expect_exit 2 "--serve -o" -- "$BIN" "$@" --serve -o "$TMP/o"
( yes "$W1" | head -n 50 | "$BIN" "$@" --serve 2>"$TMP/err"; echo $? >"$TMP/rc" ) | head -c 1 >/dev/null
[ "$(cat "$TMP/rc")" = 1 ] && pass || fail "--serve into a closed pipe: exit $(cat "$TMP/rc"), expected 1"
expect_grep "cannot write to standard output" "$TMP/err" "the closed pipe is said"
finish
