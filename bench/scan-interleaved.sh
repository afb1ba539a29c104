#!/usr/bin/env bash
# `shmguard scan` wall time and peak RSS, default JVM against /usr/bin/shmguard's flags + AppCDS,
# the two alternated run by run so that a busy neighbour slows both alike. Same sandbox as
# bench/jvm-flags.sh. Usage (as root): bench/scan-interleaved.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-30}
# shellcheck source=bench/sandbox.sh
. bench/sandbox.sh
printf 'reap:\n  dryRun: true\n  requireHostPidNamespace: false\n' > "$work/config.yaml"
"$java" -XX:DumpLoadedClassList="$work/classes.lst" -cp "$jar" org.shmguard.cli.Main scan --json -c "$work/config.yaml" >/dev/null
"$java" -Xshare:dump -XX:SharedClassListFile="$work/classes.lst" -XX:SharedArchiveFile="$work/shmguard.jsa" -cp "$jar" >/dev/null
small="-XX:+UseSerialGC -Xms8m -Xmx96m -XX:TieredStopAtLevel=1 -Xss512k -XX:SharedArchiveFile=$work/shmguard.jsa -Xshare:auto"
for _ in $(seq "$runs"); do
  /usr/bin/time -f '%e %M' -a -o "$work/default" "$java" -cp "$jar" org.shmguard.cli.Main scan -c "$work/config.yaml" >/dev/null
  # shellcheck disable=SC2086
  /usr/bin/time -f '%e %M' -a -o "$work/small" "$java" $small -cp "$jar" org.shmguard.cli.Main scan -c "$work/config.yaml" >/dev/null
done
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
for f in default small; do
  printf '%-8s wall median %ss, p10..p90 %s..%ss; peak RSS median %.1f MiB\n' "$f" \
    "$(awk '{print $1}' "$work/$f" | median)" \
    "$(awk '{print $1}' "$work/$f" | sort -n | awk -v n="$runs" 'NR==int(n*0.1)+1')" \
    "$(awk '{print $1}' "$work/$f" | sort -n | awk -v n="$runs" 'NR==int(n*0.9)')" \
    "$(awk '{print $2}' "$work/$f" | median | awk '{print $1/1024}')"
done
umount /dev/shm
