#!/bin/sh
# The CPU backend (--device cpu): listed by --list-devices, chosen without --device over a Vulkan CPU
# driver (lavapipe) but not over a Vulkan GPU, its own --bench-ops, the same bytes as the Vulkan device's fp32 path on the sample and on a
# batch with a bad file in it, -j engines sharing the cores, --threads, and bad values refused; oneDNN
# loaded at run time, not linked.
# Where the kernel shows no GPU, the automatic choice does not load the Vulkan drivers.
# Skipped where the build has no CPU backend.
. "$(dirname "$0")/lib/common.sh"

expect_exit 0 "--list-devices" -- "$BIN" --list-devices
if ! grep -q '^cpu: ' "$TMP/out"; then
    echo "skipped: this build has no CPU backend (libdnnl-dev)"
    exit 0
fi
pass

# oneDNN (and its OpenMP) is loaded when the backend is first used, not linked (src/nn/cpu/dnnl_api.h)
if command -v readelf >/dev/null 2>&1; then
    if readelf -d "$BIN" | grep NEEDED | grep -E -q 'libdnnl|libgomp'; then
        fail "ppocr-vk links oneDNN or OpenMP: $(readelf -d "$BIN" | grep NEEDED | grep -E 'libdnnl|libgomp' | tr -s ' ')"
    else
        pass
    fi
fi

C="$SRC/tests/data/corpus/paddleocr"
SAMPLE="$SRC/tests/data/sample.png"
echo "not an image" > "$TMP/bad.png"
set -- "$SAMPLE" "$C/en_word_1.png" "$TMP/bad.png" "$C/en_word_2.png"

# the default device: a Vulkan GPU wherever there is one, else the CPU backend, never lavapipe
gpus=$(grep -c '^[0-9]*: .* (\(discrete\|integrated\|virtual\)) driver ' "$TMP/out" || true)
expect_exit 0 "no --device" -- "$BIN" --profile "$SAMPLE"
expect_grep "^profile device: " "$TMP/err" "--profile names the device"
if [ "$gpus" -gt 0 ]; then
    grep -q "^profile device: CPU (oneDNN" "$TMP/err" && fail "no --device: the CPU backend, with a Vulkan GPU there" || pass
else
    expect_grep "^profile device: CPU (oneDNN" "$TMP/err" "no --device, no Vulkan GPU: the CPU backend"
fi
# where the kernel shows no GPU, the automatic choice loads no Vulkan driver at all (a loader
# variable of the user's brings the search back); --device vulkan still does
drivers_loaded() { grep -c 'calling init: .*libvulkan_' "$TMP/err" || true; }
if ! ls /dev/dri/renderD* /dev/nvidiactl /dev/dxg >/dev/null 2>&1; then
    expect_exit 0 "no --device, no GPU node" -- env LD_DEBUG=files "$BIN" "$C/en_word_1.png"
    [ "$(drivers_loaded)" -eq 0 ] && pass || fail "no GPU node: Vulkan drivers loaded: $(grep 'calling init: .*libvulkan_' "$TMP/err")"
    expect_exit 0 "a driver variable" -- env LD_DEBUG=files VK_LOADER_DRIVERS_SELECT='*' "$BIN" "$C/en_word_1.png"
    [ "$(drivers_loaded)" -gt 0 ] && pass || fail "VK_LOADER_DRIVERS_SELECT given: no Vulkan driver was searched"
fi
expect_exit 0 "--device vulkan" -- "$BIN" --device vulkan --profile "$SAMPLE"
expect_grep "^profile device: .*, fp" "$TMP/err" "--device vulkan: a Vulkan device"
grep -q "^profile device: CPU (oneDNN" "$TMP/err" && fail "--device vulkan: ran on the CPU backend" || pass

expect_exit 1 "Vulkan fp32" -- "$BIN" --device vulkan --fp32 --format tsv "$@"
mv "$TMP/out" "$TMP/vulkan.out"
expect_exit 1 "--device cpu" -- "$BIN" --device cpu --format tsv "$@"
cmp -s "$TMP/vulkan.out" "$TMP/out" && pass || fail "--device cpu: stdout differs from the Vulkan device's fp32 path"
expect_grep "bad.png" "$TMP/err" "the bad file is named"
expect_lines 11 "$TMP/out" "TSV: header, the sample's eight lines and the two words'"

