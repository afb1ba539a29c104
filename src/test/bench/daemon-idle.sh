#!/bin/sh
# Idle cost of `shmguard daemon`: CPU time used and resident memory over SECONDS (default 60)
# after a 10 s warm-up, with the shipped default configuration (auto: /dev/shm and every
# container's). Runs in a private mount and PID namespace with its own /dev/shm, as root:
#   sudo src/test/bench/daemon-idle.sh [SECONDS]
# Prints: cpu seconds used, percent of one core, VmRSS and VmHWM at the end.
set -eu
SECONDS_TO_WATCH="${1:-60}"
JAR="$(cd "$(dirname "$0")/../../.." && pwd)/target/shmguard.jar"
JAVA_OPTS="${JAVA_OPTS:--XX:+UseSerialGC -Xms16m -Xmx96m -XX:TieredStopAtLevel=1 -Xss512k}"
exec unshare --mount --pid --fork --kill-child --propagation private --mount-proc /bin/sh -c '
  mount -t tmpfs -o size=64m,mode=1777 bench-shm /dev/shm
  mount -t tmpfs -o size=16m bench-run /run
  java $2 -jar "$1" daemon 2>/run/daemon.log &
  pid=$!
  sleep 10
  tck=$(getconf CLK_TCK)
  t0=$(awk "{print \$14+\$15}" /proc/$pid/stat)
  sleep "$3"
  t1=$(awk "{print \$14+\$15}" /proc/$pid/stat)
  awk -v a="$t0" -v b="$t1" -v hz="$tck" -v s="$3" "BEGIN{printf \"cpu: %.2f s over %d s (%.3f%% of one core)\n\", (b-a)/hz, s, 100*(b-a)/hz/s}"
  grep -E "VmRSS|VmHWM" /proc/$pid/status
  kill -TERM $pid; wait $pid; echo "exit status after SIGTERM: $?"
' sh "$JAR" "$JAVA_OPTS" "$SECONDS_TO_WATCH"
