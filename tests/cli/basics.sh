#!/bin/sh
# Usage errors, --help, --version, device listing and the missing-driver path: no models needed.
. "$(dirname "$0")/lib/common.sh"

expect_exit 0 "--help" -- "$BIN" --help
expect_grep "Usage:" "$TMP/out" "--help prints usage on stdout"
expect_grep "README" "$TMP/out" "--help says where the input limits are documented"

expect_exit 0 "--version" -- "$BIN" --version
expect_grep "^ppocr-vk [0-9]" "$TMP/out" "--version"

expect_exit 2 "no input" -- "$BIN"
expect_grep "no input" "$TMP/err" "no input message"
expect_lines 1 "$TMP/err" "usage error is one line"

expect_exit 2 "unknown flag" -- "$BIN" --no-such-flag x.png
expect_grep "unknown option '--no-such-flag'" "$TMP/err" "unknown flag named"

expect_exit 2 "bad number" -- "$BIN" --det-db-thresh abc x.png
expect_exit 2 "out of range" -- "$BIN" --drop-score 2 x.png
expect_exit 2 "missing value" -- "$BIN" x.png --format
expect_exit 2 "bad format" -- "$BIN" --format xml x.png
expect_exit 2 "bad shard" -- "$BIN" --shard 3/2 x.png
expect_exit 2 "bad shard syntax" -- "$BIN" --shard 3 x.png

expect_exit 0 "--list-devices" -- "$BIN" --list-devices
expect_grep "^0: " "$TMP/out" "device 0 listed"

expect_exit 0 "--self-check" -- "$BIN" --self-check
expect_grep "self-check: ok" "$TMP/out" "self-check passes"

# No Vulkan driver at all: one line, exit 3, no crash; --list-devices still lists the CPU backend
# where the build has one (exit 0), and fails the same way where it has none.
# Without validation: with it, the loader adds its own diagnostics to stderr.
NO_DRIVER="env -u PPOCR_VK_VALIDATE VK_ICD_FILENAMES=/dev/null VK_DRIVER_FILES=/dev/null"
if "$BIN" --list-devices 2>/dev/null | grep -q '^cpu: '; then
    expect_exit 0 "no driver, --list-devices" -- $NO_DRIVER "$BIN" --list-devices
    expect_lines 1 "$TMP/out" "no driver: the CPU backend alone is listed"
    expect_grep "^cpu: " "$TMP/out" "no driver: the CPU backend is listed"
else
    expect_exit 3 "no driver, --list-devices" -- $NO_DRIVER "$BIN" --list-devices
    expect_lines 1 "$TMP/err" "no-driver error is one line"
fi
expect_exit 3 "no driver, OCR" -- $NO_DRIVER "$BIN" "$SRC/tests/data/sample.png"
expect_lines 1 "$TMP/err" "no-driver error of a run is one line"
expect_exit 3 "no driver, --self-check" -- $NO_DRIVER "$BIN" --self-check

finish
