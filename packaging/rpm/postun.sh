# shmguard %postun: reload units; on upgrade, restart the service if it runs; on erase, drop
# the AppCDS archive and the advice file. RPM keeps a changed /etc/shmguard/shmguard.yaml as .rpmsave.
if [ -x /usr/bin/systemctl ]; then
  systemctl daemon-reload >/dev/null 2>&1 || :
  if [ "$1" -ge 1 ]; then
    systemctl try-restart shmguard.service >/dev/null 2>&1 || :
  fi
fi
if [ "$1" -eq 0 ]; then
  rm -rf /var/lib/shmguard
  # The advice the stopped daemon last wrote: shmguard-launch would read it until the next reboot.
  rm -f /run/shmguard/advice.env
  rmdir /run/shmguard 2>/dev/null || :
fi
