package org.shmguard.config;

import java.util.List;

/** {@code mounts}: the shm mounts to watch, "auto" for every /dev/shm discovery finds. */
final class MountsSection extends ConfigSection<List<String>> {
  MountsSection() {
    super("");
    key("mounts", Types.mounts());
  }

  @Override
  List<String> read(Values v) {
    return v.get("mounts");
  }
}
