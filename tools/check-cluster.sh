#!/bin/sh
# SPDX-License-Identifier: MIT
# make check-cluster: the recipes of climg(1), BATCHES, "Many machines", run for real on this
# one machine through the engines of Debian's packages:
#   - Slurm: a one-node cluster (munged, slurmctld and slurmd on 127.0.0.1, on ports chosen
#     here, configured in a scratch directory) runs a job array of 4 shards; one array task
#     is cancelled mid-shard (scancel), and `sbatch --array=1` of the same command finishes it;
#   - GNU parallel: 4 shards over ssh to an sshd started here on 127.0.0.1 and a port of its
#     own, with a key made for the run (two host names, node1 and node2, for that one sshd);
#     one job's ssh connection is cut (its ssh killed) and another job's climg is killed
#     with SIGKILL, as on a machine that crashes; `--resume-failed` reruns both.
# For each engine the outputs must equal an unsharded run's (the same files, the same bytes,
# no file written by two shards), and the --report files of every shard and attempt, merged
# by the man page's jq recipe, must list every input exactly once, with the SHA-256 of what
# is on disk.
# Needs root (slurmd runs jobs as their user; sshd) and the --dev packages of
# tools/install-deps.sh; no systemd: each daemon runs in the foreground as a child of this
# script and is stopped by its pid on the way out, whatever happens, and a last check finds
# no process left that carries this run's mark in its environment. Every wait has a time
# limit. The last line reads "N passed, N failed". CHECK_CLUSTER_KEEP=1 keeps the scratch
# directory (and its logs).
cd "$(dirname "$0")/.." || exit 1
CLIMG=$(realpath "${CLIMG:-climg}")
IMGTOOL=$(realpath "${IMGTOOL:-tests/imgtool}")
PATH=$PATH:/usr/sbin:/sbin
T0=$(date +%s)
S=""
. tests/lib.sh

# The batch: NIMG images in three directories, 4 shards of SHARE each.
NIMG=96
SHARE=24

say() { echo "== $* ($(($(date +%s) - T0)) s)"; }

# fatal WHAT: a failure that leaves nothing more to check; the EXIT trap stops everything.
fatal() {
	bad "$*"
	exit 1
}

# wait_for SECONDS WHAT CMD...: runs CMD every 0.1 s until it succeeds. After SECONDS it
# counts a failure naming WHAT and returns 1.
wait_for() {
	_wf_end=$(($(date +%s) + $1))
	_wf_what=$2
	shift 2
	until "$@" >/dev/null 2>&1; do
		if [ "$(date +%s)" -ge "$_wf_end" ]; then
			bad "gave up after $((_wf_end - T0)) s into the run waiting for $_wf_what"
			return 1
		fi
		sleep 0.1
	done
}

running() { kill -0 "$1" 2>/dev/null; }
not_running() { ! kill -0 "$1" 2>/dev/null; }

# Every process this script starts, and what they start, carries MARK in its environment
# (the daemons pass it on; the sshd sets it in its sessions), so that none can be missed.
MARK=""
marked() { env "$MARK" "$@"; }
# The pids of the processes that carry MARK.
marked_pids() {
	grep -lzx "$MARK" /proc/[0-9]*/environ 2>/dev/null | sed 's|^/proc/\([0-9]*\)/environ$|\1|'
}
none_marked() { [ -z "$(marked_pids)" ]; }

# ---- daemons ------------------------------------------------------------------------------

DAEMONS=""

# start NAME LOG CMD...: runs CMD (in the foreground mode of the daemon) in the background.
start() {
	_sd_name=$1
	_sd_log=$2
	shift 2
	env "$MARK" "$@" >"$_sd_log" 2>&1 &
	eval "PID_$_sd_name=$!"
	DAEMONS="$_sd_name $DAEMONS"
}

