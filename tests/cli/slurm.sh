#!/bin/sh
# A real scheduler: a one-node Slurm cluster (Debian's slurmctld, slurmd, slurm-client and
# munge, which tools/setup.sh installs) started on this host with everything (key, sockets,
# state, spool, logs, pid files) in a temporary folder, nothing in /etc or /run touched. Two
# array jobs of `ppocr-vk --shard auto` over small word images and one bad file, ids 1-4 and
# 0-6:2 (MIN and STEP): each task's output and stderr, concatenated in task order, are byte for
# byte one run's, and only the task with the bad file exits 1 (sbatch --wait too, the highest).
# Both arrays are queued at once and all eight tasks run together; about 13 s, most of it
# sbatch --wait's polling. slurmd must run as root: skipped otherwise. The daemons are stopped at
# the end, failed or interrupted or not, and no process of the cluster or its jobs is left behind.
. "$(dirname "$0")/lib/common.sh"

if [ "$(id -u)" -ne 0 ]; then
    echo "skipped: slurmd needs root (CI runs as root)"
    exit 0
fi
for cmd in munged slurmctld slurmd sbatch sinfo squeue scancel timeout; do
    if ! command -v $cmd >/dev/null 2>&1; then
        echo "FAIL: $cmd is missing: run tools/setup.sh (it installs slurmctld slurmd slurm-client munge)" >&2
        exit 1
    fi
done

# The cluster's folder: under /tmp whatever TMPDIR is, as munge's socket path must be short. Its
# path, in the environment of every daemon, job and client started here, marks their processes
# for the last sweep of stop_cluster.
D=$(mktemp -d /tmp/ppocr-slurm.XXXXXX) || exit 1
chmod 755 "$D" # munged wants every folder above its socket searchable by all
mkdir -m 755 "$D/munge"
mkdir "$D/state" "$D/spool" "$D/in"
export PPOCR_SLURM_TEST_CLUSTER="$D"
export SLURM_CONF="$D/slurm.conf"

# alive PID: the process is there and not a zombie
alive() {
    [ -r "/proc/$1/stat" ] || return 1
    st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
    [ -n "$st" ] && [ "$st" != Z ]
}

# stop PID NAME: SIGTERM, up to 30 s to exit, then SIGKILL; reaped (the daemons are children)
stop() {
    [ -n "$1" ] || return 0
    if alive "$1"; then
        kill -TERM "$1" 2>/dev/null
        i=0
        while alive "$1" && [ $i -lt 150 ]; do sleep 0.2; i=$((i + 1)); done
        if alive "$1"; then
            echo "slurm.sh: $2 (pid $1) did not stop in 30 s: killed" >&2
            kill -KILL "$1" 2>/dev/null
        fi
    fi
    wait "$1" 2>/dev/null
}

