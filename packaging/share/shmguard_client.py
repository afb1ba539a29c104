# shmguard_client: asks the shmguard daemon over its advice socket, for job images and probes
# that have python3 but no Java. Standard library only; run it as
#
#   python3 -I -S /usr/share/shmguard/shmguard_client.py advise [--local-ranks N] [--nccl-version V]
#       [--format env|json] [--socket PATH] [--timeout SECONDS]
#   python3 -I -S /usr/share/shmguard/shmguard_client.py check [--condition all|full|leak|down]
#       [--socket PATH] [--timeout SECONDS]
#   python3 -I -S /usr/share/shmguard/shmguard_client.py scan [--json] [--socket PATH] [--timeout SECONDS]
#   python3 -I -S /usr/share/shmguard/shmguard_client.py shmguard scan|check|advise [OPTIONS]
#
# It sends one request line of the socket protocol and prints the daemon's answer: it never works
# advice or health out itself, so the daemon stays the one source of both.
#
# advise: prints the daemon's ADVISE answer as it came (the same bytes `shmguard advise
#   --daemon-only` prints) for the /dev/shm this process sees, named by its device. Exit 0 advice
#   printed, 1 no advice (no daemon, no answer in time, or the daemon refused: the reason goes to
#   stderr), 75 no advice because this user asked more often than the daemon answers anyone
#   (rate-limited: ask again later, less often), 2 usage.
# check: node-problem-detector's custom plugin protocol: one line of at most 160 ASCII
#   characters, exit 0 OK, 1 a problem, 2 unknown. --condition picks what counts: all (what
#   `shmguard check` counts), full (a mount past capacity.critical), leak (leaked segments
#   shmguard may not reap), down (shmguard not answering, its passes stale, or unable to read
#   every process). Only the node's mounts count: a mount the daemon only reports (an ordinary
#   user's own namespace) is named under its owner's uid in the OK line, never a problem.
# scan: prints the daemon's last pass as `shmguard scan [--json]` prints it (the daemon renders it),
#   for root only (it shows every user's processes). Exit 0 printed, 1 no answer (the reason goes
#   to stderr), 2 usage.
# shmguard: what /usr/bin/shmguard runs first for scan, check and advise, so that a running daemon
#   answers without a JVM: the command's own output and exit status when the daemon answered;
#   exit 69 and nothing printed when it did not, or when an option needs the command itself
#   (--local, --config, ...), and the launcher runs the JVM.
#
# The socket: --socket, else $SHMGUARD_ADVICE_SOCKET, else /run/shmguard/advice.sock.

import os
import sys
import time

# The C module under the socket module: the same calls, without the socket module's imports
# (enum, selectors), which would add about half of python3's own start-up time.
import _socket as socket

DEFAULT_SOCKET = "/run/shmguard/advice.sock"
MAX_REPLY_BYTES = 64 * 1024
MAX_SCAN_BYTES = 64 << 20  # a scan of many containers' mounts is megabytes
NOT_ANSWERED = 69  # EX_UNAVAILABLE: the shmguard mode's "run the JVM instead"
RATE_LIMITED = 75  # EX_TEMPFAIL: this user asked too often; ask again later
RATE_LIMITED_CODE = "rate-limited"
MAX_LINE = 160  # node-problem-detector's max_output_length as shipped
ME = "shmguard_client"

USAGE = ("usage: shmguard_client.py advise [--local-ranks N] [--nccl-version V] [--nodes N] [--p2p yes|no]"
         " [--processes N] [--format env|json] [--socket PATH] [--timeout SECONDS]\n"
         "       shmguard_client.py check [--condition all|full|leak|down] [--socket PATH] [--timeout SECONDS]\n"
         "       shmguard_client.py scan [--json] [--socket PATH] [--timeout SECONDS]\n")


class Refused(Exception):
    """An "ERR v1 CODE message" reply."""

    def __init__(self, code, message):
        Exception.__init__(self, message)
        self.code = code


class Usage(Exception):
    pass


