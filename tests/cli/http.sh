#!/bin/sh
# The HTTP server (--http), started on 127.0.0.1 with a port the system picks, and asked with
# curl: PaddleOCR's POST /ocr with the sample in base64 JSON and as a multipart upload, ppocr-vk's
# own format, a per-request option, a PDF; every kind of bad request answered 4xx with a reason
# (malformed JSON, missing or wrong fields, not an image, a URL, a body over --http-max-bytes,
# wrong path or method); clients that go away mid-upload, after which the server still answers;
# 200 requests from ab, 20 at a time, all answered 2xx (a one-word image, to keep the test quick:
# BENCHMARKS.md has the sample's numbers), and meanwhile the idle timeout (--http-timeout 2): a
# client silent from its connection, one whose headers and one whose body stop coming, and a
# keep-alive one silent after its answer are closed after it, a slow but steady upload is
# answered; then SIGTERM with a request in flight: it is answered and the server exits 0. A second
# server of one engine and a 1 s timeout gets 12 requests at once: the last wait for the engine
# far longer than the timeout, and every one is answered. A build without libmicrohttpd must say
# so in one line.
# Needs the models ($PPOCR_MODELS, else SRC/models), curl, ab (apache2-utils) and bash (/dev/tcp).
. "$(dirname "$0")/lib/common.sh"

C="$SRC/tests/data/corpus/paddleocr"
export PPOCR_MODELS="${PPOCR_MODELS:-$SRC/models}"
[ -f "$PPOCR_MODELS/rec.pvk" ] || { echo "FAIL: no models in $PPOCR_MODELS (run tools/fetch-models.sh)" >&2; exit 1; }
for tool in curl ab; do
    command -v $tool >/dev/null 2>&1 || { echo "FAIL: needs $tool (curl, apache2-utils: run tools/setup.sh)" >&2; exit 1; }
done
DEVICE=""
"$BIN" --list-devices 2>/dev/null | grep -q '^cpu: ' && DEVICE="--device cpu"
# the server's temporary files (a PDF's bytes, its pages) go here, so that the end can check that none is left
export TMPDIR="$TMP/scratch"
mkdir -p "$TMPDIR"
server=""
queue_server=""
trap '[ -z "$server" ] || kill -9 $server 2>/dev/null; [ -z "$queue_server" ] || kill -9 $queue_server 2>/dev/null
rm -rf "$TMP"' EXIT

# listening_port PID LOG: the port that the server's line "listening on" names, once it is
# written; empty if the server ends first or takes over 3 minutes
listening_port() {
    p=""
    n=0
    while [ -z "$p" ] && [ $n -lt 1800 ] && kill -0 "$1" 2>/dev/null; do
        p=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\)/ocr.*|\1|p' "$2")
        [ -n "$p" ] || sleep 0.1
        n=$((n + 1))
    done
    echo "$p"
}

: >"$TMP/server.err"
"$BIN" $DEVICE --http 127.0.0.1:0 --http-max-bytes 1000000 --http-timeout 2 2>"$TMP/server.err" &
server=$!
port=$(listening_port $server "$TMP/server.err")
if [ -z "$port" ]; then
    kill $server 2>/dev/null
    wait $server
    rc=$?
    server=""
    if grep -q "this build has no HTTP server" "$TMP/server.err"; then
        [ "$rc" -eq 2 ] && pass || fail "no HTTP server in this build: exit $rc, expected 2"
        expect_lines 1 "$TMP/server.err" "no HTTP server in this build: one line"
        echo "cli_http: this build has no HTTP server (libmicrohttpd-dev): only its message was checked"
        finish
        exit $?
    fi
    fail "the server did not start (exit $rc): $(head -c 600 "$TMP/server.err")"
    finish
    exit 1
fi
URL="http://127.0.0.1:$port"