# stop NAME: SIGTERM, then SIGKILL after 10 s.
stop() {
	eval "_st_pid=\${PID_$1:-}"
	[ -n "$_st_pid" ] || return 0
	kill -TERM "$_st_pid" 2>/dev/null
	_st_end=$(($(date +%s) + 10))
	while running "$_st_pid" && [ "$(date +%s)" -lt "$_st_end" ]; do sleep 0.1; done
	if running "$_st_pid"; then
		bad "$1 did not stop within 10 s of SIGTERM; killed"
		kill -KILL "$_st_pid" 2>/dev/null
	fi
	wait "$_st_pid" 2>/dev/null
	eval "PID_$1="
}

# A free TCP port on 127.0.0.1 in PORT, none given before.
PORTS=""
pick_port() {
	for _pp_try in $(seq 50); do
		PORT=$((20000 + $(od -An -N2 -tu2 /dev/urandom) % 40000))
		case " $PORTS " in *" $PORT "*) continue ;; esac
		perl -MIO::Socket::INET -e 'IO::Socket::INET->new(LocalAddr => "127.0.0.1",
			LocalPort => $ARGV[0], Listen => 1, ReuseAddr => 1) or exit 1' "$PORT" || continue
		PORTS="$PORTS $PORT"
		return 0
	done
	fatal "no free TCP port on 127.0.0.1 in 50 tries"
}

# ---- the way out ---------------------------------------------------------------------------

SLURM_JOBS=""
PAR_PID=""

# ppid PID: its parent's pid (the field after the command name in /proc/PID/stat).
ppid() { sed 's/.*) [A-Za-z] \([0-9]*\) .*/\1/' "/proc/$1/stat" 2>/dev/null; }
# ssh_under PID: the ssh processes that PID started, as children or grandchildren.
ssh_under() {
	for _su in $(pgrep -x ssh); do
		_su_p=$(ppid "$_su")
		if [ "$_su_p" = "$1" ] || [ "$(ppid "${_su_p:-0}")" = "$1" ]; then echo "$_su"; fi
	done
}
no_jobs() { _nj=$(timeout 20 squeue -h -o %i 2>/dev/null) && [ -z "$_nj" ]; }

finish() {
	trap - EXIT INT TERM HUP
	if [ -n "$PAR_PID" ] && running "$PAR_PID"; then
		# its ssh connections first: the remote side then stops the jobs (SIGTERM)
		for _p in $(ssh_under "$PAR_PID"); do kill -KILL "$_p" 2>/dev/null; done
		kill -TERM "$PAR_PID" 2>/dev/null
		sleep 1
		kill -KILL "$PAR_PID" 2>/dev/null
		wait "$PAR_PID" 2>/dev/null
	fi
	if [ -n "$SLURM_JOBS" ] && [ -n "${PID_slurmctld:-}" ]; then
		timeout 20 scancel $SLURM_JOBS 2>/dev/null
		wait_for 30 "the Slurm jobs to end" no_jobs
	fi
	for _d in $DAEMONS; do stop "$_d"; done
	if [ -n "$MARK" ]; then
		if wait_for 15 "the processes of the run to end" none_marked; then
			ok
		else
			for _p in $(marked_pids); do
				bad "left behind: pid $_p: $(tr '\0' ' ' <"/proc/$_p/cmdline" 2>/dev/null | cut -c1-120)"
				kill -KILL "$_p" 2>/dev/null
			done
		fi
	fi
	if [ -n "$S" ]; then
		if [ "${CHECK_CLUSTER_KEEP:-0}" = 1 ]; then echo "kept $S"; else rm -rf "$S"; fi
	fi
	echo "check-cluster took $(($(date +%s) - T0)) s"
	echo "$pass passed, $fail failed"
	[ "$fail" = 0 ]
	exit
}
trap finish EXIT
trap 'bad "interrupted"; exit 1' INT TERM HUP

# ---- what it needs -------------------------------------------------------------------------

