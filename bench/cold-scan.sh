#!/usr/bin/env bash
# A cold `shmguard scan --json` as root types it, through packaging/bin/shmguard, while a daemon
# runs (the python client answers from the daemon's last pass) against `lsof /dev/shm` and a scan
# in a JVM of its own (`--local`), on one fixture: 400 holder processes of 4,000 NCCL-named
# segments (src/bench/c/shmfixture.c), the three run in turn so that a busy neighbour slows all
# alike. Same sandbox as bench/jvm-flags.sh. Needs target/shmguard.jar (mvn package), cc, lsof and
# /usr/bin/python3. Usage (as root): bench/cold-scan.sh [RUNS] [PROCESSES] [SEGMENTS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-21}
processes=${2:-400}
segments=${3:-4000}
# shellcheck source=bench/sandbox.sh
. bench/sandbox.sh
cc -O2 -o "$work/shmfixture" src/bench/c/shmfixture.c
mkfifo "$work/fixture.in"
"$work/shmfixture" /dev/shm "$segments" "$processes" "$segments" 4096 < "$work/fixture.in" > "$work/fixture.out" &
exec 3> "$work/fixture.in" # the fixture's stdin: its holders live until this closes
until grep -q '^ready$' "$work/fixture.out"; do sleep 0.1; done

cat > "$work/config.yaml" <<EOF
mounts: [/dev/shm]
reap:
  dryRun: true
  requireHostPidNamespace: false
advice:
  socket: $work/advice.sock
  envFile: $work/advice.env
metrics:
  listen: ""
EOF
"$java" -XX:+UseSerialGC -Xmx96m -XX:TieredStopAtLevel=1 -cp "$jar" org.shmguard.cli.Main daemon -c "$work/config.yaml" \
  > "$work/daemon.log" 2>&1 &
daemon=$!
export SHMGUARD_ADVICE_SOCKET=$work/advice.sock SHMGUARD_CLIENT=$PWD/packaging/share/shmguard_client.py
# The launcher's JVM, for --local: this build's jar instead of the installed one.
# shellcheck disable=SC2016 # $1 and $@ are for the script written
printf '#!/bin/sh\nwhile [ "$1" != org.shmguard.cli.Main ]; do shift; done; shift\nexec %s -XX:+UseSerialGC -Xms8m -Xmx96m -XX:TieredStopAtLevel=1 -Xshare:auto -cp %s org.shmguard.cli.Main "$@"\n' \
  "$java" "$jar" > "$work/java"
chmod +x "$work/java"
export SHMGUARD_JAVA=$work/java
# the first pass done (CHECK has its age), then the first SCAN, which the daemon renders, and its text form
until /usr/bin/python3 -I -S "$SHMGUARD_CLIENT" check --condition down > /dev/null 2>&1; do sleep 0.2; done
first=$( { a=$(date +%s%N); packaging/bin/shmguard scan --json > "$work/daemon.json"; b=$(date +%s%N); echo $(((b - a) / 1000000)); } )
firstText=$( { a=$(date +%s%N); packaging/bin/shmguard scan > /dev/null; b=$(date +%s%N); echo $(((b - a) / 1000000)); } )
grep -q '"daemon" : true' "$work/daemon.json" || { echo "the daemon did not answer scan --json" >&2; exit 1; }
packaging/bin/shmguard scan --json --local > "$work/local.json"

ms() { local a b; a=$(date +%s%N); "$@" > /dev/null 2>&1 || true; b=$(date +%s%N); echo $(((b - a) / 1000)); }
for _ in $(seq "$runs"); do
  ms packaging/bin/shmguard scan --json >> "$work/daemon"
  ms lsof /dev/shm >> "$work/lsof"
  ms packaging/bin/shmguard scan --json --local >> "$work/local"
done
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "fixture: $processes holder processes, $segments segments; $runs runs each, interleaved"
echo "first scan --json after the daemon's pass (the daemon renders it): $first ms; first text scan: $firstText ms"
echo "daemon's answer: $(grep -c '"name"' "$work/daemon.json") segments listed, $(wc -c < "$work/daemon.json") bytes;" \
  "local scan: $(grep -c '"name"' "$work/local.json") segments listed"
for f in daemon lsof local; do
  printf '%-7s wall median %6.1f ms, p10..p90 %.1f..%.1f ms\n' "$f" "$(median < "$work/$f" | awk '{print $1/1000}')" \
    "$(sort -n "$work/$f" | awk -v n="$runs" 'NR==int(n*0.1)+1 {print $1/1000}')" \
    "$(sort -n "$work/$f" | awk -v n="$runs" 'NR==int(n*0.9) {print $1/1000}')"
done
kill "$daemon"
wait "$daemon" || true
exec 3>&-
wait
umount /dev/shm
