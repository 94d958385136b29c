#!/bin/sh
# The CLI tests' sanitizer check (sanitizer_reports.sh), run with the CLI tests' environment:
# a leak of ours fails it, naming the function that lost the block, and the command itself,
# which opens the Vulkan driver and layer and closes them, leaves no report.
#   sh tests/support/sanitizer_reports_test.sh PATH/TO/leak_probe PATH/TO/ppocr-vk
set -u
probe=$1
bin=$2
check=$(dirname "$0")/sanitizer_reports.sh
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
failed=0
if sh "$check" "$probe" 2>"$out"; then
    echo "FAIL: a leaking process passed the sanitizer check" >&2
    failed=1
elif ! grep -q 'leak_probe_lose_block' "$out"; then
    echo "FAIL: the leak report does not name the function of ours that leaked:" >&2
    cat "$out" >&2
    failed=1
fi
if ! sh "$check" "$bin" --list-devices >/dev/null 2>"$out"; then
    echo "FAIL: ppocr-vk --list-devices left sanitizer reports:" >&2
    cat "$out" >&2
    failed=1
fi
[ "$failed" -eq 0 ] && echo "sanitizer check: a leak of ours fails, the command leaves none"
exit "$failed"