[ "$(id -u)" = 0 ] || fatal "check-cluster runs as root (slurmd and sshd need it)"
for c in mungekey munged munge unmunge slurmctld slurmd sbatch squeue scancel scontrol sinfo sshd ssh \
	ssh-keygen parallel jq perl pgrep timeout sha256sum; do
	command -v "$c" >/dev/null ||
		fatal "$c is not installed (sh tools/install-deps.sh --dev installs what check-cluster needs)"
done
[ -x "$CLIMG" ] && [ -x "$IMGTOOL" ] || fatal "build climg and tests/imgtool first (make climg tests/imgtool)"

S=$(mktemp -d "${TMPDIR:-/tmp}/climg-cluster.XXXXXX") || fatal "cannot make a scratch directory"
# munged wants every directory above its socket searchable by all
chmod 755 "$S"
T=$S
MARK="CLIMG_CHECK_CLUSTER=$S"
mkdir -p "$S/bin" "$S/log" "$S/run" "$S/munge" "$S/slurm-state" "$S/slurm-spool" "$S/ssh" \
	"$S/photos/a" "$S/photos/b/c"
chmod 700 "$S/munge" "$S/ssh"
# climg on the PATH of the jobs, as an installed one would be
ln -s "$CLIMG" "$S/bin/climg"
PATH=$S/bin:$PATH
CLIMG_CACHE_DIR=$S/cache
PARALLEL_HOME=$S/parallel
SLURM_CONF=$S/slurm.conf
export PATH CLIMG_CACHE_DIR PARALLEL_HOME SLURM_CONF

# ---- the batch, and the unsharded run every engine must match ------------------------------

say "making $NIMG images"
i=1
while [ "$i" -le $((NIMG / 3)) ]; do
	"$IMGTOOL" make 1600 1200 3 "photo:$i" "$S/photos/a/$i.jpg" &&
		"$IMGTOOL" make 1200 1600 3 "photo:$((i + 1000))" "$S/photos/b/c/$i.jpg" &&
		"$IMGTOOL" make 1000 800 4 "photo:$((i + 2000))" "$S/photos/b/$i.png" ||
		fatal "imgtool cannot make the images"
	i=$((i + 1))
done
for d in whole slurm ssh; do
	mkdir -p "$S/$d"
	ln -s ../photos "$S/$d/photos"
done

say "the unsharded run"
cd "$S/whole" || fatal "cannot enter $S/whole"
expect_exit 0 "the unsharded run" timeout 300 climg photos/ resize:50% -o 'out/%d/%n.png' --report ref.jsonl
[ "$(jq -r .status ref.jsonl | grep -c '^ok$')" = "$NIMG" ] || fatal "the unsharded run did not write all $NIMG images"
(cd out && find . -type f | LC_ALL=C sort) >files
jq -r .input ref.jsonl | LC_ALL=C sort >inputs
echo "   device: $(jq -r .device ref.jsonl | sort | uniq -c | head -n 3)"

# the man page's check of the files against the merged report
sums_match() {
	jq -r 'select(.status == "ok") | .outputs[] | "\(.sha256)  \(.path)"' all.jsonl | sha256sum -c --quiet
}

