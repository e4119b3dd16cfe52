"""A spy: an ``exec:`` client that tries every route to a secret run's deal key and deals.

The tests run it as a cheater would (standard library only, as the user who runs the harness) and
read what it found. At its first decision it tries:

- ``mem``: the memory of every process it can see (``/proc/PID/mem`` through ``/proc/PID/maps``, the
  writable regions), its parent's first: a 32-byte Python ``bytes`` whose SHA-256 with the
  commitment's prefix is the commitment, or 64 hex digits that are such a key;
- ``cmd`` and ``environ``: every visible process's ``/proc/PID/cmdline`` and ``/proc/PID/environ``;
- ``own``: its own environment;
- ``look``: the files under each ``--look`` path (the run folder, the key file);
- ``ptrace``: ``PTRACE_SEIZE`` of every visible process (attaching, as a debugger does);
- ``diary``: the cards it holds, written to every place it may write (its folder, ``$HOME``,
  ``/tmp``, ``/var/tmp``, ``/dev/shm``, each ``--drop`` folder), after reading the diaries that
  earlier games left there: in a duplicate pair the second game deals it its opponent's cards of
  the first, so a diary found is a deal known before it is played.

Then it writes one line to stderr, ``SPY`` and the counts (``key=`` the routes that yielded the
key; ``diary=`` the diaries of other games found), and exits with status 3: the harness records
the forfeit with that line, where the test reads it.
"""

import argparse
import ctypes
import hashlib
import json
import os
import re
import sys
import time

HEX_KEY = re.compile(rb"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])")
SIZE_32 = (32).to_bytes(8, "little")  # ob_size of a 32-byte bytes object (CPython, 64-bit)
MAX_REGION = 1 << 30
PTRACE_SEIZE = 0x4206  # attaches without stopping the tracee; the spy's exit detaches it


class Spy:
    def __init__(self, commitment, prefix):
        self.commitment = commitment
        self.prefix = bytes.fromhex(prefix)
        self.found = set()
        self.counts = {"procs": 0, "memok": 0, "looked": 0, "diary": 0, "wrote": 0}

    def is_key(self, raw):
        return hashlib.sha256(self.prefix + raw).hexdigest() == self.commitment

    def search(self, data, route):
        """Whether ``data`` holds the key, raw (as a bytes object) or as hex."""
        for match in HEX_KEY.finditer(data):
            if self.is_key(bytes.fromhex(match.group().decode())):
                self.found.add(route)
                return True
        start = 0
        while True:
            at = data.find(SIZE_32, start)
            if at < 0:
                return False
            raw = data[at + 16 : at + 48]
            if len(raw) == 32 and self.is_key(raw):
                self.found.add(route)
                return True
            start = at + 1

    def pids(self):
        mine = os.getpid()
        try:
            found = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != mine]
        except OSError:
            return []
        parent = os.getppid()
        return sorted(found, key=lambda p: p != parent)

    def memory(self, pid):
        try:
            with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
                regions = [line.split() for line in maps]
                self.counts["memok"] += 1
                for fields in regions:
                    if len(fields) < 2 or not fields[1].startswith("rw"):
                        continue
                    low, high = (int(x, 16) for x in fields[0].split("-"))
                    if high - low > MAX_REGION:
                        continue
                    try:
                        mem.seek(low)
                        if self.search(mem.read(high - low), "mem"):
                            return
                    except (OSError, ValueError, OverflowError):
                        continue
        except OSError:
            return

    def processes(self):
        for pid in self.pids():
            self.counts["procs"] += 1
            for route in ("cmdline", "environ"):
                try:
                    with open(f"/proc/{pid}/{route}", "rb") as fh:
                        self.search(fh.read(), route)
                except OSError:
                    pass
            self.memory(pid)
            self.attach(pid)

    def attach(self, pid):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
        if libc.ptrace(PTRACE_SEIZE, pid, None, None) == 0:
            self.found.add("ptrace")

    def look(self, paths):
        for path in paths:
            files = [path] if os.path.isfile(path) else []
            for folder, _, names in os.walk(path):
                files += [os.path.join(folder, n) for n in names]
            for name in files:
                try:
                    with open(name, "rb") as fh:
                        data = fh.read(1 << 24)
                except OSError:
                    continue
                self.counts["looked"] += 1
                self.search(data, "look")

    def own_environment(self):
        text = "\n".join(f"{k}={v}" for k, v in os.environ.items())
        self.search(text.encode(), "own")

    def diaries(self, drops, hand, tag):
        places = [os.getcwd(), os.environ.get("HOME", ""), "/tmp", "/var/tmp", "/dev/shm", *drops]
        for place in dict.fromkeys(p for p in places if p):
            try:
                names = os.listdir(place)
            except OSError:
                continue
            self.counts["diary"] += sum(n.startswith("spy-diary-") and tag not in n for n in names)
        for place in dict.fromkeys(p for p in places if p):
            try:
                with open(os.path.join(place, f"spy-diary-{tag}.json"), "w") as fh:
                    json.dump(hand, fh)
                self.counts["wrote"] += 1
            except OSError:
                continue

    def report(self):
        keys = ",".join(sorted(self.found)) or "none"
        counts = " ".join(f"{k}={v}" for k, v in self.counts.items())
        return f"SPY key={keys} {counts}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--commitment", help="the run's commitment (public), or:")
    parser.add_argument("--commitment-file", help="a file that will hold it (the run prints it as it starts)")
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--look", action="append", default=[])
    parser.add_argument("--drop", action="append", default=[])
    args = parser.parse_args()
    commitment = args.commitment
    waited = 0.0
    while commitment is None and waited < 30:
        try:
            with open(args.commitment_file) as fh:
                commitment = fh.read().strip() or None
        except OSError:
            pass
        if commitment is None:
            time.sleep(0.05)
            waited += 0.05
    spy = Spy(commitment or "unknown", args.prefix)
    tag = f"{os.getpid()}-{os.urandom(4).hex()}"
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] != "act":
            continue
        if spy.commitment == "unknown":
            sys.stderr.write("SPY no commitment\n")
            sys.exit(4)
        spy.processes()
        spy.own_environment()
        spy.look(args.look)
        spy.diaries(args.drop, message["observation"].get("hand", []), tag)
        sys.stderr.write(spy.report() + "\n")
        sys.stderr.flush()
        sys.exit(3)


if __name__ == "__main__":
    main()
