package org.shmguard.policy.family;

import java.util.regex.Pattern;

/**
 * PyTorch's CPU tensors shared between processes: {@code torch_<pid>_<random>_<counter>}, made by
 * {@code at::NewProcessWideShmHandle()} (aten/src/ATen/MapAllocator.cpp: "/torch_{}_{}_{}" of
 * getpid(), a std::random_device value, a process-wide counter). In the default file_descriptor
 * strategy the file is unlinked at once (only hidden usage); in the file_system strategy it stays
 * named, and torch_shm_manager unlinks it once the clients that registered it are gone
 * (torch/lib/libshm/manager.cpp). One left behind means the manager died too.
 *
 * <p>A holder may drop its storage while the name is still on its way to a receiver, so holders
 * having exited is not enough; the creator's pid in the name is: once it is provably dead and
 * nobody holds the file, the file is reaped after the grace.
 */
public final class PytorchFamily extends CreatorNamed {
  private static final Pattern NAME = Pattern.compile("torch_([0-9]{1,10})_[0-9]{1,10}_[0-9]{1,20}");

  public PytorchFamily() {
    super(NAME);
  }

  @Override
  public String name() {
    return "pytorch";
  }

  @Override
  public String producer() {
    return "PyTorch torch.multiprocessing, file_system sharing strategy";
  }

  @Override
  public boolean matches(String fileName) {
    return fileName.startsWith("torch_") && named(fileName);
  }

  /** torch/csrc/StorageSharing.cpp shares a file_system storage through THManagedMapAllocator (libshm), which registers it. */
  @Override
  public boolean registeredWithTorchManager() {
    return true;
  }

  @Override
  public String pattern() {
    return "torch_*";
  }

  @Override
  public String source() {
    return "pytorch/pytorch aten/src/ATen/MapAllocator.cpp (NewProcessWideShmHandle), torch/lib/libshm/manager.cpp";
  }
}
