#!/bin/sh
# Shards: the outputs of N shards, concatenated, are byte for byte one run's, with K/N given and
# with --shard auto reading each scheduler's variables (Slurm array, Kubernetes indexed Job, GNU
# parallel); under GNU parallel itself (Debian's parallel, which tools/setup.sh installs); a bad
# or missing index is a usage error. --skip-existing with -o resumes a run: the outputs there are
# passed over, the missing ones made, the same bytes. Small word images on the CPU backend keep it
# quick (the Slurm cluster test is tests/cli/slurm.sh).
. "$(dirname "$0")/lib/common.sh"

word_folder "$TMP/in"
set -- --device cpu --format json "$TMP/in"

expect_exit 1 "one run" -- "$BIN" "$@"
mv "$TMP/out" "$TMP/one.out"
mv "$TMP/err" "$TMP/one.err"
[ "$(wc -l <"$TMP/one.out")" -ge 8 ] && pass || fail "one run: $(wc -l <"$TMP/one.out") results"

# shards, concatenated, are the one run (exit 1 only for the shard with the bad file)
same_as_one() {
    cmp -s "$TMP/one.out" "$TMP/$1.out" && pass || fail "$1: the shards do not concatenate to the one run"
    cmp -s "$TMP/one.err" "$TMP/$1.err" && pass || fail "$1: stderr differs: $(cat "$TMP/$1.err")"
}
for N in 3 4; do
    : >"$TMP/given.out"
    : >"$TMP/given.err"
    k=1
    while [ $k -le $N ]; do
        "$BIN" --shard $k/$N "$@" >>"$TMP/given.out" 2>>"$TMP/given.err"
        k=$((k + 1))
    done
    same_as_one given
done

# the schedulers' variables: Slurm from 1 (MIN/MAX) and from 0 with a step (COUNT), Kubernetes
# from 0, GNU parallel from 1
: >"$TMP/slurm.out"; : >"$TMP/slurm.err"
for id in 1 2 3 4; do
    env SLURM_ARRAY_TASK_ID=$id SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=4 "$BIN" --shard auto "$@" \
        >>"$TMP/slurm.out" 2>>"$TMP/slurm.err"
done
same_as_one slurm
: >"$TMP/slurm.out"; : >"$TMP/slurm.err"
for id in 0 5 10; do
    env SLURM_ARRAY_TASK_ID=$id SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_STEP=5 SLURM_ARRAY_TASK_COUNT=3 \
        "$BIN" --shard auto "$@" >>"$TMP/slurm.out" 2>>"$TMP/slurm.err"
done
same_as_one slurm
: >"$TMP/k8s.out"; : >"$TMP/k8s.err"
for id in 0 1 2; do
    env JOB_COMPLETION_INDEX=$id "$BIN" --shard auto/3 "$@" >>"$TMP/k8s.out" 2>>"$TMP/k8s.err"
done
same_as_one k8s
: >"$TMP/par.out"; : >"$TMP/par.err"
for seq in 1 2 3 4 5; do
    env PARALLEL_SEQ=$seq "$BIN" --shard auto/5 "$@" >>"$TMP/par.out" 2>>"$TMP/par.err"
done
same_as_one par

# GNU parallel itself: four jobs at once, their outputs kept in job order (--keep-order)
if command -v parallel >/dev/null 2>&1; then
    parallel --will-cite --keep-order -N0 -j 4 "$BIN" --shard auto/4 "$@" ::: 1 2 3 4 >"$TMP/gnu.out" 2>"$TMP/gnu.err"
    grep -v '^$' "$TMP/gnu.err" >"$TMP/gnu.err.kept" || true
    mv "$TMP/gnu.err.kept" "$TMP/gnu.err"
    same_as_one gnu
else
    fail "needs GNU parallel (Debian's parallel): run tools/setup.sh"
fi

# refusals: one line, usage error
expect_exit 2 "--shard auto without a scheduler" -- env -u SLURM_ARRAY_TASK_ID -u JOB_COMPLETION_INDEX \
    -u PARALLEL_SEQ "$BIN" --shard auto "$@"
expect_grep "no scheduler's task index" "$TMP/err" "no index in the environment"
expect_exit 2 "an index outside the count" -- env JOB_COMPLETION_INDEX=3 "$BIN" --shard auto/3 "$@"
expect_grep "JOB_COMPLETION_INDEX 3 is outside 3 tasks" "$TMP/err" "an index outside the count"
expect_exit 2 "PARALLEL_SEQ without the count" -- env PARALLEL_SEQ=1 "$BIN" --shard auto "$@"

# --skip-existing: a run stopped part-way, resumed
expect_exit 1 "-o" -- "$BIN" --device cpu --format json -o "$TMP/all" "$TMP/in"
cp -r "$TMP/all" "$TMP/kept"
first=$(ls "$TMP/all" | head -1)
last=$(ls "$TMP/all" | tail -1)
rm "$TMP/kept/$first" "$TMP/kept/$last"
expect_exit 1 "--skip-existing" -- "$BIN" --device cpu --format json -o "$TMP/kept" --skip-existing "$TMP/in"
diff -r "$TMP/all" "$TMP/kept" >/dev/null && pass || fail "--skip-existing: the resumed folder differs"
expect_grep "passed over: their outputs are there already" "$TMP/err" "the passed-over inputs are counted"
expect_grep "99-bad.png" "$TMP/err" "the bad file (no output) is tried again"
expect_exit 2 "--skip-existing without -o" -- "$BIN" --device cpu --skip-existing "$TMP/in"
finish
