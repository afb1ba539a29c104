# shmguard_oci_hook: the OCI createRuntime hook that asks the shmguard daemon to size a starting
# container's /dev/shm for the GPUs it asks for. Standard library only; runc or crun run it (through
# /usr/share/shmguard/oci-hook, as the hooks.d file shmguard-shm.json names it) with the container's
# state on stdin, before the container's own process runs:
#
#   python3 -I -S shmguard_oci_hook.py [--timeout SECONDS] [--socket PATH] [--refuse]
#       [--gpus-annotation NAME]
#
# The GPUs a container asks for: the annotation (default shmguard.io/gpus, a number or "all") when
# it has one, else the most of NVIDIA_VISIBLE_DEVICES in its environment (a list, or "all"), the
# /dev/nvidiaN device nodes of its spec (CDI's nvidia.com/gpu devices put them there) and the
# nvidia.com/gpu devices of its cdi.k8s.io/ annotations. None: it exits 0 at once, asking nothing.
#
# It sends root's "PREPARE v1 container=ID pid=PID gpus=N|all root=PATH" and waits at most
# --timeout seconds (default 2) for the answer. The daemon decides, acts and writes what it did or
# why not to the journal. Exit 0 whatever happened (no daemon, no answer in time, a refusal), so a
# container never fails to start because of shmguard; with --refuse, exit 1 (the runtime then
# refuses the container) when its /dev/shm could not be made to hold what its GPUs need, saying why
# on stderr. When the daemon does not answer, the hook writes that to the journal itself
# (SYSLOG_IDENTIFIER=shmguard-oci-hook, CONTAINER_ID, CONTAINER_ID_FULL).
#
# The socket: --socket, else $SHMGUARD_ADVICE_SOCKET, else /run/shmguard/advice.sock.

import os
import sys

import _socket as socket

# The client beside this script (both in /usr/share/shmguard, root's): -I leaves the script's own
# directory off sys.path, so it is put back here, and only it. No bytecode is written beside it.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import shmguard_client as client  # noqa: E402

DEFAULT_SOCKET = "/run/shmguard/advice.sock"
JOURNAL_SOCKET = "/run/systemd/journal/socket"
MAX_STATE_BYTES = 1 << 20
MAX_CONFIG_BYTES = 16 << 20
MAX_REPLY_BYTES = 64 * 1024
ME = "shmguard-oci-hook"
USAGE = "usage: shmguard_oci_hook.py [--timeout SECONDS] [--socket PATH] [--refuse] [--gpus-annotation NAME]\n"


class Usage(Exception):
    pass


def options(args):
    opts = {"timeout": 2.0, "socket": os.environ.get("SHMGUARD_ADVICE_SOCKET") or DEFAULT_SOCKET, "refuse": False,
            "annotation": "shmguard.io/gpus"}
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--refuse":
            opts["refuse"] = True
            i += 1
            continue
        if a not in ("--timeout", "--socket", "--gpus-annotation") or i + 1 >= len(args):
            raise Usage("unknown option or missing value: %r" % a[:40])
        v = args[i + 1]
        if a == "--timeout":
            try:
                opts["timeout"] = float(v)
            except ValueError:
                raise Usage("--timeout must be a number of seconds, not %r" % v[:40])
            if not 0 < opts["timeout"] <= 60:
                raise Usage("--timeout must be from 0 to 60 seconds")
        elif a == "--socket":
            opts["socket"] = v
        else:
            opts["annotation"] = v
        i += 2
    return opts


def load_json(data):
    # json is imported only for a container that gets this far (it costs a few milliseconds).
    import json
    return json.loads(data)


def read_bounded(f, limit, what):
    data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError("%s is larger than %d bytes" % (what, limit))
    return data


def count_list(value):
    """GPUs an NVIDIA_VISIBLE_DEVICES value names: "all", or how many; 0 for none, void or empty."""
    v = value.strip()
    if v == "all":
        return "all"
    if v in ("", "none", "void"):
        return 0
    return len([x for x in v.split(",") if x.strip()])


def most(a, b):
    if a == "all" or b == "all":
        return "all"
    return max(a, b)


