# Helpers for the CLI tests: sourced by tests/cli/*.sh, which ctest runs as
#   sh tests/cli/NAME.sh PATH/TO/ppocr-vk SOURCE_DIR
BIN=$1
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PASSED=0
FAILED=0

pass() { PASSED=$((PASSED + 1)); }
fail() { FAILED=$((FAILED + 1)); echo "FAIL: $*" >&2; }

# expect_exit CODE DESCRIPTION -- COMMAND...: runs the command, output in $TMP/out and $TMP/err.
expect_exit() {
    want=$1; what=$2; shift 3
    "$@" >"$TMP/out" 2>"$TMP/err"
    got=$?
    if [ "$got" -eq "$want" ]; then pass; else fail "$what: exit $got, expected $want; stderr: $(head -c 400 "$TMP/err")"; fi
}

# expect_grep PATTERN FILE DESCRIPTION
expect_grep() {
    if grep -q -- "$1" "$2"; then pass; else fail "$3: '$1' not in $(basename "$2"): $(head -c 400 "$2")"; fi
}

# expect_lines N FILE DESCRIPTION
expect_lines() {
    got=$(wc -l <"$2" | tr -d ' ')
    if [ "$got" -eq "$1" ]; then pass; else fail "$3: $got lines in $(basename "$2"), expected $1"; fi
}

# word_folder DIR: the corpus' small word images, copied into DIR numbered so that their order is
# fixed, and 99-bad.png, a file that is not an image
word_folder() {
    mkdir -p "$1"
    n=0
    for f in "$SRC"/tests/data/corpus/paddleocr/en_word_*.png "$SRC"/tests/data/corpus/paddleocr/word_*.jpg; do
        n=$((n + 1))
        cp "$f" "$1/$(printf '%02d' $n)-$(basename "$f")"
    done
    echo "not an image" >"$1/99-bad.png"
}

finish() {
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
}