def ask(path, request, timeout, max_bytes=MAX_REPLY_BYTES):
    """The body of the daemon's "OK v1" reply, as bytes. Raises OSError (no daemon, no answer in
    time: socket.timeout) or Refused."""
    deadline = time.monotonic() + timeout
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(timeout)
        while True:
            try:
                s.connect(path)
                break
            except BlockingIOError:
                # The daemon's queue of new connections is full (someone connects faster than it
                # accepts): a Unix socket with a timeout fails at once instead of waiting for room.
                if time.monotonic() >= deadline:
                    raise socket.timeout("no room in the daemon's queue within %g s" % timeout)
                time.sleep(0.005)
        s.sendall(request.encode("ascii") + b"\n")
        s.shutdown(socket.SHUT_WR)  # the whole request is sent: the daemon need not wait for more
        reply = bytearray()
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout("no complete reply within %g s" % timeout)
            s.settimeout(left)
            chunk = s.recv(65536)
            if not chunk:
                break
            reply += chunk
            if len(reply) > max_bytes:
                raise Refused("too-long", "the reply is longer than %d bytes" % max_bytes)
    finally:
        s.close()
    nl = reply.find(b"\n")
    status = bytes(reply if nl < 0 else reply[:nl]).decode("utf-8", "replace")
    if status == "OK v1":
        return bytes(reply[nl + 1:])
    parts = status.split(" ", 3)
    if len(parts) >= 3 and parts[0] == "ERR":
        raise Refused(parts[2], parts[3] if len(parts) == 4 else "")
    raise Refused("failed", "the daemon sent no reply this client understands: %r" % status[:40])


