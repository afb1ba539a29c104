# shmguard %post: the AppCDS archive for the installed JVM; on a first install, apply the
# system's preset policy to the service (Fedora and RHEL convention: enabled only where a
# preset says so; `systemctl enable --now shmguard` otherwise).
/usr/share/shmguard/make-cds-archive || :
if [ "$1" -eq 1 ] && [ -x /usr/bin/systemctl ]; then
  systemctl --no-reload preset shmguard.service >/dev/null 2>&1 || :
fi
if [ -x /usr/bin/journalctl ]; then
  journalctl --update-catalog >/dev/null 2>&1 || :
fi
