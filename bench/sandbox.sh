# shellcheck shell=bash disable=SC2034  # jar, java and work are for the script that sources this file
# Sourced by the bench/ scripts: re-runs the calling script in new PID and mount namespaces (the
# machine's real /dev/shm is never touched), then mounts a private tmpfs over /dev/shm holding 20
# NCCL-sized files and sets jar, java and work (a temporary directory removed on exit).
if [ "${SHMGUARD_BENCH_INSIDE:-}" != 1 ]; then
  exec env SHMGUARD_BENCH_INSIDE=1 unshare -m -p -f --mount-proc --propagation private "$0" "$@"
fi
jar=$PWD/target/shmguard.jar
java=${SHMGUARD_JAVA:-java}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mount -t tmpfs -o size=256m,mode=1777 bench-shm /dev/shm
for i in $(seq -w 1 20); do head -c 9637892 /dev/zero > /dev/shm/nccl-Bench"$i"; done
