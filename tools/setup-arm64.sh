#!/bin/sh
# What tools/test.sh's arm64 step needs on an x86-64 Debian machine: the arm64 architecture added
# to dpkg, the cross compiler, the arm64 libraries the build links (multiarch, beside the host's),
# and qemu-user to run the arm64 programs. CI runs it; a developer may. Safe to run again.
#   tools/setup-arm64.sh
set -eu
[ "$(dpkg --print-architecture)" = amd64 ] || { echo "setup-arm64: for x86-64 hosts only" >&2; exit 1; }
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
packages="crossbuild-essential-arm64 libvulkan-dev:arm64 libjpeg62-turbo-dev:arm64 libcmocka-dev:arm64 libmicrohttpd-dev:arm64 qemu-user-static"
missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -n "$missing" ] || exit 0
echo "setup-arm64: installing Debian packages:$missing" >&2
dpkg --print-foreign-architectures | grep -qx arm64 || $sudo dpkg --add-architecture arm64
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
