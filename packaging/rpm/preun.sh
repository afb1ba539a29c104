# shmguard %preun: on erase (not upgrade), disable and stop the service.
if [ "$1" -eq 0 ] && [ -x /usr/bin/systemctl ]; then
  systemctl --no-reload disable --now shmguard.service >/dev/null 2>&1 || :
fi