# check_set ENGINE: the outputs in out/ and the reports in reports/ of the current directory
# against the unsharded run.
check_set() {
	(cd out && find . -type f | LC_ALL=C sort) >files
	check "$1: the shards wrote the files of the unsharded run, no more" diff "$S/whole/files" files
	_cs_diff=0
	while read -r f; do
		cmp -s "$S/whole/out/$f" "out/$f" || {
			echo "    | differs: $f"
			_cs_diff=$((_cs_diff + 1))
		}
	done <"$S/whole/files"
	[ "$_cs_diff" = 0 ] && ok || bad "$1: $_cs_diff outputs differ from the unsharded run's"
	# the man page's merge: one line per input, ok over failed over skipped
	jq -s -c 'group_by(.index)[] | min_by({ok: 0, failed: 1, skipped: 2}[.status])' reports/*.jsonl > all.jsonl
	jq -r .input all.jsonl | LC_ALL=C sort >inputs
	check "$1: the merged report lists every input exactly once" diff "$S/whole/inputs" inputs
	check "$1: the merged report's indexes are 1 to $NIMG" \
		test "$(jq -r .index all.jsonl | tr '\n' ' ')" = "$(seq "$NIMG" | tr '\n' ' ')"
	check "$1: every input ok or skipped (done by an earlier attempt)" \
		test -z "$(jq -r 'select(.status != "ok" and .status != "skipped") | .input' all.jsonl)"
	check "$1: the merged report's SHA-256s are those of the files" sums_match
	jq -r 'select(.status == "ok") | .outputs[].path' reports/*.jsonl | LC_ALL=C sort >written
	check "$1: no file written twice, over every shard and attempt" test -z "$(uniq -d written)"
	echo "   $1: merged report: $(jq -r .status all.jsonl | sort | uniq -c | tr -s ' \n' ' ')"
}

# ---- Slurm ---------------------------------------------------------------------------------

say "starting munged, slurmctld and slurmd"
mungekey -c -k "$S/munge/munge.key" >"$S/log/mungekey" 2>&1 || fatal "mungekey failed"
start munged "$S/log/munged.out" munged -F --key-file="$S/munge/munge.key" \
	--socket="$S/run/munge.sock" --pid-file="$S/munge/munged.pid" \
	--log-file="$S/log/munged.log" --seed-file="$S/munge/seed"
munge_ok() { munge -S "$S/run/munge.sock" -n | unmunge -S "$S/run/munge.sock"; }
wait_for 20 "munged to answer" munge_ok || {
	tail -n 5 "$S/log/munged.log" "$S/log/munged.out"
	fatal "munged did not start"
}
NODE=$(uname -n | cut -d. -f1)
pick_port
CTLD_PORT=$PORT
pick_port
SLURMD_PORT=$PORT
cat >"$SLURM_CONF" <<EOF
ClusterName=climgcheck
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$S/run/munge.sock
CredType=cred/munge
StateSaveLocation=$S/slurm-state
SlurmdSpoolDir=$S/slurm-spool
SlurmctldPidFile=$S/run/slurmctld.pid
SlurmdPidFile=$S/run/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
ReturnToService=2
MinJobAge=3600
KillWait=10
SlurmdParameters=config_overrides
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=check Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
# slurmd loads a cgroup plugin whatever else is configured, and fails where it finds no
# cgroup file system (a container, a chroot); cgroup/v1 starts without one, and with
# proctrack/linuxproc and task/none nothing uses it.
echo "CgroupPlugin=cgroup/v1" >"$S/cgroup.conf"
start slurmctld "$S/log/slurmctld.out" slurmctld -D -f "$SLURM_CONF"
start slurmd "$S/log/slurmd.out" slurmd -D -f "$SLURM_CONF"
node_idle() { [ "$(timeout 20 sinfo -h -o %T)" = idle ]; }
wait_for 60 "the Slurm node to be idle" node_idle || {
	tail -n 5 "$S/log/slurmctld.log" "$S/log/slurmd.log" "$S/log/slurmctld.out" "$S/log/slurmd.out"
	fatal "the one-node Slurm cluster did not come up"
}

# task JOB TASK: "JOBID STATE" of array task TASK of array job JOB, once it has its own job.
task() {
	timeout 20 scontrol -o show job "$1_$2" 2>/dev/null |
		sed -n "s/^JobId=\([0-9]*\) .*ArrayTaskId=$2 .*JobState=\([A-Z_]*\) .*/\1 \2/p" | head -n 1
}
task_state() { task "$@" | cut -d' ' -f2; }
array_done() {
	_ad=$(timeout 20 squeue -h -j "$1" -o %i 2>/dev/null) && [ -z "$_ad" ]
}
# shard_started JOB TASK: the task runs and its report has a line.
shard_started() {
	task_no=$2
	set -- $(task "$1" "$2")
	[ "${2:-}" = RUNNING ] && [ -s "reports/$((task_no + 1))-$1.jsonl" ]
}
# submitted OUTPUT: the job id in sbatch's "Submitted batch job N", kept for the way out.
submitted() {
	case $1 in
	"Submitted batch job "[0-9]*) JOB=${1##* } ;;
	*) fatal "sbatch failed: $1" ;;
	esac
	SLURM_JOBS="$SLURM_JOBS $JOB"
}

