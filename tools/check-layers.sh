#!/bin/sh
# The layers' rules (HACKING.md), checked on the sources: each folder of src/ includes only the
# layers it may know, and include/ppocr.h compiles on its own (what an installed program sees).
#   tools/check-layers.sh [C compiler]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cc=${1:-${CC:-cc}}
status=0

# folder, then the include paths (an extended regular expression) its files may name
rules='
cli     ^(cli/[^/]+|ppocr\.h)$
ocr     ^(ocr/[^/]+|ocr/gpu/ocr_gpu\.h|ocr/cpu/ocr_cpu\.h|nn/(session|device|bench)\.h|img/[^/]+|model/[^/]+|ppocr\.h)$
ocr/gpu ^(ocr/[^/]+|ocr/gpu/[^/]+|nn/(session|device|bench|shape|half)\.h|nn/gpu/[^/]+|gpu/[^/]+|img/[^/]+|model/[^/]+|ppocr\.h)$
ocr/cpu ^(ocr/[^/]+|ocr/cpu/[^/]+|nn/(session|device|shape)\.h|nn/cpu/session_cpu\.h|img/[^/]+|model/[^/]+|ppocr\.h)$
nn      ^(nn/[^/]+|model/[^/]+)$
nn/gpu  ^(nn/[^/]+|nn/gpu/[^/]+|gpu/[^/]+|model/[^/]+)$
nn/cpu  ^(nn/[^/]+|nn/cpu/[^/]+|model/[^/]+)$
gpu     ^gpu/[^/]+$
model   ^model/[^/]+$
img     ^(img/[^/]+|ppocr\.h)$
'
echo "$rules" | while read -r dir allowed; do
    [ -n "$dir" ] || continue
    for f in "$root/src/$dir"/*.c "$root/src/$dir"/*.h; do
        [ -f "$f" ] || continue
        sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
            if ! echo "$inc" | grep -Eq "$allowed"; then
                echo "layers: ${f#$root/} includes \"$inc\", which src/$dir may not know" >&2
                echo fail
            fi
        done
    done
done | grep -q fail && status=1

# The public header alone, in C and as C++ would see it (extern "C").
printf '#include "ppocr.h"\nint main(void) { return PPOCR_OK; }\n' |
    "$cc" -std=c11 -Wall -Wextra -Werror -fsyntax-only -I "$root/include" -x c - ||
    { echo "layers: include/ppocr.h does not compile on its own" >&2; status=1; }
exit $status