MUNGED=""
CTLD=""
SLURMD=""
SUBMITTERS=""
stop_cluster() {
    trap - EXIT INT TERM HUP
    # an sbatch --wait still waiting (the test was interrupted): timeout passes the signal on
    for f in "$D"/*/timeout.pid; do
        [ -f "$f" ] && [ ! -f "${f%/*}/sbatch.rc" ] && kill -TERM "$(cat "$f")" 2>/dev/null
    done
    for pid in $SUBMITTERS; do
        wait "$pid" 2>/dev/null
    done
    if [ -n "$CTLD" ] && alive "$CTLD"; then
        timeout 30 scancel --quiet --full --partition=ocr >/dev/null 2>&1
        i=0
        while [ -n "$(timeout 10 squeue -h -o %i 2>/dev/null)" ] && [ $i -lt 60 ]; do sleep 0.5; i=$((i + 1)); done
    fi
    stop "$SLURMD" slurmd
    stop "$CTLD" slurmctld
    stop "$MUNGED" munged
    # Whatever else of this cluster is left (a job step slurmd could not end): its processes carry
    # the folder's path in their environment.
    unset PPOCR_SLURM_TEST_CLUSTER
    for p in /proc/[0-9]*; do
        pid=${p#/proc/}
        [ "$pid" != $$ ] || continue
        if { tr '\0' '\n' <"$p/environ" | grep -qxF "PPOCR_SLURM_TEST_CLUSTER=$D"; } 2>/dev/null; then
            echo "slurm.sh: left behind, killed: $pid $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)" >&2
            kill -KILL "$pid" 2>/dev/null
        fi
    done
    rm -rf "$D" "$TMP"
}
trap stop_cluster EXIT
trap 'exit 1' INT TERM HUP

# what the cluster wrote, for a failure's message
logs() {
    for f in "$D"/munged.log "$D"/slurmctld.log "$D"/slurmd.log "$D"/*.stderr; do
        [ -s "$f" ] || continue
        echo "--- $(basename "$f") (last lines):" >&2
        tail -n 15 "$f" >&2
    done
}
die() {
    echo "FAIL: $*" >&2
    logs
    exit 1
}

# Two ports for slurmctld and slurmd, free now, below the ephemeral range: from the pid, the next
# pair where one is taken (/proc/net/tcp*: local address and port in hex, any state).
port_taken() {
    hex=$(printf '%04X' "$1")
    awk -v p=":$hex" 'substr($2, length($2) - 4) == p { found = 1 } END { exit !found }' \
        /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
port=$((20000 + ($$ % 5000) * 2))
tries=0
while port_taken $port || port_taken $((port + 1)); do
    port=$((port + 2))
    tries=$((tries + 1))
    [ $tries -lt 500 ] || die "no two free TCP ports from $((port - 1000))"
done

# munge: a fresh key, the daemon in the foreground (it logs to stderr then)
dd if=/dev/urandom of="$D/munge.key" bs=1024 count=1 2>/dev/null
chmod 600 "$D/munge.key"
munged --foreground --socket="$D/munge/munge.sock" --key-file="$D/munge.key" --pid-file="$D/munged.pid" \
    --log-file="$D/munged.log" --seed-file="$D/munged.seed" </dev/null >"$D/munged.stdout" 2>"$D/munged.log" &
MUNGED=$!
i=0
until [ -S "$D/munge/munge.sock" ]; do
    alive $MUNGED || die "munged exited at its start"
    [ $i -lt 600 ] || die "munged made no socket in 60 s"
    sleep 0.1
    i=$((i + 1))
done

node=$(hostname -s 2>/dev/null)
[ -n "$node" ] || node=$(hostname)
cpus=$(nproc)
cat >"$SLURM_CONF" <<EOF
ClusterName=ppocr-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$D/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
# sbatch --wait polls at 2 s, then at 8 s where MinJobAge/2 is not above 8 (its default, 300 s,
# lets the wait grow to 32 s)
MinJobAge=16
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
# all eight tasks of the two arrays at once (four to a CPU): they are short, and the scheduler
# starts the next pending ones only every few seconds
PartitionName=ocr Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF
slurmctld -D -f "$SLURM_CONF" </dev/null >"$D/slurmctld.stdout" 2>"$D/slurmctld.stderr" &
CTLD=$!
slurmd -D -f "$SLURM_CONF" -N "$node" </dev/null >"$D/slurmd.stdout" 2>"$D/slurmd.stderr" &
SLURMD=$!

# up when sinfo shows the node idle (a drained or down node is a failure at once)
i=0
while :; do
    alive $CTLD || die "slurmctld exited"
    alive $SLURMD || die "slurmd exited"
    state=$(timeout 20 sinfo -h -N -n "$node" -o %T 2>/dev/null)
    case $state in
    idle) break ;;
    drain* | down* | fail*) die "node $node is $state: $(timeout 20 sinfo -h -R 2>&1)" ;;
    esac
    [ $i -lt 240 ] || die "node $node not idle in 120 s (sinfo: '$state')"
    sleep 0.5
    i=$((i + 1))
done
pass

# the inputs: small word images and a file that is not one
word_folder "$D/in"

"$BIN" --device cpu --format json "$D/in" >"$D/one.out" 2>"$D/one.err"
one_rc=$?
[ $one_rc -eq 1 ] && pass || fail "one run: exit $one_rc, expected 1 (the bad file): $(head -c 400 "$D/one.err")"
[ "$(wc -l <"$D/one.out")" -ge 8 ] && pass || fail "one run: $(wc -l <"$D/one.out") results"

# one task: its shard's output, stderr and exit status in the array's folder
cat >"$D/task.sh" <<'EOF'
#!/bin/sh
out=$1
"$PPOCR_SLURM_TEST_BIN" --shard auto --device cpu --format json "$PPOCR_SLURM_TEST_IN" \
    >"$out/out.$SLURM_ARRAY_TASK_ID" 2>"$out/err.$SLURM_ARRAY_TASK_ID"
rc=$?
echo $rc >"$out/rc.$SLURM_ARRAY_TASK_ID"
exit $rc
EOF
# the tasks run in the cluster's folder
bin_path="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
export PPOCR_SLURM_TEST_BIN="$bin_path" PPOCR_SLURM_TEST_IN="$D/in"

# submit NAME ARRAY: sbatch --wait in the background (both arrays are in the queue at once), its
# exit status in $D/NAME/sbatch.rc; 15 minutes at most
submit() {
    mkdir "$D/$1"
    (
        timeout 900 sbatch --wait --quiet --array="$2" --job-name="ppocr-$1" --chdir="$D" \
            --output="$D/$1/slurm.%a.log" "$D/task.sh" "$D/$1" >"$D/$1/sbatch.out" 2>"$D/$1/sbatch.err" &
        echo $! >"$D/$1/timeout.pid"
        wait $!
        echo $? >"$D/$1/sbatch.rc"
    ) &
    SUBMITTERS="$SUBMITTERS $!"
}
submit a "1-4"
pid_a=$!
submit b "0-6:2"
pid_b=$!
wait $pid_a
wait $pid_b

# check NAME IDS...: the tasks' outputs concatenated in task order are the one run's; the task
# with the bad file exited 1, the others 0, and sbatch --wait 1 (the highest)
check() {
    name=$1
    shift
    rc=$(cat "$D/$name/sbatch.rc" 2>/dev/null)
    if [ "$rc" = 124 ]; then
        echo "FAIL: array $name: not done in 15 minutes; the queue:" >&2
        timeout 20 squeue >&2
        logs
    fi
    [ "$rc" = 1 ] && pass || fail "array $name: sbatch --wait exit '$rc', expected 1: $(head -c 400 "$D/$name/sbatch.err")"
    : >"$D/$name/all.out"
    : >"$D/$name/all.err"
    for id in "$@"; do
        if [ ! -f "$D/$name/rc.$id" ]; then
            fail "array $name: task $id did not run: $(head -c 400 "$D/$name/slurm.$id.log" 2>/dev/null)"
            continue
        fi
        cat "$D/$name/out.$id" >>"$D/$name/all.out"
        cat "$D/$name/err.$id" >>"$D/$name/all.err"
        want=0
        ! grep -q 99-bad.png "$D/$name/err.$id" || want=1
        got=$(cat "$D/$name/rc.$id")
        [ "$got" = $want ] && pass || fail "array $name: task $id exit $got, expected $want: $(head -c 400 "$D/$name/err.$id")"
    done
    cmp -s "$D/one.out" "$D/$name/all.out" && pass || fail "array $name: the tasks' outputs do not concatenate to the one run's"
    cmp -s "$D/one.err" "$D/$name/all.err" && pass || fail "array $name: the tasks' stderr differs: $(head -c 400 "$D/$name/all.err")"
    # every task had some of the ten inputs
    for id in "$@"; do
        [ -s "$D/$name/out.$id" ] || [ -s "$D/$name/err.$id" ] && pass || fail "array $name: task $id had no input"
    done
}
check a 1 2 3 4
check b 0 2 4 6
[ "$FAILED" -eq 0 ] || logs
finish