# request WHAT STATUS CURL-ARGUMENTS...: the answer's body in $TMP/body
request() {
    what=$1
    want=$2
    shift 2
    got=$(curl -s -o "$TMP/body" -w '%{http_code}' --max-time 600 "$@")
    if [ "$got" = "$want" ]; then pass; else fail "$what: HTTP $got, expected $want: $(head -c 400 "$TMP/body")"; fi
}
# post_json WHAT STATUS JSON: POST /ocr with that body
post_json() {
    printf '%s' "$3" >"$TMP/request.json"
    request "$1" "$2" -H 'Content-Type: application/json' --data-binary @"$TMP/request.json" "$URL/ocr"
}
b64() { base64 -w0 "$1"; }

FIRST="This is a lot of 12 point text to test the"
SAMPLE=$(b64 "$SRC/tests/data/sample.png")
printf '{"file":"%s","fileType":1}' "$SAMPLE" >"$TMP/sample.json"

# ---- answers --------------------------------------------------------------------------------
request "GET /health" 200 "$URL/health"
expect_grep '"errorCode":0,"errorMsg":"Healthy"' "$TMP/body" "GET /health says it is healthy"

request "base64 JSON" 200 -H 'Content-Type: application/json' --data-binary @"$TMP/sample.json" "$URL/ocr"
expect_grep '^{"logId":"[0-9a-f-]\{36\}","errorCode":0,"errorMsg":"Success","result":{"ocrResults":\[{"prunedResult":{' \
    "$TMP/body" "base64 JSON: PaddleX's envelope"
expect_grep "\"rec_texts\":\[\"$FIRST\"," "$TMP/body" "base64 JSON: the sample's first line"
expect_grep '"rec_scores":\[0\.9' "$TMP/body" "base64 JSON: its score"
expect_grep '"rec_boxes":\[\[36,91,579,119\],' "$TMP/body" "base64 JSON: its box"
expect_grep '"dataInfo":{"width":640,"height":480,"type":"image"}}}$' "$TMP/body" "base64 JSON: dataInfo"

request "multipart upload" 200 -F "file=@$SRC/tests/data/sample.png" "$URL/ocr"
expect_grep "\"rec_texts\":\[\"$FIRST\"," "$TMP/body" "multipart upload: the sample's first line"
request "multipart upload with options" 200 -F "file=@$SRC/tests/data/sample.png" -F fileType=1 \
    -F textDetLimitType=max -F useTextlineOrientation=false "$URL/ocr"
expect_grep '"use_textline_orientation":false' "$TMP/body" "multipart upload: a form field's option"

request "?format=ppocr" 200 -F "file=@$SRC/tests/data/sample.png" "$URL/ocr?format=ppocr"
expect_grep "^{\"file\":\"sample.png\",\"width\":640,\"height\":480,\"lines\":\[{\"text\":\"$FIRST\"" "$TMP/body" \
    "?format=ppocr: ppocr-vk's JSON line"

# the first line scores 0.963: a threshold above it drops it from this answer only
printf '{"file":"%s","textRecScoreThresh":0.97}' "$SAMPLE" >"$TMP/request.json"
request "textRecScoreThresh" 200 --data-binary @"$TMP/request.json" "$URL/ocr"
expect_grep '"text_rec_score_thresh":0.97,"rec_texts":\["ocr code and see if it works on all types",' "$TMP/body" \
    "textRecScoreThresh 0.97 drops the first line"

if command -v pdftoppm >/dev/null 2>&1 && /usr/bin/python3 -c 'import img2pdf' 2>/dev/null; then
    /usr/bin/python3 -m img2pdf -s 300dpi -o "$TMP/two.pdf" "$C/en_word_4.png" "$C/en_word_1.png"
    request "a PDF, its type guessed" 200 -F "file=@$TMP/two.pdf" "$URL/ocr"
    expect_grep '"dataInfo":{"numPages":2,"pages":\[{"width":[0-9]*,"height":[0-9]*},{' "$TMP/body" "a PDF: two pages"
    post_json "fileType 0 on a PNG" 422 "{\"file\":\"$(b64 "$C/en_word_1.png")\",\"fileType\":0}"
    expect_grep '"errorCode":422' "$TMP/body" "fileType 0 on a PNG: errorCode"
else
    echo "cli_http: no pdftoppm or python3-img2pdf: the PDF requests were not made (cli_pdf fails for it)"