say "slurm: a job array of 4 shards"
cd "$S/slurm" || fatal "cannot enter $S/slurm"
# the man page's recipe (the jobs' own output goes to slurm-JOB_TASK.out here)
mkdir -p reports
out=$(marked timeout 30 sbatch --array=0-3 --wrap 'climg --shard $((SLURM_ARRAY_TASK_ID + 1))/4 --skip-existing photos/ resize:50% -o out/%d/%n.png --report reports/$((SLURM_ARRAY_TASK_ID + 1))-$SLURM_JOB_ID.jsonl' 2>&1)
submitted "$out"
ARRAY=$JOB
wait_for 120 "shard 2 (array task 1) to finish an image" shard_started "$ARRAY" 1 ||
	fatal "shard 2 never got going"
set -- $(task "$ARRAY" 1)
KILLED=$1
timeout 30 scancel "${ARRAY}_1" || bad "scancel ${ARRAY}_1 failed"
wait_for 300 "the job array to finish" array_done "$ARRAY" || fatal "the job array did not finish"
for t in 0 2 3; do
	check "slurm: array task $t completed" test "$(task_state "$ARRAY" $t)" = COMPLETED
done
check "slurm: array task 1 was cancelled" test "$(task_state "$ARRAY" 1)" = CANCELLED
n=$(wc -l <"reports/2-$KILLED.jsonl")
echo "   slurm: shard 2 was cancelled after $n of its $SHARE images"
check "slurm: shard 2 was cancelled mid-way ($n of $SHARE images)" test "$n" -ge 1 -a "$n" -lt "$SHARE"
check "slurm: the set is not complete before the rerun" test "$(find out -type f | wc -l)" -lt "$NIMG"
check "slurm: the cancelled climg left no temporary file (SIGTERM)" test -z "$(find out -name '.*')"

say "slurm: shard 2 again"
out=$(marked timeout 30 sbatch --array=1 --wrap 'climg --shard $((SLURM_ARRAY_TASK_ID + 1))/4 --skip-existing photos/ resize:50% -o out/%d/%n.png --report reports/$((SLURM_ARRAY_TASK_ID + 1))-$SLURM_JOB_ID.jsonl' 2>&1)
submitted "$out"
RERUN=$JOB
wait_for 300 "the rerun of shard 2" array_done "$RERUN" || fatal "the rerun did not finish"
check "slurm: the rerun completed" test "$(task_state "$RERUN" 1)" = COMPLETED
set -- $(task "$RERUN" 1)
r=reports/2-${1:-none}.jsonl
check "slurm: the rerun's report lists the whole shard" test "$(wc -l <"$r" 2>/dev/null)" = "$SHARE"
check "slurm: the rerun skipped what the cancelled task had written" \
	test "$(grep -c '"status":"skipped"' "$r")" -ge "$n"
check "slurm: the rerun wrote the rest" test "$(grep -c '"status":"ok"' "$r")" -ge 1
check_set slurm

say "stopping slurmd, slurmctld and munged"
for d in slurmd slurmctld munged; do stop "$d"; done
SLURM_JOBS=""

# ---- GNU parallel over ssh -----------------------------------------------------------------

