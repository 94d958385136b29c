#!/bin/sh
# The HTTP server under load: starts `ppocr-vk --http` on 127.0.0.1 (a free port), sends one
# request to warm it, then ROUNDS rounds of ab (apache2-utils), each N requests of the image in
# PaddleOCR's base64 JSON, C at a time, and prints a table: requests answered, failed and not 2xx,
# requests/s, median and p99 latency (ab's, from the client: queueing included), and the server's
# RSS before the first round and after each (flat from round to round: nothing kept per request),
# then its peak RSS. Ends the server with SIGTERM and says its exit status. Speed is never a test:
# BENCHMARKS.md records runs of this.
#   tools/bench-http.sh [-n N] [-c C] [-r ROUNDS] [-j ENGINES] [-d DEVICE] [IMAGE]
# Defaults: 200 requests, 200 at a time (every one queued at once), 2 rounds, the server's own -j
# and device, tests/data/sample.png. BIN (build/ppocr-vk) and PPOCR_MODELS as for the command.
# The server runs with --http-timeout 0: ab -n N -c C with N <= C opens one connection more than
# it sends requests on, which an idle timeout rightly closes and ab then counts as failed.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${BIN:-$root/build/ppocr-vk}
requests=200
concurrency=200
rounds=2
server_args="--http-timeout 0"
while getopts n:c:r:j:d: opt; do
    case $opt in
    n) requests=$OPTARG ;;
    c) concurrency=$OPTARG ;;
    r) rounds=$OPTARG ;;
    j) server_args="$server_args -j $OPTARG" ;;
    d) server_args="$server_args --device $OPTARG" ;;
    *) sed -n '2,12p' "$0" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
image=${1:-$root/tests/data/sample.png}
command -v ab >/dev/null 2>&1 || { echo "bench-http: needs ab (apache2-utils)" >&2; exit 1; }
command -v curl >/dev/null 2>&1 || { echo "bench-http: needs curl" >&2; exit 1; }

tmp=$(mktemp -d)
pid=""
trap '[ -z "$pid" ] || kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
printf '{"file":"%s","fileType":1}' "$(base64 -w0 "$image")" >"$tmp/request.json"

: >"$tmp/server.err"
# shellcheck disable=SC2086 # the options are words
"$bin" --http 127.0.0.1:0 $server_args 2>"$tmp/server.err" &
pid=$!
port=""
while [ -z "$port" ] && kill -0 $pid 2>/dev/null; do
    port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\)/ocr.*|\1|p' "$tmp/server.err")
    [ -n "$port" ] || sleep 0.1
done
[ -n "$port" ] || { cat "$tmp/server.err" >&2; exit 1; }
url="http://127.0.0.1:$port/ocr"
rss() { awk -v k="$1:" '$1 == k {printf "%.1f", $2 / 1024}' "/proc/$pid/status" 2>/dev/null || echo "(gone)"; }

code=$(curl -s -o /dev/null -w '%{http_code}' --data-binary @"$tmp/request.json" "$url")
[ "$code" = 200 ] || { echo "bench-http: the warm-up request got HTTP $code" >&2; exit 1; }
sed -n 's/^ppocr-vk: http: listening on [^ ]* (\(.*\)).*/server: \1/p' "$tmp/server.err"
echo "image: $(basename "$image"), $(wc -c <"$tmp/request.json" | tr -d ' ') bytes of JSON a request"
echo "RSS after one request: $(rss VmRSS) MiB"
echo
printf '%-5s %8s %5s %8s %6s %7s %8s %10s %9s %9s\n' round requests at-once answered failed non-2xx "req/s" \
    "median ms" "p99 ms" "RSS MiB"
round=1
while [ $round -le "$rounds" ]; do
    ab -q -s 3600 -n "$requests" -c "$concurrency" -p "$tmp/request.json" -T application/json "$url" \
        >"$tmp/ab.out" 2>&1 || true
    field() { sed -n "s/^$1 *\([0-9.]*\).*/\1/p" "$tmp/ab.out" | head -n 1; }
    non2xx=$(field 'Non-2xx responses:')
    printf '%-5s %8s %5s %8s %6s %7s %8s %10s %9s %9s\n' "$round" "$requests" "$concurrency" \
        "$(field 'Complete requests:')" "$(field 'Failed requests:')" "${non2xx:-0}" \
        "$(field 'Requests per second:')" "$(sed -n 's/^ *50% *\([0-9]*\).*/\1/p' "$tmp/ab.out")" \
        "$(sed -n 's/^ *99% *\([0-9]*\).*/\1/p' "$tmp/ab.out")" "$(rss VmRSS)"
    # ab's own account of failures (connect, receive, length, exceptions) and its complaints
    sed -n 's/^ *(Connect:/      ab failures: (Connect:/p; /^apr_/p' "$tmp/ab.out"
    round=$((round + 1))
done
echo
echo "peak RSS: $(rss VmHWM) MiB"
# a log line that ends in its logId is an answer delivered
delivered=' POST /ocr 200 .*logId [0-9a-f-]*$'
echo "server log: $(grep -c "$delivered" "$tmp/server.err") answers 200 delivered; other requests:"
grep ' POST /ocr ' "$tmp/server.err" | grep -v "$delivered" | sed 's/^/  /' | head -n 20
kill -TERM $pid 2>/dev/null || echo "bench-http: the server had already ended" >&2
status=0
wait $pid || status=$?
pid=""
echo "server exit status after SIGTERM: $status"
[ "$status" -eq 0 ] || { tail -n 20 "$tmp/server.err" >&2; exit 1; }