fi

# ---- refusals -------------------------------------------------------------------------------
post_json "malformed JSON" 400 '{"file": "abc'
expect_grep '"errorCode":400,"errorMsg":"the body is not JSON: line 1, column' "$TMP/body" "malformed JSON: why"
post_json "empty body" 400 ''
post_json "JSON that is not an object" 422 '[1,2]'
post_json "no file" 422 '{"fileType":1}'
expect_grep '"errorMsg":"file: required' "$TMP/body" "no file: why"
post_json "not an image" 422 "{\"file\":\"$(echo 'hello, not an image' | base64 -w0)\"}"
expect_grep '"errorCode":422,"errorMsg":"file: not an image' "$TMP/body" "not an image: why"
post_json "not base64" 422 '{"file":"@@@@"}'
expect_grep '"errorMsg":"file: not base64' "$TMP/body" "not base64: why"
post_json "a URL" 422 '{"file":"http://127.0.0.1/a.png"}'
expect_grep 'does not fetch URLs' "$TMP/body" "a URL: why"
post_json "another textDetThresh" 422 "{\"file\":\"$SAMPLE\",\"textDetThresh\":0.5}"
expect_grep 'textDetThresh: fixed at 0.3' "$TMP/body" "another textDetThresh: why"
post_json "useDocUnwarping true" 422 "{\"file\":\"$SAMPLE\",\"useDocUnwarping\":true}"
post_json "textDetLimitSideLen out of range" 422 "{\"file\":\"$SAMPLE\",\"textDetLimitSideLen\":10}"
post_json "textDetLimitSideLen of the wrong type" 422 "{\"file\":\"$SAMPLE\",\"textDetLimitSideLen\":\"big\"}"
post_json "fileType 2" 422 "{\"file\":\"$SAMPLE\",\"fileType\":2}"
request "multipart without a file" 422 -F fileType=1 "$URL/ocr"
request "broken multipart" 400 -H 'Content-Type: multipart/form-data; boundary=XyZ' \
    --data-binary "$(printf -- '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\nabc')" "$URL/ocr"

head -c 1200000 /dev/zero >"$TMP/big.bin"
request "over --http-max-bytes" 413 --data-binary @"$TMP/big.bin" "$URL/ocr"
expect_grep '"errorCode":413,"errorMsg":"the body is 1200000 bytes, over' "$TMP/body" "over --http-max-bytes: why"
request "over --http-max-bytes, chunked" 413 -H 'Transfer-Encoding: chunked' --data-binary @"$TMP/big.bin" "$URL/ocr"
request "GET /ocr" 405 "$URL/ocr"
request "POST /health" 405 -d x "$URL/health"
request "GET /" 404 "$URL/"
request "?format=xml" 400 --data-binary @"$TMP/sample.json" "$URL/ocr?format=xml"

# ---- clients that go away in the middle of their upload -------------------------------------
head -c 400000 /dev/zero >"$TMP/slow.bin"
curl -s -o /dev/null --limit-rate 50k --max-time 1 --data-binary @"$TMP/slow.bin" "$URL/ocr"
rc=$?
[ $rc -eq 28 ] && pass || fail "a JSON upload cut short: curl exit $rc, expected 28 (its time ran out)"
curl -s -o /dev/null --limit-rate 50k --max-time 1 -F "file=@$TMP/slow.bin;filename=slow.png" "$URL/ocr"
rc=$?
[ $rc -eq 28 ] && pass || fail "a multipart upload cut short: curl exit $rc, expected 28 (its time ran out)"
request "after clients went away" 200 --data-binary @"$TMP/sample.json" "$URL/ocr"
expect_grep "\"rec_texts\":\[\"$FIRST\"," "$TMP/body" "after clients went away: the sample read"

