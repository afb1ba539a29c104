#!/usr/bin/env bash
# Measures what the small-daemon JVM flags and the AppCDS archive buy: wall time and peak RSS
# of `shmguard scan`, and the daemon's start-to-READY time (READY=1 on its NOTIFY_SOCKET, sent
# after its first full pass) and its RSS after many passes. Runs in a sandbox of its own (new
# PID and mount namespaces, private tmpfs over /dev/shm holding 20 NCCL-sized files and over
# /run), never against the machine's real /dev/shm.
#
#   bench/jvm-flags.sh [RUNS]          (as root, after mvn -B -Ppackages -DskipTests package)
#
# Prints one line per configuration. A benchmark: it reports figures and fails on nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
# shellcheck source=bench/sandbox.sh
. bench/sandbox.sh
mount -t tmpfs -o size=16m,mode=755 bench-run /run
cat > "$work/config.yaml" <<YAML
mounts: [auto]
reap:
  dryRun: true
  requireHostPidNamespace: false
daemon:
  interval: 200ms
advice:
  enabled: false
metrics:
  listen: "127.0.0.1:19477"
YAML

# Starts the daemon with a NOTIFY_SOCKET, prints seconds from start to READY=1, then, 20 s later
# (about 100 passes), its RSS in KiB; stops it with SIGTERM.
cat > "$work/ready.py" <<'PY'
import os, socket, subprocess, sys, threading, time
path = sys.argv[1]
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(path)
env = dict(os.environ, NOTIFY_SOCKET=path)
ready = threading.Event()
def drain():
    # Keep reading, as systemd does: STATUS= and WATCHDOG=1 follow after every pass.
    while True:
        try:
            msg = sock.recv(4096).decode()
        except OSError:
            return
        if "READY=1" in msg.split("\n"):
            ready.set()
start = time.monotonic()
p = subprocess.Popen(sys.argv[2:], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
threading.Thread(target=drain, daemon=True).start()
if not ready.wait(120):
    p.kill()
    sys.exit("no READY=1 within 120 s")
took = time.monotonic() - start
time.sleep(20)
rss = [l.split()[1] for l in open(f"/proc/{p.pid}/status") if l.startswith("VmRSS:")][0]
p.terminate()
p.wait(60)
os.unlink(path)
print(f"{took:.3f} {rss}")
PY

small="-XX:+UseSerialGC -Xms8m -Xmx96m -XX:TieredStopAtLevel=1 -Xss512k"
# The archive, made exactly as the package's make-cds-archive makes it.
"$java" -XX:DumpLoadedClassList="$work/classes.lst" -cp "$jar" org.shmguard.cli.Main scan --json -c "$work/config.yaml" >/dev/null
"$java" -Xshare:dump -XX:SharedClassListFile="$work/classes.lst" -XX:SharedArchiveFile="$work/shmguard.jsa" -cp "$jar" >/dev/null
cds="-XX:SharedArchiveFile=$work/shmguard.jsa -Xshare:auto"

declare -A configs=(
  [1-default]=""
  [2-default+appcds]="$cds"
  [3-small]="$small"
  [4-small+appcds]="$small $cds"
)

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo "java: $("$java" -version 2>&1 | head -1); cpus: $(nproc); runs: $runs"
printf '%-20s %14s %14s %16s %18s\n' config scan-wall-s scan-rss-MiB daemon-ready-s daemon-rss-MiB
for name in $(printf '%s\n' "${!configs[@]}" | sort); do
  opts=${configs[$name]}
  : > "$work/wall"; : > "$work/rss"
  for _ in $(seq "$runs"); do
    # shellcheck disable=SC2086
    /usr/bin/time -f '%e %M' -o "$work/t" "$java" $opts -cp "$jar" org.shmguard.cli.Main scan -c "$work/config.yaml" >/dev/null
    read -r wall rss < "$work/t"
    echo "$wall" >> "$work/wall"; echo "$rss" >> "$work/rss"
  done
  : > "$work/ready"; : > "$work/drss"
  for _ in $(seq 3); do
    # shellcheck disable=SC2086
    read -r ready rss < <(python3 "$work/ready.py" "$work/notify.sock" "$java" $opts -cp "$jar" \
      org.shmguard.cli.Main daemon -c "$work/config.yaml")
    echo "$ready" >> "$work/ready"; echo "$rss" >> "$work/drss"
  done
  printf '%-20s %14s %14s %16s %18s\n' "$name" "$(median < "$work/wall")" \
    "$(median < "$work/rss" | awk '{printf "%.1f", $1/1024}')" \
    "$(median < "$work/ready" | awk '{printf "%.2f", $1}')" \
    "$(median < "$work/drss" | awk '{printf "%.1f", $1/1024}')"
done
umount /run
umount /dev/shm
