#!/bin/sh
# The library as a program outside the project sees it: `cmake --install` of this build into a
# temporary prefix, then examples/ocr_image.c built against the installed tree with pkg-config,
# once with the shared library and once with the static one, each reading the sample on the
# installed models; the shared library's SONAME, and that the shared library exports, and the
# archive leaves global, only the functions that include/ppocr.h declares.
# tests/CMakeLists.txt sets PPOCR_CMAKE, PPOCR_BUILD_DIR, PPOCR_INSTALL_{LIBDIR,INCLUDEDIR,DATADIR},
# PPOCR_C_COMPILER and PPOCR_SANITIZER_FLAGS: a sanitizer build's library loads only into a program
# built with the same sanitizers. Skipped (exit 77) only where pkg-config or binutils are missing.
. "$(dirname "$0")/lib/common.sh"

for tool in pkg-config readelf nm; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "skipped: no $tool (tools/setup.sh installs pkgconf; binutils come with gcc)"
        exit 77
    fi
done
LIBDIR=${PPOCR_INSTALL_LIBDIR:?set by tests/CMakeLists.txt}
case "$LIBDIR" in
/*)
    echo "skipped: CMAKE_INSTALL_LIBDIR is absolute ($LIBDIR), so an install cannot be moved into a temporary prefix"
    exit 77
    ;;
esac
P="$TMP/prefix"
LIB="$P/$LIBDIR"

expect_exit 0 "cmake --install into a temporary prefix" -- "$PPOCR_CMAKE" --install "$PPOCR_BUILD_DIR" --prefix "$P"
for f in "$P/$PPOCR_INSTALL_INCLUDEDIR/ppocr.h" "$LIB/libppocr-vk.a" "$LIB/libppocr-vk.so" "$LIB/pkgconfig/ppocr-vk.pc"; do
    if [ -f "$f" ]; then pass; else fail "not installed: ${f#$P/}"; fi
done

# The SONAME carries the major version, the file the whole version, the link name points to both.
version=$("$BIN" --version | sed -n 's/^ppocr-vk \([0-9][0-9.]*\).*/\1/p')
major=${version%%.*}
readelf -d "$LIB/libppocr-vk.so" >"$TMP/dynamic" 2>&1
expect_grep "Library soname: \[libppocr-vk\.so\.$major\]" "$TMP/dynamic" "SONAME libppocr-vk.so.$major"
if [ -f "$LIB/libppocr-vk.so.$version" ] && [ "$(readlink -f "$LIB/libppocr-vk.so")" = "$LIB/libppocr-vk.so.$version" ] &&
    [ "$(readlink -f "$LIB/libppocr-vk.so.$major")" = "$LIB/libppocr-vk.so.$version" ]; then
    pass
else
    fail "libppocr-vk.so and .so.$major do not lead to libppocr-vk.so.$version: $(ls -l "$LIB" | tr '\n' ' ')"
fi

# Exports: exactly the functions the installed header declares (each line of ppocr.h that starts a
# declaration of ppocr_NAME(, which also checks that each is marked PPOCR_API).
sed -n 's/^[A-Za-z].*[ *]\(ppocr_[a-z0-9_]*\)(.*/\1/p' "$P/$PPOCR_INSTALL_INCLUDEDIR/ppocr.h" | sort >"$TMP/declared"
nm -D --defined-only "$LIB/libppocr-vk.so" | awk '{print $NF}' | sort >"$TMP/exported"
nm -g --defined-only "$LIB/libppocr-vk.a" | awk 'NF == 3 {print $NF}' | sort >"$TMP/archive_globals"
if [ "$(wc -l <"$TMP/declared")" -ge 20 ]; then pass; else fail "too few functions found in ppocr.h: $(cat "$TMP/declared")"; fi
for what in exported archive_globals; do
    if cmp -s "$TMP/declared" "$TMP/$what"; then
        pass
    else
        fail "$what differ from ppocr.h's functions (< header only, > library only): $(diff "$TMP/declared" "$TMP/$what" | grep '^[<>]' | head -20 | tr '\n' ' ')"
    fi
done

