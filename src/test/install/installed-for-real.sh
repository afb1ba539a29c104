#!/usr/bin/env bash
# Installs shmguard's .deb for real: a clean Debian 12 root (debootstrap, cached under
# /var/cache/shmguard-test), booted with systemd-nspawn on a throw-away overlay, the package
# installed with apt inside the booted system, then checked and removed.
#
#   src/test/install/installed-for-real.sh target/shmguard_*_all.deb      (as root)
#   src/test/install/installed-for-real.sh --release DIR                  (as root)
#
# With --release, DIR is what packaging/release/release made: its apt repository is put in the
# root, apt trusts only DIR/shmguard-archive-keyring.gpg for it (signed-by), and the package is
# installed with apt-get update and apt-get install shmguard, as an operator does.
#
# Prints "CHECK <what>: ok" for each check and "SKIP <what>: <why>" for what cannot be checked
# on this branch; exits non-zero at the first failed check. Leaves no mount, process or file
# behind except the cached root.
set -euo pipefail

release=""
if [ "$1" = --release ]; then
  release=$(realpath "$2")
else
  deb=$(realpath "$1")
fi
cache=/var/cache/shmguard-test/bookworm-ship
mirror=${SHMGUARD_TEST_MIRROR:-http://deb.debian.org/debian}

if [ ! -d "$cache" ]; then
  echo "making the cached Debian root $cache (once; needs $mirror)"
  rm -rf "$cache.tmp"
  debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus,default-jre-headless,ca-certificates \
    bookworm "$cache.tmp" "$mirror" >/dev/null
  mv "$cache.tmp" "$cache"
fi

work=$(mktemp -d /var/tmp/shmguard-nspawn.XXXXXX)
root=$work/root
mkdir -p "$work/upper" "$work/work" "$root"
mount -t overlay shmguard-test -o "lowerdir=$cache,upperdir=$work/upper,workdir=$work/work" "$root"
nspawn=""
cleanup() {
  if [ -n "$nspawn" ] && kill -0 "$nspawn" 2>/dev/null; then
    kill -TERM "$nspawn" 2>/dev/null || true
    for _ in $(seq 60); do kill -0 "$nspawn" 2>/dev/null || break; sleep 1; done
    kill -KILL "$nspawn" 2>/dev/null || true
    wait "$nspawn" 2>/dev/null || true
  fi
  umount "$root" 2>/dev/null || umount -l "$root" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

if [ -n "$release" ]; then
  # The repository served over file://, as a hosted directory; the root's only apt source (its
  # Debian mirror is left out: the test needs no network, and the root already holds the dependencies).
  mkdir -p "$root/srv/shmguard"
  cp -r "$release/apt" "$root/srv/shmguard/apt"
  cp "$release/shmguard-archive-keyring.gpg" "$root/usr/share/keyrings/shmguard-archive-keyring.gpg"
  chmod 0644 "$root/usr/share/keyrings/shmguard-archive-keyring.gpg"
  rm -f "$root/etc/apt/sources.list"
  rm -rf "$root/etc/apt/sources.list.d"/* "$root/var/lib/apt/lists"/*
else
  cp "$deb" "$root/var/cache/shmguard.deb"
fi
machine=shmguard-test-$$
systemd-nspawn --quiet --register=no --keep-unit --machine="$machine" -D "$root" --boot >"$work/console.log" 2>&1 &
nspawn=$!

# The container's init: the child of systemd-nspawn that runs systemd (nspawn forks helpers first,
# so look again until it is there).
leader=""
find_leader() {
  local pid
  for pid in $( (ps -o pid= --ppid "$nspawn" || true) | tr -d ' '); do
    if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = systemd ]; then
      leader=$pid
      return 0
    fi
  done
  return 1
}

inside() {
  nsenter --target "$leader" --mount --uts --ipc --net --pid -- \
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

state=""
for _ in $(seq 180); do
  kill -0 "$nspawn" 2>/dev/null || break
  find_leader || { sleep 1; continue; }
  state=$(inside systemctl is-system-running 2>/dev/null || true)
  case "$state" in running|degraded) break ;; esac
  sleep 1
done
case "$state" in
  running|degraded) echo "CHECK booted with systemd-nspawn ($state): ok" ;;
  *) echo "FAIL boot: system state '$state'"; tail -30 "$work/console.log"; exit 1 ;;
esac

# Observe-only from the first start, as configuration management rolls out: a drop-in placed
# before the package, then an unattended install (no terminal, nothing on stdin) that must not
# stop at a conffile prompt.
mkdir -p "$root/etc/shmguard/shmguard.yaml.d"
printf 'reap:\n  dryRun: true\n' > "$root/etc/shmguard/shmguard.yaml.d/10-observe.yaml"
if [ -n "$release" ]; then
  sources() {
    printf 'Types: deb\nURIs: file:///srv/shmguard/apt\nSuites: stable\nComponents: main\nSigned-By: %s\n' "$1" \
      > "$root/etc/apt/sources.list.d/shmguard.sources"
  }
  # A key that did not sign the repository: apt must refuse it.
  sources /usr/share/keyrings/debian-archive-keyring.gpg
  if inside apt-get update >"$work/update.log" 2>&1 && ! grep -q "NO_PUBKEY\|not signed" "$work/update.log"; then
    echo "FAIL apt-get update accepted the repository with a key that did not sign it"; cat "$work/update.log"; exit 1
  fi
  grep -q "NO_PUBKEY" "$work/update.log" || { echo "FAIL apt-get update failed, but not for the signature"; cat "$work/update.log"; exit 1; }
  echo "CHECK apt refuses the repository under another key (NO_PUBKEY): ok"
  rm -rf "$root/var/lib/apt/lists"/*
  sources /usr/share/keyrings/shmguard-archive-keyring.gpg
  inside apt-get update >"$work/update.log" 2>&1 || { echo "FAIL apt-get update"; cat "$work/update.log"; exit 1; }
  if grep -q "^[WE]:" "$work/update.log"; then echo "FAIL apt-get update warned"; cat "$work/update.log"; exit 1; fi
  [ -s "$root/var/lib/apt/lists/_srv_shmguard_apt_dists_stable_InRelease" ] || { echo "FAIL apt kept no InRelease"; ls "$root/var/lib/apt/lists"; exit 1; }
  echo "CHECK apt-get update verified the repository's InRelease with its signed-by keyring: ok"
  inside apt-get install -y -q shmguard </dev/null >"$work/apt.log" 2>&1 || { echo "FAIL apt-get install shmguard"; cat "$work/apt.log"; exit 1; }
  want=$(dpkg-deb -f "$(ls "$release"/shmguard_*_all.deb)" Version)
  got=$(inside shmguard version 2>&1 || true)
  [ "$got" = "shmguard $want" ] || { echo "FAIL shmguard version printed '$got', the package is $want"; exit 1; }
  echo "CHECK shmguard version prints the release's version ($want): ok"
else
  inside apt-get install -y -q /var/cache/shmguard.deb </dev/null >"$work/apt.log" 2>&1 || { echo "FAIL apt install"; cat "$work/apt.log"; exit 1; }
fi
# shellcheck disable=SC2016 # ${Status} is dpkg-query's format, not the shell's
inside dpkg-query -W -f='${Status}\n' shmguard | grep -qx "install ok installed" || { echo "FAIL not installed"; exit 1; }
if grep -q "Configuration file" "$work/apt.log"; then echo "FAIL a conffile question at install"; cat "$work/apt.log"; exit 1; fi
echo "CHECK installed with apt-get install -y, a drop-in placed first, no conffile question: ok"

if [ -e "$root/lib/systemd/system/shmguard.service" ]; then
  # Type=notify: "active" only after the daemon sent READY=1 (its first full pass).
  for _ in $(seq 120); do
    [ "$(inside systemctl is-active shmguard.service || true)" = active ] && break
    sleep 1
  done
  [ "$(inside systemctl is-enabled shmguard.service || true)" = enabled ] || { echo "FAIL the package did not enable the service"; exit 1; }
  [ "$(inside systemctl is-active shmguard.service || true)" = active ] || { echo "FAIL the package did not start the service"; inside systemctl status shmguard.service || true; exit 1; }
  echo "CHECK the package enabled and started the service (READY reached): ok"
  inside journalctl -u shmguard.service --no-pager -o cat | grep -q "shmguard starting in a dry run" \
    || { echo "FAIL the service did not start observe-only"; inside journalctl -u shmguard --no-pager | tail -30; exit 1; }
  inside journalctl -u shmguard.service --no-pager -o cat | grep -q "shmguard.yaml.d/10-observe.yaml" \
    || { echo "FAIL the start-up line does not name the drop-in"; inside journalctl -u shmguard --no-pager | tail -30; exit 1; }
  echo "CHECK the service started observe-only, from the drop-in: ok"
fi

if [ -s "$root/var/lib/shmguard/shmguard.jsa" ]; then
  echo "CHECK AppCDS archive made at install: ok"
else
  echo "FAIL no AppCDS archive"; cat "$work/apt.log"; exit 1
fi

inside shmguard scan --json >"$work/scan.out" 2>&1 || { echo "FAIL shmguard scan"; cat "$work/scan.out"; exit 1; }
grep -q "/dev/shm" "$work/scan.out" || { echo "FAIL shmguard scan does not show /dev/shm"; cat "$work/scan.out"; exit 1; }
echo "CHECK shmguard scan works inside: ok"

# A leak: an NCCL-named file nobody holds, with a grace short enough for a test. The booted
# container is a PID namespace of its own that holds every process able to reach its /dev/shm:
# the case reap.requireHostPidNamespace: false is for.
cat > "$root/etc/shmguard/shmguard.yaml" <<YAML
reap:
  grace: 1s
  requireHostPidNamespace: false
daemon:
  interval: 1s
YAML
inside sh -c 'head -c 9637892 /dev/zero > /dev/shm/nccl-Leak01'
inside test -s /dev/shm/nccl-Leak01 || { echo "FAIL cannot create the leak in the container's /dev/shm"; exit 1; }

if [ -e "$root/lib/systemd/system/shmguard.service" ]; then
  inside systemctl restart shmguard.service
  for _ in $(seq 120); do
    [ "$(inside systemctl is-active shmguard.service || true)" = active ] && break
    sleep 1
  done
  [ "$(inside systemctl is-active shmguard.service || true)" = active ] || { echo "FAIL service not active"; inside systemctl status shmguard.service || true; exit 1; }
  echo "CHECK service active: ok"
  # shellcheck disable=SC2016 # %a %U are stat's format, not the shell's
  [ "$(inside stat -c '%a %U' /var/lib/shmguard/holders.json 2>/dev/null || true)" = "600 root" ] \
    || { echo "FAIL no holder history at /var/lib/shmguard/holders.json (root's, 0600)"; inside ls -la /var/lib/shmguard || true; exit 1; }
  inside journalctl -u shmguard.service --no-pager -o cat | grep -q "holder history from before the restart" \
    || { echo "FAIL the restarted service did not read the holder history"; inside journalctl -u shmguard --no-pager | tail -30; exit 1; }
  echo "CHECK holder history kept in the StateDirectory (root's, 0600) and read back after the restart: ok"
  for _ in $(seq 60); do
    inside journalctl --no-pager -o cat SHMGUARD_EVENT=segment_leaked SHM_SEGMENT=nccl-Leak01 | grep -q . && break
    sleep 1
  done
  inside journalctl --no-pager -o cat SHMGUARD_EVENT=segment_leaked SHM_SEGMENT=nccl-Leak01 | grep -q . \
    || { echo "FAIL observe-only did not report the leak"; inside journalctl -u shmguard --no-pager | tail -30; exit 1; }
  inside test -e /dev/shm/nccl-Leak01 || { echo "FAIL observe-only reaped the leak"; exit 1; }
  echo "CHECK observe-only: the leak reported (segment_leaked), not reaped: ok"

  # Reaping on: configuration management removes the drop-in and reloads; no restart.
  rm "$root/etc/shmguard/shmguard.yaml.d/10-observe.yaml"
  pid_before=$(inside systemctl show -p MainPID --value shmguard.service)
  inside systemctl reload shmguard.service || { echo "FAIL systemctl reload"; inside systemctl status shmguard.service || true; exit 1; }
  for _ in $(seq 120); do inside test -e /dev/shm/nccl-Leak01 || break; sleep 1; done
  ! inside test -e /dev/shm/nccl-Leak01 || { echo "FAIL the leaked segment is still there"; inside journalctl -u shmguard --no-pager | tail -30; exit 1; }
  echo "CHECK leaked segment reaped by the service: ok"
  inside journalctl --no-pager -o cat SHMGUARD_EVENT=segment_reaped SHM_SEGMENT=nccl-Leak01 | grep -q . \
    || { echo "FAIL no reap entry in the journal"; inside journalctl -u shmguard --no-pager | tail -30; exit 1; }
  echo "CHECK reap in the service's journal: ok"
  [ "$(inside systemctl show -p MainPID --value shmguard.service)" = "$pid_before" ] || { echo "FAIL the reload restarted the daemon"; exit 1; }
  inside journalctl --no-pager -o cat SHMGUARD_EVENT=config_reloaded SHM_CHANGED=reap.dryRun | grep -q "applied reap.dryRun" \
    || { echo "FAIL no config_reloaded entry"; inside journalctl -u shmguard --no-pager | tail -30; exit 1; }
  echo "CHECK systemctl reload turned reaping on in the same process (config_reloaded): ok"

  printf '# a typo\nreap:\n  grace: soon\n' > "$root/etc/shmguard/shmguard.yaml.d/20-typo.yaml"
  # On systemd 252 too, the reload says no to a rejected drop-in (ExecReload= asks the daemon and waits for its verdict).
  if inside systemctl reload shmguard.service; then echo "FAIL systemctl reload said yes to a rejected drop-in"; exit 1; fi
  for _ in $(seq 60); do
    inside journalctl --no-pager -o cat SHMGUARD_EVENT=config_rejected | grep -q . && break
    sleep 1
  done
  inside journalctl --no-pager -o json SHMGUARD_EVENT=config_rejected | grep -q '"SHM_CONFIG_FILE":"/etc/shmguard/shmguard.yaml.d/20-typo.yaml"' \
    || { echo "FAIL no config_rejected entry naming the drop-in"; inside journalctl -u shmguard --no-pager | tail -30; exit 1; }
  inside journalctl --no-pager -o json SHMGUARD_EVENT=config_rejected | grep -q '"SHM_CONFIG_LINE":"3"' \
    || { echo "FAIL config_rejected without the line"; exit 1; }
  [ "$(inside systemctl is-active shmguard.service || true)" = active ] || { echo "FAIL a bad reload stopped the service"; exit 1; }
  inside systemctl show -p StatusText --value shmguard.service | grep -q "reload rejected" \
    || { echo "FAIL the status line does not say the reload was rejected"; inside systemctl status shmguard.service || true; exit 1; }
  echo "CHECK systemctl reload with a bad drop-in: exits non-zero, config_rejected (file, line), still active, status says so: ok"
  rm "$root/etc/shmguard/shmguard.yaml.d/20-typo.yaml"
else
  echo "SKIP service active, reaped by the service, journal entry: the package has no unit (systemd/shmguard.service is not in this tree)"
  inside shmguard clean >"$work/clean.out" 2>&1 || { echo "FAIL shmguard clean"; cat "$work/clean.out"; exit 1; }
  ! inside test -e /dev/shm/nccl-Leak01 || { echo "FAIL shmguard clean left the leak"; cat "$work/clean.out"; exit 1; }
  echo "CHECK leaked segment reaped by shmguard clean inside: ok"
fi

# The advice the running daemon wrote, which a removed package must not leave for shmguard-launch.
had_advice=no
inside test -e /run/shmguard/advice.env && had_advice=yes
inside apt-get remove -y -q shmguard >"$work/remove.log" 2>&1 || { echo "FAIL apt remove"; cat "$work/remove.log"; exit 1; }
if [ "$had_advice" = yes ]; then
  ! inside test -e /run/shmguard/advice.env || { echo "FAIL remove left /run/shmguard/advice.env"; exit 1; }
  echo "CHECK the daemon's advice file gone with the package: ok"
fi
if [ -e "$root/usr/bin/shmguard" ] || [ -e "$root/usr/share/shmguard" ] || [ -e "$root/var/lib/shmguard" ]; then
  echo "FAIL files left after remove"; exit 1
fi
[ -e "$root/etc/shmguard/shmguard.yaml" ] || { echo "FAIL remove deleted the changed configuration"; exit 1; }
if [ -e "$root/lib/systemd/system/shmguard.service" ] || inside systemctl is-active --quiet shmguard.service; then
  echo "FAIL the service outlived its package"; exit 1
fi
echo "CHECK removed cleanly, configuration kept: ok"

inside apt-get purge -y -q shmguard >"$work/purge.log" 2>&1 || { echo "FAIL apt purge"; cat "$work/purge.log"; exit 1; }
[ ! -e "$root/etc/shmguard" ] || { echo "FAIL purge left /etc/shmguard"; ls -la "$root/etc/shmguard"; exit 1; }
inside dpkg-query -W shmguard >/dev/null 2>&1 && { echo "FAIL dpkg still knows shmguard"; exit 1; }
echo "CHECK purged: ok"
