#!/bin/sh
# Usage errors, --help, --version, device listing and the missing-driver path (its run on the CPU
# backend needs the models: $PPOCR_MODELS, else SRC/models).
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
expect_exit 0 "--device vulkan --self-check" -- "$BIN" --device vulkan --self-check
expect_grep "self-check: ok" "$TMP/out" "self-check of the Vulkan device passes"
expect_exit 2 "--device with a bad name" -- "$BIN" --device gpu0 --self-check

# No Vulkan driver at all: where the build has the CPU backend, --list-devices lists it alone
# (exit 0) and a run without --device uses it; a run that asks for Vulkan, and every run where the
# build has no CPU backend, is one line and exit 3, no crash.
# Without validation: with it, the loader adds its own diagnostics to stderr.
NO_DRIVER="env -u PPOCR_VK_VALIDATE VK_ICD_FILENAMES=/dev/null VK_DRIVER_FILES=/dev/null"
if "$BIN" --list-devices 2>/dev/null | grep -q '^cpu: '; then
    expect_exit 0 "no driver, --list-devices" -- $NO_DRIVER "$BIN" --list-devices
    expect_lines 1 "$TMP/out" "no driver: the CPU backend alone is listed"
    expect_grep "^cpu: " "$TMP/out" "no driver: the CPU backend is listed"
    expect_exit 0 "no driver, OCR on the CPU backend" -- $NO_DRIVER "$BIN" --boxes "$SRC/tests/data/sample.png"
    expect_grep "brown dog" "$TMP/out" "no driver: the CPU backend reads the sample"
    expect_exit 0 "no driver, --self-check of the CPU backend" -- $NO_DRIVER "$BIN" --self-check
    expect_grep "self-check: ok" "$TMP/out" "no driver: the CPU backend's self-check passes"
else
    expect_exit 3 "no driver, --list-devices" -- $NO_DRIVER "$BIN" --list-devices
    expect_lines 1 "$TMP/err" "no-driver error is one line"
    expect_exit 3 "no driver, OCR" -- $NO_DRIVER "$BIN" "$SRC/tests/data/sample.png"
    expect_lines 1 "$TMP/err" "no-driver error of a run is one line"
    expect_exit 3 "no driver, --self-check" -- $NO_DRIVER "$BIN" --self-check
fi
expect_exit 3 "no driver, OCR on Vulkan" -- $NO_DRIVER "$BIN" --device vulkan "$SRC/tests/data/sample.png"
expect_lines 1 "$TMP/err" "no-driver error of a Vulkan run is one line"
expect_grep "Vulkan" "$TMP/err" "no-driver error names Vulkan"
expect_exit 3 "no driver, --self-check on Vulkan" -- $NO_DRIVER "$BIN" --device vulkan --self-check

finish