say "starting sshd on 127.0.0.1"
pick_port
SSH_PORT=$PORT
ssh-keygen -q -t ed25519 -N '' -f "$S/ssh/host_key" -C check-cluster-host || fatal "ssh-keygen failed"
ssh-keygen -q -t ed25519 -N '' -f "$S/ssh/id" -C check-cluster || fatal "ssh-keygen failed"
cp "$S/ssh/id.pub" "$S/ssh/authorized_keys"
echo "[127.0.0.1]:$SSH_PORT $(cat "$S/ssh/host_key.pub")" >"$S/ssh/known_hosts"
cat >"$S/ssh/sshd_config" <<EOF
ListenAddress 127.0.0.1:$SSH_PORT
HostKey $S/ssh/host_key
PidFile $S/run/sshd.pid
AuthorizedKeysFile $S/ssh/authorized_keys
AuthenticationMethods publickey
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
PrintMotd no
PrintLastLog no
SetEnv PATH=$S/bin:/usr/local/bin:/usr/bin:/bin CLIMG_CACHE_DIR=$CLIMG_CACHE_DIR $MARK
EOF
cat >"$S/ssh/config" <<EOF
Host node1 node2
	HostName 127.0.0.1
	Port $SSH_PORT
	User $(id -un)
	IdentityFile $S/ssh/id
	IdentitiesOnly yes
	UserKnownHostsFile $S/ssh/known_hosts
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking yes
	CheckHostIP no
	BatchMode yes
	ConnectTimeout 10
EOF
# sshd's privilege separation directory, compiled in; the package makes it at boot. It stays:
# another sshd may be using it.
[ -d /run/sshd ] || mkdir -m 755 /run/sshd
start sshd "$S/log/sshd.log" "$(command -v sshd)" -D -e -f "$S/ssh/sshd_config"
PARALLEL_SSH="ssh -F $S/ssh/config"
export PARALLEL_SSH
wait_for 30 "sshd to let node1 in" timeout 20 ssh -F "$S/ssh/config" node1 true || {
	tail -n 5 "$S/log/sshd.log"
	fatal "sshd did not start"
}

# ssh_of_job SEQ: the ssh through which GNU parallel ($PAR) runs job SEQ (through a shell
# or not): its command carries the job's environment, hex-encoded.
ssh_of_job() {
	for _sj in $(ssh_under "$PAR"); do
		tr '\0' '\n' <"/proc/$_sj/cmdline" 2>/dev/null | grep -E '^[0-9a-f]+$' |
			perl -ne 'chomp; print pack("H*", $_), "\n"' |
			grep -q "\"PARALLEL_SEQ\"}=\"$1\"" && echo "$_sj"
	done
}
# climg_of_job SEQ: the climg that job SEQ of $PAR runs on the other side.
climg_of_job() {
	for _cj in $(grep -lzx "PARALLEL_PID=$PAR" /proc/[0-9]*/environ 2>/dev/null); do
		_cj=${_cj%/environ}
		[ "$(cat "$_cj/comm" 2>/dev/null)" = climg ] &&
			grep -qzx "PARALLEL_SEQ=$1" "$_cj/environ" 2>/dev/null && echo "${_cj#/proc/}"
	done
}
job_gone() { [ -z "$(climg_of_job "$1")" ]; }
# the joblog's last verdict on each job: "SEQ ok" or "SEQ failed"
verdicts() {
	awk -F'\t' 'NR > 1 { v[$1] = ($7 == 0 && $8 == 0) ? "ok" : "failed" }
		END { for (s in v) print s, v[s] }' shards.log | sort -n | tr '\n' ' '
}

say "parallel: 4 shards over ssh"
cd "$S/ssh" || fatal "cannot enter $S/ssh"
mkdir -p reports
env "$MARK" parallel --sshlogin 2/node1,2/node2 --workdir . --joblog shards.log climg --shard {}/4 --skip-existing photos/ resize:50% -o 'out/%d/%n.png' --report 'reports/{}-$PARALLEL_PID.jsonl' ::: 1 2 3 4 \
	>"$S/log/parallel.out" 2>&1 &