def shm_dev(path):
    """st_dev of the tmpfs at path as MAJOR:MINOR in decimal (what `shmguard advise` sends), or None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return "%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev))


def parse(args, known):
    """--name VALUE and --name=VALUE options into a dict; no positional arguments."""
    opts = {}
    i = 0
    while i < len(args):
        a = args[i]
        name, eq, value = a.partition("=")
        if name not in known:
            raise Usage("unknown option %s" % a[:40])
        if not eq:
            if i + 1 >= len(args):
                raise Usage("%s needs a value" % name)
            i += 1
            value = args[i]
        opts[known[name]] = value
        i += 1
    return opts


def word(value, what, allowed):
    """A value that goes into the request line: it must stay one key=value word."""
    if not value or any(c not in allowed for c in value) or len(value) > 40:
        raise Usage("%s must be %s, not %r" % (what, "a whole number" if allowed == DIGITS else "a version such as 2.21.5",
                                               value[:40]))
    return value


DIGITS = "0123456789"
VERSION_CHARS = DIGITS + ".abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+-_"


def timeout_of(opts, default):
    text = opts.get("timeout", default)
    try:
        t = float(text[:-1] if text.endswith("s") else text)
    except ValueError:
        raise Usage("--timeout must be a number of seconds, such as 2 or 0.5, not %r" % text[:40])
    if not 0 < t <= 600:
        raise Usage("--timeout must be more than 0 and at most 600 seconds")
    return t


def socket_of(opts):
    return opts.get("socket") or os.environ.get("SHMGUARD_ADVICE_SOCKET") or DEFAULT_SOCKET


def numa_allowed():
    """Whether this process may make the NUMA memory-policy calls NCCL's cuMem host memory needs:
    always without a seccomp filter; under Docker's default filter only with CAP_SYS_NICE (23) in
    the bounding set. The same rule as the Java client (host.ProcessConfinement); None if unknown."""
    try:
        with open("/proc/self/status", "rb") as f:
            status = f.read(65536).decode("ascii", "replace")
    except OSError:
        return None
    bnd = mode = None
    for line in status.split("\n"):
        key, _, value = line.partition(":")
        try:
            if key == "CapBnd":
                bnd = int(value.strip(), 16)
            elif key == "Seccomp":
                mode = int(value.strip())
        except ValueError:
            return None
    if bnd is None or mode not in (0, 1, 2):
        return None
    return mode == 0 or (mode == 2 and (bnd >> 23) & 1 == 1)


ADVISE_OPTIONS = {"--local-ranks": "ranks", "--nccl-version": "nccl", "--format": "format", "--nodes": "nodes",
                  "--p2p": "p2p", "--processes": "procs"}


def advise_request(opts):
    """(request, shape) for ADVISE: the request line without the job's shape beyond ranks and
    version, and that shape (" nodes=... p2p=... procs=... numa=...", maybe empty)."""
    request = "ADVISE v1"
    if "ranks" in opts:
        request += " ranks=" + word(opts["ranks"], "--local-ranks", DIGITS)
    if "nccl" in opts:
        request += " nccl=" + word(opts["nccl"], "--nccl-version", VERSION_CHARS)
    dev = shm_dev(opts.get("shm", "/dev/shm"))
    if dev is not None:
        request += " dev=" + dev
    fmt = opts.get("format", "env")
    if fmt not in ("env", "json"):
        raise Usage("--format must be env or json, not %r" % fmt[:40])
    request += " format=" + fmt
    # The job's shape beyond ranks and version, as `shmguard advise` sends it; a daemon older than
    # these keys refuses them, and is asked again without them.
    shape = ""
    if "nodes" in opts:
        shape += " nodes=" + word(opts["nodes"], "--nodes", DIGITS)
    if "p2p" in opts:
        if opts["p2p"] not in ("yes", "no"):
            raise Usage("--p2p must be yes or no, not %r" % opts["p2p"][:40])
        shape += " p2p=" + opts["p2p"]
    if "procs" in opts:
        shape += " procs=" + word(opts["procs"], "--processes", DIGITS)
    numa = numa_allowed()
    if numa is not None:
        shape += " numa=" + ("yes" if numa else "no")
    return request, shape


def ask_advice(path, request, shape, timeout):
    try:
        return ask(path, request + shape, timeout)
    except Refused as e:
        if not shape or e.code != "bad-request":
            raise
        return ask(path, request, timeout)


def advise(args):
    known = dict(ADVISE_OPTIONS, **{"--socket": "socket", "--timeout": "timeout", "--shm": "shm"})
    opts = parse(args, known)
    request, shape = advise_request(opts)
    path = socket_of(opts)
    timeout = timeout_of(opts, "2")
    try:
        body = ask_advice(path, request, shape, timeout)
    except Refused as e:
        if e.code == RATE_LIMITED_CODE:
            sys.stderr.write("%s: the daemon limits how often one user may ask, and refused this request"
                             " (rate-limited): %s\n" % (ME, e))
            return RATE_LIMITED
        sys.stderr.write("%s: the daemon answered: %s: %s\n" % (ME, e.code, e))
        return 1
    except socket.timeout:
        sys.stderr.write("%s: no answer on %s within %g s\n" % (ME, path, timeout))
        return 1
    except OSError as e:
        sys.stderr.write("%s: no daemon answers on %s (%s)\n" % (ME, path, e.strerror or e))
        return 1
    out = sys.stdout.buffer
    out.write(body)
    out.flush()
    return 0


def one_line(text):
    """At most MAX_LINE printable ASCII characters: what node-problem-detector keeps whole."""
    text = "".join(c if " " <= c <= "~" else "?" for c in text.strip())
    return text if len(text) <= MAX_LINE else text[:MAX_LINE - 3] + "..."


def check(args):
    """(exit status, line) for node-problem-detector."""
    try:
        opts = parse(args, {"--condition": "condition", "--socket": "socket", "--timeout": "timeout"})
        condition = opts.get("condition", "all")
        if condition not in ("all", "full", "leak", "down"):
            raise Usage("--condition must be all, full, leak or down, not %r" % condition[:40])
        timeout = timeout_of(opts, "5")
    except Usage as e:
        return 2, "unknown: %s" % e
    path = socket_of(opts)
    down = 1 if condition == "down" else 2
    try:
        body = ask(path, "CHECK v1", timeout)
    except Refused as e:
        if e.code == RATE_LIMITED_CODE:
            return 2, "unknown: shmguard refused this probe for asking too often (rate-limited): %s" % e
        return 2, "unknown: shmguard answered %s: %s" % (e.code, e)
    except socket.timeout:
        return down, "shmguard did not answer on %s within %g s" % (path, timeout)
    except OSError as e:
        return down, "shmguard is not running: nothing answers on %s (%s)" % (path, e.strerror or e)
    facts = {}
    for line in body.decode("utf-8", "replace").splitlines():
        key, eq, value = line.partition("=")
        if eq:
            facts[key] = value
    health = facts.get("SHMGUARD_HEALTH", "unknown")
    line = facts.get("SHMGUARD_LINE", "unknown: the daemon's answer has no verdict")
    status = {"ok": 0, "problem": 1}.get(health, 2)
    if condition == "all":
        return status, line
    if condition == "down":
        if "SHMGUARD_STALE" in facts:
            return 1, "shmguard is stuck: " + facts["SHMGUARD_STALE"]
        if "SHMGUARD_BLIND" in facts:
            return 1, "shmguard reaps nothing: " + facts["SHMGUARD_BLIND"]
        if "SHMGUARD_PASS_AGE_SECONDS" not in facts:
            return 2, line
        return 0, "ok: shmguard answers; its last pass began %ss ago" % facts["SHMGUARD_PASS_AGE_SECONDS"]
    key = "SHMGUARD_FULL" if condition == "full" else "SHMGUARD_LEAK"
    if key in facts:
        return 1, facts[key]
    if status == 2:
        return 2, line
    ok = "ok: no shm tmpfs past its critical fill" if condition == "full" \
        else "ok: no leaked segment shmguard may not reap"
    # The same finding in a mount that is its owner's (an ordinary user's namespace, say): the daemon
    # names the owner; it is shown, never a condition of the node's.
    theirs = facts.get("SHMGUARD_OWNER_" + key[len("SHMGUARD_"):])
    return 0, ok if not theirs else "%s; not the node's: %s" % (ok, theirs)


def scan(args):
    fmt = "json" if "--json" in args else "text"
    opts = parse([a for a in args if a != "--json"], {"--socket": "socket", "--timeout": "timeout"})
    path = socket_of(opts)
    timeout = timeout_of(opts, "5")
    try:
        body = ask(path, "SCAN v1 format=" + fmt, timeout, MAX_SCAN_BYTES)
    except Refused as e:
        sys.stderr.write("%s: the daemon answered: %s: %s\n" % (ME, e.code, e))
        return 1
    except socket.timeout:
        sys.stderr.write("%s: no answer on %s within %g s\n" % (ME, path, timeout))
        return 1
    except OSError as e:
        sys.stderr.write("%s: no daemon answers on %s (%s)\n" % (ME, path, e.strerror or e))
        return 1
    return write(body, 0)


def write(body, status):
    """Prints body; a reader that went away (`shmguard scan | head`) ends the program quietly."""
    try:
        out = sys.stdout.buffer
        out.write(body)
        out.flush()
    except BrokenPipeError:
        os._exit(141)  # 128 + SIGPIPE, as a shell reports it; no flush at exit to fail again
    return status


def as_shmguard(args):
    """`shmguard scan|check|advise ...` answered from the daemon: (status, bytes to print), or None
    when the command itself must answer (no daemon, a refusal, an option only it knows)."""
    if not args:
        return None
    command, rest = args[0], args[1:]
    path = os.environ.get("SHMGUARD_ADVICE_SOCKET") or DEFAULT_SOCKET
    if command == "scan":
        if rest not in ([], ["--json"]) or os.geteuid() != 0:
            return None  # the daemon's scan is root's; an ordinary user's is the one it can read itself
        try:
            return 0, ask(path, "SCAN v1 format=" + ("json" if rest else "text"), 5, MAX_SCAN_BYTES)
        except (Refused, OSError):
            return None
    if command == "check":
        if rest:
            return None
        try:
            body = ask(path, "CHECK v1", 5)
        except (Refused, OSError):
            return None
        facts = dict(line.partition("=")[::2] for line in body.decode("utf-8", "replace").splitlines())
        if "SHMGUARD_LINE" not in facts or "SHMGUARD_PASS_AGE_SECONDS" not in facts:
            return None  # no pass yet: the command makes its own
        status = {"ok": 0, "problem": 1}.get(facts.get("SHMGUARD_HEALTH"), 2)
        return status, (facts["SHMGUARD_LINE"] + "\n").encode("utf-8")
    if command == "advise":
        try:
            request, shape = advise_request(parse(rest, ADVISE_OPTIONS))
        except Usage:
            return None  # the command says what is wrong, in its own words
        try:
            return 0, ask_advice(path, request, shape, 2)
        except (Refused, OSError):
            return None
    return None


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(USAGE)
        return 2
    if argv[1] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    if argv[1] == "check":
        status, line = check(argv[2:])
        sys.stdout.write(one_line(line) + "\n")
        return status
    if argv[1] == "shmguard":
        try:
            answer = as_shmguard(argv[2:])
        except Exception:  # anything unexpected: the command itself answers
            answer = None
        if answer is None:
            return NOT_ANSWERED
        return write(answer[1], answer[0])
    if argv[1] == "scan":
        try:
            return scan(argv[2:])
        except Usage as e:
            sys.stderr.write("%s: %s\n%s" % (ME, e, USAGE))
            return 2
    if argv[1] == "advise":
        try:
            return advise(argv[2:])
        except Usage as e:
            sys.stderr.write("%s: %s\n%s" % (ME, e, USAGE))
            return 2
    sys.stderr.write("%s: unknown command %r\n%s" % (ME, argv[1][:40], USAGE))
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
