package org.shmguard.nativ;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * NVIDIA's management library (libnvidia-ml.so.1, installed with the driver) through JNA: the
 * memory of each GPU, its name and compute capability. Nothing else in shmguard talks to NVML.
 *
 * <pre>{@code
 * Nvml.Reading r = Nvml.read();
 * if (r.error() == null) { for (Nvml.Gpu g : r.gpus()) { ... g.freeBytes() ... } }
 * }</pre>
 */
public final class Nvml {
  static final String LIBRARY = "libnvidia-ml.so.1";
  private static final int NVML_SUCCESS = 0;
  private static final int NAME_BYTES = 96;

  /** The entry points used; each returns an nvmlReturn_t, 0 on success. */
  interface Lib extends Library {
    int nvmlInit_v2();

    int nvmlShutdown();

    int nvmlDeviceGetCount_v2(IntByReference count);

    int nvmlDeviceGetHandleByIndex_v2(int index, PointerByReference device);

    /** nvmlMemory_t: unsigned long long total, free, used. */
    int nvmlDeviceGetMemoryInfo(Pointer device, Memory memory);

    int nvmlDeviceGetName(Pointer device, byte[] name, int length);

    int nvmlDeviceGetCudaComputeCapability(Pointer device, IntByReference major, IntByReference minor);

    String nvmlErrorString(int result);
  }

  /**
   * One GPU's memory as NVML reports it.
   *
   * @param computeMajor compute capability major (9 for Hopper), or -1 where NVML did not say
   */
  public record Gpu(int index, String name, long totalBytes, long freeBytes, long usedBytes, int computeMajor, int computeMinor) {}

  /** What a read found: the GPUs, or why there are none ({@code error} non-null, {@code gpus} empty). */
  public record Reading(List<Gpu> gpus, String error) {
    public Reading {
      gpus = List.copyOf(gpus);
    }
  }

  private Nvml() {}

  /** Loads NVML and reads every GPU; never throws: a missing library or a failing call becomes {@code error}. */
  public static Reading read() {
    return read(LIBRARY);
  }

  static Reading read(String library) {
    Lib nvml;
    try {
      nvml = Native.load(library, Lib.class);
    } catch (UnsatisfiedLinkError e) {
      return new Reading(List.of(), library + " cannot be loaded (no NVIDIA driver here): " + firstLine(e.getMessage()));
    }
    int rc = nvml.nvmlInit_v2();
    if (rc != NVML_SUCCESS) {
      return new Reading(List.of(), "nvmlInit_v2 failed: " + describe(nvml, rc));
    }
    try {
      IntByReference count = new IntByReference();
      rc = nvml.nvmlDeviceGetCount_v2(count);
      if (rc != NVML_SUCCESS) {
        return new Reading(List.of(), "nvmlDeviceGetCount_v2 failed: " + describe(nvml, rc));
      }
      List<Gpu> gpus = new ArrayList<>();
      for (int i = 0; i < count.getValue(); i++) {
        PointerByReference handle = new PointerByReference();
        rc = nvml.nvmlDeviceGetHandleByIndex_v2(i, handle);
        if (rc != NVML_SUCCESS) {
          return new Reading(gpus, "nvmlDeviceGetHandleByIndex_v2(" + i + ") failed: " + describe(nvml, rc));
        }
        Pointer device = handle.getValue();
        Memory mem = new Memory(24);
        rc = nvml.nvmlDeviceGetMemoryInfo(device, mem);
        if (rc != NVML_SUCCESS) {
          return new Reading(gpus, "nvmlDeviceGetMemoryInfo(" + i + ") failed: " + describe(nvml, rc));
        }
        byte[] name = new byte[NAME_BYTES];
        String gpuName = nvml.nvmlDeviceGetName(device, name, NAME_BYTES) == NVML_SUCCESS ? cString(name) : "GPU " + i;
        IntByReference major = new IntByReference(-1);
        IntByReference minor = new IntByReference(-1);
        if (optionalCall(() -> nvml.nvmlDeviceGetCudaComputeCapability(device, major, minor)) != NVML_SUCCESS) {
          major.setValue(-1);
          minor.setValue(-1);
        }
        gpus.add(new Gpu(i, gpuName, mem.getLong(0), mem.getLong(8), mem.getLong(16), major.getValue(), minor.getValue()));
      }
      return new Reading(gpus, null);
    } finally {
      nvml.nvmlShutdown();
    }
  }

  /** Calls an entry point that old drivers may lack; a missing symbol counts as a failure. */
  private static int optionalCall(java.util.function.IntSupplier call) {
    try {
      return call.getAsInt();
    } catch (UnsatisfiedLinkError e) {
      return -1;
    }
  }

  private static String describe(Lib nvml, int rc) {
    try {
      return nvml.nvmlErrorString(rc) + " (" + rc + ")";
    } catch (UnsatisfiedLinkError e) {
      return "error " + rc;
    }
  }

  private static String cString(byte[] bytes) {
    int n = 0;
    while (n < bytes.length && bytes[n] != 0) {
      n++;
    }
    return new String(bytes, 0, n, StandardCharsets.UTF_8);
  }

  /** JNA's message lists every place it tried; the first two lines say what failed and why. */
  private static String firstLine(String s) {
    if (s == null) {
      return "not found";
    }
    String[] lines = s.split("\n");
    return lines.length > 1 && lines[0].endsWith(":") ? lines[0] + " " + lines[1].strip() : lines[0];
  }
}