# several devices: every GPU (none here: the default device), or a list, lavapipe and the CPU
# backend side by side: the same bytes, each device named; a name twice or a bad entry refused
expect_exit 1 "--device all" -- "$BIN" --device all --format tsv "$@"
cmp -s "$TMP/vulkan.out" "$TMP/out" && pass || fail "--device all: stdout differs"
expect_exit 1 "--device 0,cpu -j 3" -- "$BIN" --device 0,cpu -j 3 --profile --format tsv "$@"
cmp -s "$TMP/vulkan.out" "$TMP/out" && pass || fail "--device 0,cpu: stdout differs from one device's"
[ "$(grep -c '^profile device: ' "$TMP/err")" -eq 2 ] && pass || fail "--device 0,cpu: $(grep '^profile device' "$TMP/err")"
expect_grep "^profile device: CPU (oneDNN" "$TMP/err" "--device 0,cpu: the CPU backend is one of them"
expect_exit 2 "--device 0,0" -- "$BIN" --device 0,0 "$SAMPLE"
expect_grep "names 0 twice" "$TMP/err" "a device named twice"
expect_exit 2 "--device 0,x" -- "$BIN" --device 0,x "$SAMPLE"
expect_exit 1 "--device cpu -j 2" -- "$BIN" --device cpu -j 2 --format tsv "$@"
cmp -s "$TMP/vulkan.out" "$TMP/out" && pass || fail "--device cpu -j 2: stdout differs"
expect_exit 0 "--device cpu --threads 1" -- "$BIN" --device cpu --threads 1 --format tsv "$SAMPLE"
head -9 "$TMP/vulkan.out" | cmp -s - "$TMP/out" && pass || fail "--threads 1: stdout differs"

# OMP_THREAD_LIMIT (OCRmyPDF sets it to 1 for the OCR engines it runs) below the threads asked for:
# the runs keep within it and read the same
expect_exit 1 "OMP_THREAD_LIMIT=1" -- env OMP_THREAD_LIMIT=1 "$BIN" --device cpu --format tsv "$@"
cmp -s "$TMP/vulkan.out" "$TMP/out" && pass || fail "OMP_THREAD_LIMIT=1: stdout differs: $(head -c 300 "$TMP/out")"
expect_exit 1 "OMP_THREAD_LIMIT=1 --threads 2" -- env OMP_THREAD_LIMIT=1 "$BIN" --device cpu --threads 2 --format tsv "$@"
cmp -s "$TMP/vulkan.out" "$TMP/out" && pass || fail "OMP_THREAD_LIMIT=1 --threads 2: stdout differs"
expect_exit 0 "OMP_THREAD_LIMIT=1 --list-devices" -- env OMP_THREAD_LIMIT=1 "$BIN" --list-devices
expect_grep "^cpu: CPU (oneDNN, 1 thread)" "$TMP/out" "OMP_THREAD_LIMIT=1: one thread listed"

# --bench-ops times the CPU backend's own steps, not a Vulkan device's ops
expect_exit 0 "--device cpu --bench-ops" -- "$BIN" --device cpu --bench-ops --bench-runs 1
expect_grep "^device: CPU (oneDNN" "$TMP/out" "--bench-ops: the CPU backend named"
[ "$(grep -c '^total .* ms a run' "$TMP/out")" -eq 7 ] && pass || fail "--bench-ops: not one total for each of the 7 nets"
expect_grep "^ *[0-9]*  op *[0-9]* p2o.Conv.0 .* ms$" "$TMP/out" "--bench-ops: det's first convolution timed"

expect_exit 2 "--threads 0" -- "$BIN" --device cpu --threads 0 "$SAMPLE"
expect_exit 2 "--device gpu" -- "$BIN" --device gpu "$SAMPLE"
expect_exit 2 "--device -1" -- "$BIN" --device -1 "$SAMPLE"
finish