# ---- the idle timeout (--http-timeout 2), while ab loads the server ---------------------------
# idle_client NAME BYTES: connects, sends BYTES (a printf format) and then nothing; $TMP/NAME.ms
# gets the milliseconds from its last byte to the server closing the connection (empty if the
# server had not closed it 20 s later), $TMP/NAME.got what the server sent
idle_client() {
    timeout 20 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit
        printf "$2" >&3
        start=$(date +%s%N)
        cat <&3 >"$3"
        echo $((($(date +%s%N) - start) / 1000000))' idle_client "$port" "$2" "$TMP/$1.got" >"$TMP/$1.ms" 2>/dev/null
}
printf '{"file":"%s"}' "$(b64 "$C/en_word_1.png")" >"$TMP/word.json"
idle_clients=""
if command -v bash >/dev/null 2>&1 && bash -c ': </dev/tcp/127.0.0.1/'"$port" 2>/dev/null; then
    idle_client silent '' &
    idle_clients="$idle_clients $!"
    idle_client headers 'POST /ocr HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-' &
    idle_clients="$idle_clients $!"
    idle_client body 'POST /ocr HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 7508\r\n\r\n{"file":"iVBOR' &
    idle_clients="$idle_clients $!"
    # a keep-alive connection silent after its answer: the timeout it had none of while queued
    # is back (the answer comes within a second or two, the close 2 s after)
    idle_client answered "POST /ocr HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: $(wc -c <"$TMP/word.json")\r\n\r\n$(
        cat "$TMP/word.json")" &
    idle_clients="$idle_clients $!"
else
    fail "the idle clients need bash with /dev/tcp"
fi
# steady but slow: over 2 s in all at 2.5 KB/s, never 2 s silent
curl -s -o "$TMP/slow.body" -w '%{http_code}' --max-time 600 --limit-rate 2500 --data-binary @"$TMP/sample.json" \
    "$URL/ocr" >"$TMP/slow.code" &
slow_upload=$!

# 200 requests, 20 at a time, every one answered 2xx
ab -q -n 200 -c 20 -s 600 -p "$TMP/word.json" -T application/json "$URL/ocr" >"$TMP/ab.out" 2>&1
expect_grep '^Complete requests: *200$' "$TMP/ab.out" "ab: 200 requests complete"
expect_grep '^Failed requests: *0$' "$TMP/ab.out" "ab: none failed"
grep -q '^Non-2xx responses' "$TMP/ab.out" && fail "ab: some answers were not 2xx: $(grep Non-2xx "$TMP/ab.out")" || pass

wait $slow_upload
[ "$(cat "$TMP/slow.code")" = 200 ] && pass ||
    fail "a slow upload, never silent for the timeout: HTTP $(cat "$TMP/slow.code"): $(head -c 400 "$TMP/slow.body")"
if [ -n "$idle_clients" ]; then
    wait $idle_clients
    for what in silent headers body answered; do
        ms=$(cat "$TMP/$what.ms")
        if [ -z "$ms" ]; then
            fail "idle client ($what): still connected 20 s after its last byte (--http-timeout 2)"
        elif [ "$ms" -lt 1500 ] || [ "$ms" -gt 10000 ]; then
            fail "idle client ($what): closed $ms ms after its last byte, expected about 2000 (--http-timeout 2)"
        else
            pass
        fi
    done
    expect_grep '^HTTP/1.1 200 ' "$TMP/answered.got" "a keep-alive connection silent after its answer: answered first"
    expect_grep 'POST /ocr - .* 0 out, logId [0-9a-f-]* (not answered: timed out)$' "$TMP/server.err" \
        "a body that stops coming is one line of the log"
fi
request "after the idle clients" 200 --data-binary @"$TMP/sample.json" "$URL/ocr"
expect_grep "\"rec_texts\":\[\"$FIRST\"," "$TMP/body" "after the idle clients: the sample read"

