#!/bin/sh
# SIGTERM and SIGINT while the command waits on stdin for more input, from a writer that never
# closes it: image bytes for '-' and a list for '@-'. The wait must end at once (not at the end of
# input, which never comes), the images finished before are kept, the pending ones skipped, and
# the exit status is 1 as for any interrupted run. Needs the models ($PPOCR_MODELS, else SRC/models).
. "$(dirname "$0")/lib/common.sh"

WORDS=$SRC/tests/data/corpus/paddleocr
export PPOCR_MODELS="${PPOCR_MODELS:-$SRC/models}"
[ -f "$PPOCR_MODELS/rec.pvk" ] || { echo "FAIL: no models in $PPOCR_MODELS (run tools/fetch-models.sh)" >&2; exit 1; }
# the writer end of the FIFO is this shell's fd 3: no stray writer process outlives the test
mkfifo "$TMP/fifo"

# gone_within PID SECONDS: whether PID exits within SECONDS of now
gone_within() {
    n=0
    while kill -0 "$1" 2>/dev/null; do
        [ $n -ge $(($2 * 10)) ] && return 1
        sleep 0.1
        n=$((n + 1))
    done
}

# stop_and_check SIGNAL WHAT: sends SIGNAL to $pid, which must exit 1 within 5 s saying why.
stop_and_check() {
    kill -"$1" $pid
    if gone_within $pid 5; then
        pass
    else
        fail "$2: still running 5 s after SIG$1 (waiting for the end of stdin?)"
        exec 3>&- # its end of input, so that it can finish
    fi
    wait $pid
    rc=$?
    exec 3>&-
    [ "$rc" -eq 1 ] && pass || fail "$2: exit $rc, expected 1"
    expect_grep "interrupted" "$TMP/err" "$2: says the remaining inputs were not processed"
}

# ---- '-': an image is done, then image bytes are awaited on stdin ------------------------------
"$BIN" --format json "$WORDS/en_word_1.png" - <"$TMP/fifo" >"$TMP/out" 2>"$TMP/err" &
pid=$!
exec 3>"$TMP/fifo"
# the first image's line on stdout: the nets are built and the next read is stdin's
n=0
while [ ! -s "$TMP/out" ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n + 1)); done
sleep 0.5
stop_and_check TERM "SIGTERM while reading image bytes on stdin"
expect_lines 1 "$TMP/out" "SIGTERM while reading image bytes on stdin: the finished image is kept"
expect_grep '^{"file":".*en_word_1.png".*"lines":\[.*\]}$' "$TMP/out" \
    "SIGTERM while reading image bytes on stdin: its line is whole"

# ---- '@-': a list of which one line has come ------------------------------------------------------
"$BIN" --format json @- <"$TMP/fifo" >"$TMP/out" 2>"$TMP/err" &
pid=$!
exec 3>"$TMP/fifo"
echo "$WORDS/en_word_2.png" >&3
sleep 1
stop_and_check INT "SIGINT while reading a list on stdin"
[ -s "$TMP/out" ] && fail "SIGINT while reading a list on stdin: an image of the unfinished list was processed" || pass

finish
