/*
 * A stand-in for libnvidia-ml.so.1 with fixed numbers, so that NvmlBindingTest exercises shmguard's
 * JNA binding (symbols, argument types, the nvmlMemory_t layout) on a machine without a GPU.
 * Built with -nostdlib: it calls nothing, so it needs no C library headers or start files.
 * FAKE_NVML_INIT_FAILS makes nvmlInit_v2 fail as it does when the kernel driver is not loaded.
 */
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;

static int gpus[2];

int nvmlInit_v2(void) {
#ifdef FAKE_NVML_INIT_FAILS
  return 9; /* NVML_ERROR_DRIVER_NOT_LOADED */
#else
  return 0;
#endif
}

int nvmlShutdown(void) { return 0; }

int nvmlDeviceGetCount_v2(unsigned int *count) { *count = 2; return 0; }

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void **device) {
  if (index > 1) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
  *device = &gpus[index];
  return 0;
}

int nvmlDeviceGetMemoryInfo(void *device, nvmlMemory_t *memory) {
  unsigned long long gib = 1ULL << 30;
  memory->total = 80 * gib;
  memory->free = device == &gpus[0] ? 40 * gib : 900ULL << 20;
  memory->used = memory->total - memory->free;
  return 0;
}

int nvmlDeviceGetName(void *device, char *name, unsigned int length) {
  const char *text = "NVIDIA H100 80GB HBM3";
  unsigned int i = 0;
  for (; text[i] && i + 1 < length; i++) name[i] = text[i];
  name[i] = 0;
  return 0;
}

int nvmlDeviceGetCudaComputeCapability(void *device, int *major, int *minor) {
  *major = 9;
  *minor = 0;
  return 0;
}

const char *nvmlErrorString(int result) {
  return result == 9 ? "Driver Not Loaded" : "Unknown Error";
}
