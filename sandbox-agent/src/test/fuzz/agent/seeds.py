#!/usr/bin/env python3
"""Writes the seed inputs of fuzz_agent (one client byte stream each, PROTOCOL.md version 1) into the directory given.
An input that begins with the byte 0xFD (HANDOFF) is sent through the pipes a relay hands over.
The kept corpus (corpus/) began as these seeds and grew by `make fuzz` and `make fuzz-merge`."""
import os
import struct
import sys


def frame(t, sid, payload=b""):
    return struct.pack(">IBI", len(payload), t, sid) + payload


def s(b):
    b = b.encode() if isinstance(b, str) else b
    return struct.pack(">I", len(b)) + b


def strs(items):
    return struct.pack(">I", len(items)) + b"".join(s(i) for i in items)


HELLO = frame(0x01, 0, struct.pack(">HH", 1, 1) + s("fuzz"))

SEEDS = {
    "hello": HELLO,
    "hello-bad-version": frame(0x01, 0, struct.pack(">HH", 7, 9) + s("fuzz")),
    "ping": HELLO + frame(0x02, 0, struct.pack(">Q", 42)),
    "timers": HELLO + frame(0x03, 1, struct.pack(">qq", 1000, 2000)),
    "spawn": HELLO + frame(0x10, 1, struct.pack(">IHHIIB", 2, 80, 24, 65536, 65536, 0) + s("/") + strs(["echo", "hi"])
                           + strs(["A=1"])) + frame(0x11, 1, b"input") + frame(0x12, 1) + frame(0x1F, 1),
    "spawn-pty-bg": HELLO + frame(0x10, 3, struct.pack(">IHHIIB", 5, 80, 24, 1024, 65536, 1) + s("") + strs(["sh"])
                                  + strs([])),
    "write-read": HELLO + frame(0x21, 1, s("/f") + struct.pack(">III", 0o644, 1, 0)) + frame(0x11, 1, b"hello")
                  + frame(0x12, 1) + frame(0x20, 3, s("/f") + struct.pack(">QQI", 1, 100, 4096))
                  + frame(0x15, 3, struct.pack(">BI", 0, 100)),
    "files": HELLO + frame(0x24, 1, s("/d/e") + struct.pack(">IB", 0o755, 1)) + frame(0x23, 3, s("/d"))
             + frame(0x28, 5, s("/d/l") + s("e")) + frame(0x29, 7, s("/d/e") + struct.pack(">I", 0o700))
             + frame(0x22, 9, s("/") + struct.pack(">II", 3, 65536)) + frame(0x26, 11, s("/d") + s("/m"))
             + frame(0x25, 13, s("/m") + b"\x01"),
    "watch": HELLO + frame(0x24, 1, s("/w") + struct.pack(">IB", 0o755, 0)) + frame(0x27, 3, s("/w") + b"\x01"
             + struct.pack(">I", 4096)) + frame(0x21, 5, s("/w/x") + struct.pack(">III", 0o600, 0, 0)) + frame(0x12, 5)
             + frame(0x1F, 3),
    "procs-attach-input": HELLO + frame(0x30, 1, struct.pack(">I", 4096)) + frame(0x31, 3, s("p1") + struct.pack(
        ">QQBI", 0, 0, 1, 4096)) + frame(0x32, 5, s("p1") + b"\x02" + struct.pack(">I", 9)),
    "stream-ops": HELLO + frame(0x13, 9, struct.pack(">I", 15)) + frame(0x14, 9, struct.pack(">HH", 1, 1)),
    "big-payload": HELLO + frame(0x21, 1, s("/big") + struct.pack(">III", 0o644, 0, 0)) + frame(0x11, 1, b"x" * 65536)
                   + frame(0x12, 1),
    "bad-type": HELLO + frame(0x7F, 1),
    "spawn-echo": HELLO + frame(0x10, 1, struct.pack(">IHHIIB", 0, 0, 0, 65536, 0, 0) + s("") + strs(["echo", "a", "b"])
                                + strs(["PATH=/x:/bin"])),
    "spawn-missing": HELLO + frame(0x10, 1, struct.pack(">IHHIIB", 0, 0, 0, 65536, 0, 0) + s("/") + strs(["no-such"])
                                   + strs([])),
    "spawn-cat-stdin": HELLO + frame(0x10, 1, struct.pack(">IHHIIB", 2, 0, 0, 4, 0, 0) + s("") + strs(["cat"])
                                     + strs([])) + frame(0x11, 1, b"hello world") + frame(0x15, 1, struct.pack(
                                         ">BI", 1, 100)) + frame(0x12, 1),
    "spawn-pty-cat": HELLO + frame(0x10, 1, struct.pack(">IHHIIB", 1, 80, 24, 65536, 0, 0) + s("") + strs(["cat"])
                                   + strs([])) + frame(0x14, 1, struct.pack(">HH", 100, 30)) + frame(0x11, 1, b"ls\n")
                     + frame(0x13, 1, struct.pack(">I", 2)) + frame(0x12, 1),
    "background": HELLO + frame(0x10, 1, struct.pack(">IHHIIB", 6, 0, 0, 65536, 65536, 1) + s("") + strs(["cat"])
                                + strs([])) + frame(0x32, 3, s("p1") + b"\x00" + b"some input")
                  + frame(0x31, 5, s("p1") + struct.pack(">QQBI", 0, 0, 1, 65536)) + frame(0x30, 7, struct.pack(
                      ">I", 65536)) + frame(0x32, 9, s("p1") + b"\x03" + struct.pack(">HH", 10, 10))
                  + frame(0x32, 11, s("p1") + b"\x01") + frame(0x10, 13, struct.pack(">IHHIIB", 4, 0, 0, 65536,
                                                                                      65536, 0) + s("") + strs(
                      ["sleep"]) + strs([])) + frame(0x32, 15, s("p2") + b"\x02" + struct.pack(">I", 9)),
}

