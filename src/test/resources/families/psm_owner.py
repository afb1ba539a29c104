# A real owner of a Python multiprocessing.shared_memory segment, for PythonSharedMemoryClientTest.
#   psm_owner.py hold      create a 1 MiB segment, print "<name> <pid> <tracker pid>", hold it until stdin
#                          closes, then close and unlink it (a clean owner)
#   psm_owner.py hand-on   create it, take it off the resource tracker (what track=False does on
#                          Python 3.13+), print "<name> <pid>", close it and exit: it is meant to
#                          outlive its creator for another process to attach by name
#   psm_owner.py attach N  attach to segment N, print "attached <first bytes>", hold until stdin closes
import os
import sys
from multiprocessing import resource_tracker, shared_memory

mode = sys.argv[1]
if mode == "attach":
    shm = shared_memory.SharedMemory(name=sys.argv[2])
    print("attached", bytes(shm.buf[:5]).decode(), flush=True)
    sys.stdin.read()
    resource_tracker.unregister(shm._name, "shared_memory")
    shm.close()
    sys.exit(0)

shm = shared_memory.SharedMemory(create=True, size=1 << 20)
shm.buf[:5] = b"hello"
if mode == "hand-on":
    resource_tracker.unregister(shm._name, "shared_memory")
    print(shm.name, os.getpid(), flush=True)
    shm.close()
    sys.exit(0)
print(shm.name, os.getpid(), resource_tracker._resource_tracker._pid, flush=True)
sys.stdin.read()
shm.close()
shm.unlink()