# ---- SIGTERM with a request in flight: answered, then exit 0 --------------------------------
curl -s -o "$TMP/last" -w '%{http_code}' --max-time 600 --data-binary @"$TMP/sample.json" "$URL/ocr" >"$TMP/last.code" &
client=$!
sleep 1
kill -TERM $server
wait $client
[ "$(cat "$TMP/last.code")" = 200 ] && pass || fail "the request in flight at SIGTERM: HTTP $(cat "$TMP/last.code")"
expect_grep "\"rec_texts\":\[\"$FIRST\"," "$TMP/last" "the request in flight at SIGTERM: its answer"
n=0
while kill -0 $server 2>/dev/null && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
kill -0 $server 2>/dev/null && fail "still running 60 s after SIGTERM"
wait $server
rc=$?
server=""
[ $rc -eq 0 ] && pass || fail "SIGTERM: exit $rc, expected 0: $(tail -c 400 "$TMP/server.err")"
expect_grep 'ppocr-vk: http: stopped$' "$TMP/server.err" "SIGTERM: the server says it stopped"
expect_grep 'POST /ocr - .* (not answered: the client went away)$' "$TMP/server.err" \
    "a client gone mid-upload is one line of the log"
# a line that ends in its logId is an answer delivered
delivered='^ppocr-vk: http: POST /ocr 200 .*logId [0-9a-f-]*$'
[ "$(grep -c "$delivered" "$TMP/server.err")" -ge 206 ] && pass ||
    fail "one log line per answer delivered: $(grep -c "$delivered" "$TMP/server.err") lines of 200"
[ -z "$(ls -A "$TMPDIR")" ] && pass || fail "temporary files left behind: $(ls -A "$TMPDIR")"

# ---- a queue that outlasts --http-timeout: every request answered ---------------------------
# 12 requests of the sample at once to one engine with a 1 s idle timeout: the last wait for the
# engine several seconds, suspended, and none may be timed out. curl, not ab: with -n no larger
# than -c, ab opens one connection more than it has requests for, which stays silent, is closed by
# the timeout as it should be, and which ab then counts as a request failed (and one answer fewer
# to wait for).
"$BIN" $DEVICE -j 1 --http 127.0.0.1:0 --http-timeout 1 2>"$TMP/queue.err" &
queue_server=$!
qport=$(listening_port $queue_server "$TMP/queue.err")
if [ -n "$qport" ]; then
    mkdir -p "$TMP/queue"
    clients=""
    i=1
    while [ $i -le 12 ]; do
        curl -s -o "$TMP/queue/$i.body" -w '%{http_code} %{time_total}\n' --max-time 600 \
            --data-binary @"$TMP/sample.json" "http://127.0.0.1:$qport/ocr" >"$TMP/queue/$i.code" &
        clients="$clients $!"
        i=$((i + 1))
    done
    wait $clients
    what="12 requests queued past the timeout"
    answered=$(cat "$TMP"/queue/*.code | grep -c '^200 ')
    [ "$answered" -eq 12 ] && pass ||
        fail "$what: $answered answered 200; statuses: $(cut -d' ' -f1 "$TMP"/queue/*.code | tr '\n' ' ')"
    read_ok=$(grep -l "\"rec_texts\":\[\"$FIRST\"," "$TMP"/queue/*.body | wc -l)
    [ "$read_ok" -eq 12 ] && pass || fail "$what: $read_ok answers read the sample"
    logged=$(grep -c "$delivered" "$TMP/queue.err")
    [ "$logged" -eq 12 ] && pass || fail "$what: the log has $logged answers delivered"
    lost='(not answered\|(answer not delivered'
    grep -q "$lost" "$TMP/queue.err" && fail "$what: $(grep -m 1 "$lost" "$TMP/queue.err")" || pass
    # the test proves something only where the queue did outlast the timeout
    slowest=$(cut -d' ' -f2 "$TMP"/queue/*.code | sort -n | tail -n 1)
    awk -v s="$slowest" 'BEGIN { exit !(s > 2) }' ||
        echo "cli_http: $what: the slowest took $slowest s, hardly past the 1 s timeout"
    kill -TERM $queue_server
    wait $queue_server
    rc=$?
    queue_server=""
    [ $rc -eq 0 ] && pass || fail "the server of the queue: exit $rc after SIGTERM, expected 0"
    expect_grep 'stopping: answering the 0 requests received' "$TMP/queue.err" \
        "the server of the queue: none left in flight once every client had its answer"
else
    fail "the server with --http-timeout 1 did not start: $(head -c 600 "$TMP/queue.err")"
fi

finish