PAR_PID=$!
PAR=$PAR_PID
# each as soon as its report has a line
CUT=""
CRASH=""
end=$(($(date +%s) + 120))
while [ -z "$CUT" ] || [ -z "$CRASH" ]; do
	if [ -z "$CUT" ] && [ -s "reports/2-$PAR.jsonl" ]; then
		CUT=$(ssh_of_job 2)
		[ -n "$CUT" ] || fatal "parallel: no ssh found for job 2"
		kill -KILL $CUT
		echo "   parallel: cut job 2's ssh after $(wc -l <"reports/2-$PAR.jsonl") images"
	fi
	if [ -z "$CRASH" ] && [ -s "reports/3-$PAR.jsonl" ]; then
		CRASH=$(climg_of_job 3)
		[ -n "$CRASH" ] || fatal "parallel: no climg found for job 3"
		kill -KILL $CRASH
		echo "   parallel: killed job 3's climg after $(wc -l <"reports/3-$PAR.jsonl") images"
	fi
	[ "$(date +%s)" -lt "$end" ] || fatal "shards 2 and 3 did not finish an image within 120 s"
	sleep 0.1
done
wait_for 300 "GNU parallel to finish" not_running "$PAR_PID" || fatal "GNU parallel did not finish"
wait "$PAR_PID"
rc=$?
PAR_PID=""
check "parallel: its exit status counts the 2 failed jobs ($rc)" test "$rc" = 2
check "parallel: the joblog has jobs 2 and 3 failed" test "$(verdicts)" = "1 ok 2 failed 3 failed 4 ok "
wait_for 15 "job 2's climg to stop after its ssh connection was cut" job_gone 2 && ok
n2=$(wc -l <"reports/2-$PAR.jsonl")
n3=$(wc -l <"reports/3-$PAR.jsonl")
echo "   parallel: in the end shard 2 had done $n2 of its $SHARE images, shard 3 $n3"
check "parallel: shard 2 was stopped mid-way ($n2 of $SHARE images)" test "$n2" -ge 1 -a "$n2" -lt "$SHARE"
check "parallel: shard 3 was stopped mid-way ($n3 of $SHARE images)" test "$n3" -ge 1 -a "$n3" -lt "$SHARE"
check "parallel: the set is not complete before the rerun" test "$(find out -type f ! -name '.*' | wc -l)" -lt "$NIMG"

say "parallel: --resume-failed"
expect_exit 0 "parallel: the rerun of the failed jobs" timeout 300 env "$MARK" parallel --resume-failed --sshlogin 2/node1,2/node2 --workdir . --joblog shards.log climg --shard {}/4 --skip-existing photos/ resize:50% -o 'out/%d/%n.png' --report 'reports/{}-$PARALLEL_PID.jsonl' ::: 1 2 3 4
check "parallel: the joblog has every job done" test "$(verdicts)" = "1 ok 2 ok 3 ok 4 ok "
check "parallel: the rerun made one report for each failed job" \
	test "$(ls reports | grep -v -e "-$PAR.jsonl\$" | sed 's/-.*//' | tr '\n' ' ')" = "2 3 "
for k in 2 3; do
	r=$(ls reports/$k-*.jsonl | grep -v -e "-$PAR.jsonl\$")
	if [ $k = 2 ]; then done_before=$n2; else done_before=$n3; fi
	check "parallel: the rerun of shard $k lists the whole shard" test "$(wc -l <"$r")" = "$SHARE"
	check "parallel: the rerun of shard $k skipped what the stopped job had written" \
		test "$(grep -c '"status":"skipped"' "$r")" -ge "$done_before"
	check "parallel: the rerun of shard $k wrote the rest" test "$(grep -c '"status":"ok"' "$r")" -ge 1
done
# the temporary file that the SIGKILL may have left: nothing else is hidden, and the man
# page's clean-up removes it
stale=$(find out -name '.*.climg-??????' | wc -l)
echo "   parallel: $stale temporary file(s) left by the killed climg"
check "parallel: nothing hidden under out/ but climg's temporary files" \
	test -z "$(find out -name '.*' ! -name '.*.climg-??????')"
find out -name '.*.climg-??????' -delete
check_set parallel

say "stopping sshd"
stop sshd
