#!/usr/bin/env bash
# Measures what the small-daemon JVM flags and the AppCDS archive buy: wall time and peak RSS
# of `shmguard scan`, and the daemon's time to its first complete pass and its RSS after many
# passes. Runs in a sandbox of its own (new PID and mount namespaces, a private tmpfs over
# /dev/shm holding 20 NCCL-sized files), never against the machine's real /dev/shm.
#
#   bench/jvm-flags.sh [RUNS]          (as root, after mvn -B -Ppackages -DskipTests package)
#
# Prints one line per configuration. A benchmark: it reports figures and fails on nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
if [ "${SHMGUARD_BENCH_INSIDE:-}" != 1 ]; then
  exec env SHMGUARD_BENCH_INSIDE=1 unshare -m -p -f --mount-proc --propagation private "$0" "$@"
fi

jar=$PWD/target/shmguard.jar
java=${SHMGUARD_JAVA:-java}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mount -t tmpfs -o size=256m,mode=1777 bench-shm /dev/shm
for i in $(seq -w 1 20); do head -c 9637892 /dev/zero > /dev/shm/nccl-Bench$i; done
cat > "$work/config.yaml" <<YAML
mounts: [auto]
reap:
  dryRun: true
  requireHostPidNamespace: false
daemon:
  interval: 200ms
metrics:
  listen: "127.0.0.1:19477"
YAML

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
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$java" $opts -cp "$jar" org.shmguard.cli.Main daemon -c "$work/config.yaml" >/dev/null 2>&1 &
    pid=$!
    until curl -fs http://127.0.0.1:19477/metrics 2>/dev/null | grep -q '^shmguard_passes_total [1-9]'; do sleep 0.01; done
    echo "$(date +%s.%N) - $start" | bc >> "$work/ready"
    sleep 20   # about 100 passes at 200ms
    awk '/VmRSS/ {print $2}' "/proc/$pid/status" >> "$work/drss"
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
  printf '%-20s %14s %14s %16s %18s\n' "$name" "$(median < "$work/wall")" \
    "$(median < "$work/rss" | awk '{printf "%.1f", $1/1024}')" \
    "$(median < "$work/ready" | awk '{printf "%.2f", $1}')" \
    "$(median < "$work/drss" | awk '{printf "%.1f", $1/1024}')"
done
umount /dev/shm