# CONNECT (0x33): fuzz_agent's connect refuses odd ports and gives even ones an echoing socketpair (at once for a
# multiple of 4, in progress for 2 mod 4, with its peer closed at once for a multiple of 8)
def connect(sid, port, credit):
    return frame(0x33, sid, struct.pack(">HI", port, credit))


SEEDS.update({
    "connect-errors": HELLO + connect(1, 1, 4096) + connect(3, 0, 4096) + frame(0x02, 0, struct.pack(">Q", 1)),
    "connect-echo": HELLO + connect(1, 4, 3) + frame(0x11, 1, b"hello") + frame(0x15, 1, struct.pack(">BI", 0, 100))
                    + frame(0x12, 1) + frame(0x13, 1, struct.pack(">I", 9)) + frame(0x14, 1, struct.pack(">HH", 1, 1)),
    "connect-in-progress": HELLO + connect(1, 2, 1000) + frame(0x02, 0, struct.pack(">Q", 2)) + frame(0x12, 1)
                           + connect(3, 6, 0) + frame(0x11, 3, b"early"),
    "connect-peer-closed": HELLO + connect(1, 8, 1000) + frame(0x11, 1, b"x" * 65536) + frame(0x11, 1, b"y" * 100)
                           + connect(3, 16, 0) + frame(0x12, 3),
    "connect-close": HELLO + connect(1, 12, 0) + frame(0x11, 1, b"z" * 65536) + frame(0x11, 1, b"z" * 1000)
                     + frame(0x1F, 1) + frame(0x11, 1, b"after close") + connect(3, 20, 10) + frame(0x11, 3, b"q" * 300),
    "connect-many": HELLO + b"".join(connect(1 + 2 * i, 4 * (i + 1), 64) for i in range(70))
                    + b"".join(frame(0x11, 1 + 2 * i, b"ping") for i in range(70)),
})

# LISTEN (0x34): fuzz_agent's bind refuses odd ports (EADDRINUSE); an even port's listener gives (port / 2) % 8
# connections, socketpairs with echoing peers (closed at once when port & 16), on agent ids 2^31, 2^31 + 1, ...
def listen(sid, port, credit, max_conns):
    return frame(0x34, sid, struct.pack(">HIH", port, credit, max_conns))


A = 0x80000000
SEEDS.update({
    "listen-echo": HELLO + listen(1, 14, 100, 2) + frame(0x02, 0, struct.pack(">Q", 1)) + frame(0x11, A, b"hello")
                   + frame(0x15, A, struct.pack(">BI", 0, 50)) + frame(0x12, A + 1) + frame(0x02, 0, struct.pack(">Q", 2))
                   + frame(0x11, A + 1, b"x" * 65536),
    "listen-close": HELLO + listen(1, 12, 0, 8) + frame(0x02, 0, struct.pack(">Q", 1)) + frame(0x1F, 1)
                    + frame(0x11, A + 2, b"after the listener") + frame(0x1F, A + 3) + listen(3, 12, 10, 1)
                    + frame(0x15, A + 6, struct.pack(">BI", 0, 4096)),
    "listen-errors": HELLO + listen(1, 3, 10, 4) + listen(3, 0, 10, 4) + listen(5, 4, 10, 0) + listen(7, 4, 10, 1025)
                     + frame(0x11, A + 9, b"unknown") + frame(0x23, A + 5, s("/")),
    "listen-peer-closed": HELLO + listen(1, 30, 1000, 1024) + frame(0x02, 0, struct.pack(">Q", 1))
                          + b"".join(frame(0x11, A + i, b"y" * 100) + frame(0x12, A + i) for i in range(7))
                          + listen(3, 28, 0, 3),
})

# the first byte HANDOFF (0xFD): the rest goes through the pipes a relay hands over
SEEDS["handoff-cat"] = b"\xfd" + SEEDS["spawn-cat-stdin"]
SEEDS["handoff-files"] = b"\xfd" + SEEDS["files"]

if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