def gpus_of(spec, annotations, annotation):
    """The GPUs the container asks for: the annotation's word when it has one, else the most its spec shows."""
    asked = annotations.get(annotation)
    if asked is not None:
        asked = asked.strip()
        if asked == "all" or (asked.isdigit() and len(asked) <= 12):
            return asked if asked == "all" else int(asked)
    n = 0
    for e in (spec.get("process") or {}).get("env") or []:
        if isinstance(e, str) and e.startswith("NVIDIA_VISIBLE_DEVICES="):
            n = most(n, count_list(e.split("=", 1)[1]))
    nodes = 0
    for d in ((spec.get("linux") or {}).get("devices") or []):
        p = d.get("path", "") if isinstance(d, dict) else ""
        if p.startswith("/dev/nvidia") and p[len("/dev/nvidia"):].isdigit():
            nodes += 1
    n = most(n, nodes)
    cdi = 0
    for k, v in annotations.items():
        if k.startswith("cdi.k8s.io/") and isinstance(v, str):
            for dev in v.split(","):
                if dev.strip().startswith("nvidia.com/gpu="):
                    if dev.strip() == "nvidia.com/gpu=all":
                        cdi = "all"
                    elif cdi != "all":
                        cdi += 1
    return most(n, cdi)


def rootfs_of(spec, bundle):
    path = ((spec.get("root") or {}).get("path")) or "rootfs"
    if not path.startswith("/"):
        path = os.path.join(bundle, path)
    path = os.path.normpath(path)
    # One word of the line protocol: printable ASCII, no space (else the daemon looks at /dev/shm).
    if all(0x21 <= ord(c) <= 0x7e for c in path):
        return path
    return None


def ask(path, request, timeout):
    """The daemon's reply status line and body. Raises OSError when it does not answer in time.
    The socket's protocol is the client's (shmguard_client.ask): one encoder and reader of it."""
    try:
        body = client.ask(path, request, timeout, MAX_REPLY_BYTES)
    except client.Refused as e:
        return "ERR v1 %s %s" % (e.code, e), ""
    return "OK v1", body.decode("utf-8", "replace").strip()


def journal(message, priority, fields):
    """One journal entry (the native protocol); to stderr when there is no journald."""
    lines = ["MESSAGE=" + message.replace("\n", " "), "PRIORITY=%d" % priority, "SYSLOG_IDENTIFIER=" + ME]
    for k, v in fields.items():
        lines.append("%s=%s" % (k, str(v).replace("\n", " ")))
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        s.sendto(("\n".join(lines) + "\n").encode("utf-8", "replace"), JOURNAL_SOCKET)
    except OSError:
        sys.stderr.write("%s: %s\n" % (ME, message))
    finally:
        s.close()


def run(argv):
    opts = options(argv)
    state = load_json(read_bounded(sys.stdin.buffer, MAX_STATE_BYTES, "the container's state"))
    cid = str(state.get("id", ""))
    pid = state.get("pid")
    bundle = state.get("bundle") or state.get("root") or ""
    with open(os.path.join(bundle, "config.json"), "rb") as f:
        spec = load_json(read_bounded(f, MAX_CONFIG_BYTES, "config.json"))
    annotations = dict(spec.get("annotations") or {})
    annotations.update(state.get("annotations") or {})
    gpus = gpus_of(spec, annotations, opts["annotation"])
    if gpus == 0:
        return 0
    fields = {"CONTAINER_ID": cid[:12], "CONTAINER_ID_FULL": cid, "SHM_GPUS": gpus}
    if not isinstance(pid, int) or pid < 2:
        journal("container %s asks for %s GPU(s) but its state names no pid; its /dev/shm is left as it is" % (cid[:12], gpus),
                4, fields)
        return 1 if opts["refuse"] else 0
    request = "PREPARE v1 container=%s pid=%d gpus=%s" % (cid, pid, gpus)
    root = rootfs_of(spec, bundle)
    if root:
        request += " root=" + root
    try:
        status, body = ask(opts["socket"], request, opts["timeout"])
    except OSError as e:
        why = "shmguard did not answer within %g s (%s)" % (opts["timeout"], e.__class__.__name__ if not str(e) else e)
        if opts["refuse"]:
            journal("container %s refused: %s; its /dev/shm could not be sized for %s GPU(s)" % (cid[:12], why, gpus), 3, fields)
            sys.stderr.write("%s: %s; refusing the container (--refuse)\n" % (ME, why))
            return 1
        journal("container %s starts with its /dev/shm as it is: %s" % (cid[:12], why), 4, fields)
        return 0
    if status == "OK v1":
        return 0
    # The daemon wrote the refusal to the journal; the runtime shows stderr when the hook fails.
    if opts["refuse"]:
        sys.stderr.write("%s: %s; refusing the container (--refuse)\n" % (ME, status.split(" ", 3)[-1]))
        return 1
    return 0


def main(argv):
    try:
        return run(argv[1:])
    except Usage as e:
        sys.stderr.write("%s: %s\n%s" % (ME, e, USAGE))
        return 2
    except (OSError, ValueError) as e:
        # A state or spec it cannot read: the container is not held up, unless the operator said so.
        refuse = "--refuse" in argv
        sys.stderr.write("%s: cannot read the container's state or spec: %s\n" % (ME, e))
        return 1 if refuse else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