# The example, built as its comment says, against the installed tree only.
export PKG_CONFIG_PATH="$LIB/pkgconfig"
CC=${PPOCR_C_COMPILER:-cc}
# The sanitizer build's programs keep the Vulkan libraries mapped (tests/keep_libraries_loaded.c
# says why), so that the leak check at exit sees through them as it does in the other tests.
keep_loaded=""
[ -z "${PPOCR_SANITIZER_FLAGS:-}" ] || keep_loaded="$SRC/tests/keep_libraries_loaded.c"
expect_exit 0 "pkg-config --cflags --libs ppocr-vk" -- pkg-config --cflags --libs ppocr-vk
shared_flags=$(cat "$TMP/out")
expect_exit 0 "pkg-config --cflags ppocr-vk" -- pkg-config --cflags ppocr-vk
cflags=$(cat "$TMP/out")
expect_exit 0 "pkg-config --static --libs ppocr-vk" -- pkg-config --static --libs ppocr-vk
# -l:libppocr-vk.a names the archive, which the linker would otherwise pass over for the .so
static_libs=$(sed 's/-lppocr-vk\( \|$\)/-l:libppocr-vk.a\1/' "$TMP/out")
for dep in -l:libppocr-vk.a -lvulkan -ljpeg -lm -ldl -lpthread; do
    case " $static_libs " in *" $dep "*) pass ;; *) fail "pkg-config --static --libs lacks $dep: $static_libs" ;; esac
done
# shellcheck disable=SC2086 # the flags are words
expect_exit 0 "the example against the shared library" -- "$CC" -std=c11 -Wall -Wextra -Werror $PPOCR_SANITIZER_FLAGS \
    "$SRC/examples/ocr_image.c" $keep_loaded $shared_flags -o "$TMP/ocr_image_shared"
# shellcheck disable=SC2086
expect_exit 0 "the example against the static library" -- "$CC" -std=c11 -Wall -Wextra -Werror $PPOCR_SANITIZER_FLAGS \
    "$SRC/examples/ocr_image.c" $keep_loaded $cflags $static_libs -o "$TMP/ocr_image_static"
readelf -d "$TMP/ocr_image_shared" >"$TMP/needed_shared" 2>&1
expect_grep "Shared library: \[libppocr-vk\.so\.$major\]" "$TMP/needed_shared" "the shared example needs libppocr-vk.so.$major"
if readelf -d "$TMP/ocr_image_static" | grep -q 'libppocr-vk'; then
    fail "the static example needs libppocr-vk.so: $(readelf -d "$TMP/ocr_image_static" | grep libppocr-vk)"
else
    pass
fi

# The installed models, where the source tree has them (tools/fetch-models.sh puts them there);
# else those of $PPOCR_MODELS, which the engine would read before the installed ones anyway.
models="$P/$PPOCR_INSTALL_DATADIR/ppocr-vk/models"
if [ -f "$SRC/models/det.pvk" ]; then
    for f in det.pvk cls.pvk rec.pvk; do
        if [ -f "$models/$f" ]; then pass; else fail "model not installed: ${models#$P/}/$f"; fi
    done
else
    echo "note: no models in $SRC/models, so none installed: the examples read PPOCR_MODELS=${PPOCR_MODELS:-}"
    models=${PPOCR_MODELS:-}
fi
for kind in shared static; do
    library_path=""
    [ "$kind" = static ] || library_path="LD_LIBRARY_PATH=$LIB"
    # shellcheck disable=SC2086 # an assignment, or none
    expect_exit 0 "the $kind example on the sample" -- env PPOCR_MODELS="$models" $library_path \
        "$TMP/ocr_image_$kind" "$SRC/tests/data/sample.png"
    expect_grep "^0\.[0-9]*	This is a lot of 12 point text to test the$" "$TMP/out" "the $kind example's first line"
    expect_grep "	brown dog jumped over the lazy fox$" "$TMP/out" "the $kind example's last line"
    expect_lines 8 "$TMP/out" "the $kind example prints the sample's eight lines"
done
expect_exit 1 "the example on a missing file" -- env LD_LIBRARY_PATH="$LIB" "$TMP/ocr_image_shared" "$TMP/no-such.png"
expect_grep "no such file" "$TMP/err" "the example says the file is missing"
expect_lines 1 "$TMP/err" "the example's error is one line"

finish
