#!/bin/sh
# Runs a test command and fails if any process under it wrote an AddressSanitizer, LeakSanitizer
# or UndefinedBehaviorSanitizer report, whatever the exit codes the command saw:
#   sh tests/support/sanitizer_reports.sh COMMAND [ARGUMENTS...]
# The CLI tests (tests/cli/*.sh) check the command's exit codes, and an ASan or LSan report exits
# 1 (ASan's exitcode), the code they expect of a failed image; some runs' codes are not checked at
# all. So every report is written to a file of its own (log_path, one per process) instead of to
# the stderr the scripts capture, and the files are printed and counted here.
set -u
reports=$(mktemp -d "${TMPDIR:-/tmp}/sanitizer-reports.XXXXXX") || exit 1
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$reports/report"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:log_path=$reports/report"
"$@"
status=$?
found=0
for report in "$reports"/report.*; do
    [ -f "$report" ] || continue
    # Not a finding: ASan could not start under an address-space limit (bad_inputs.sh probes
    # whether `ulimit -v` leaves room for its shadow memory, and runs without it otherwise).
    if grep -q 'ReserveShadowMemoryRange failed' "$report"; then
        continue
    fi
    found=$((found + 1))
    echo "--- sanitizer report $(basename "$report"):" >&2
    cat "$report" >&2
done
rm -rf "$reports"
if [ "$found" -gt 0 ]; then
    echo "sanitizer_reports: $found report(s) from the processes of: $*" >&2
    [ "$status" -ne 0 ] || status=1
fi
exit "$status"
