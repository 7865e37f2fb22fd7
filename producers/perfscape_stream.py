"""A producer of the perfscape stream protocol, version 1 (STREAM.md), standard library only.

One `Stream` is one thread of execution streaming to `perfscape serve --listen ADDR`::

    from perfscape_stream import Stream
    with Stream("tcp://127.0.0.1:7700", rank=0, program="solver") as s:
        for i in range(10):
            with s.region("timestep"):
                s.message(to=1, nbytes=4096)
            s.sample(f"iteration {i}")
    # leaving the block sends `end`

Times are nanoseconds since the Unix epoch (`time.time_ns()`), unless given. Records are
buffered and flushed at each sample, at `flush()` and at the end. Replies (error records for
refused records) are read by `errors()`.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time

PROTOCOL = 1


def connect(addr: str) -> socket.socket:
    """A connected socket for `tcp://HOST:PORT`, `unix:PATH` or a path containing `/`."""
    if addr.startswith("tcp://"):
        host, _, port = addr[len("tcp://"):].rpartition(":")
        return socket.create_connection((host.strip("[]"), int(port)))
    path = addr
    if addr.startswith("unix:"):
        path = addr[len("unix:"):]
        while path.startswith("//"):
            path = path[2:]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


class Stream:
    """One thread's stream of records (see the module documentation)."""

    def __init__(self, addr: str, rank: int, thread: int = 0, program: str | None = None,
                 run: str | None = None, token: str | None = None, buffer_bytes: int = 1 << 16):
        self.sock = connect(addr)
        self.buf: list[bytes] = []
        self.buffered = 0
        self.buffer_bytes = buffer_bytes
        self.stack: list[str] = []
        hello = {"type": "hello", "protocol": PROTOCOL, "rank": rank, "thread": thread}
        for k, v in (("program", program), ("run", run), ("token", token)):
            if v is not None:
                hello[k] = v
        self._send(hello)
        self.flush()

    def _send(self, record: dict) -> None:
        line = json.dumps(record, separators=(",", ":")).encode() + b"\n"
        self.buf.append(line)
        self.buffered += len(line)
        if self.buffered >= self.buffer_bytes:
            self.flush()

    def flush(self) -> None:
        """Sends the buffered records."""
        if self.buf:
            self.sock.sendall(b"".join(self.buf))
            self.buf.clear()
            self.buffered = 0

    def enter(self, region: str, group: str | None = None, t_ns: int | None = None) -> None:
        """The thread entered `region`."""
        r = {"type": "enter", "region": region, "t_ns": time.time_ns() if t_ns is None else t_ns}
        if group is not None:
            r["group"] = group
        self.stack.append(region)
        self._send(r)

    def exit(self, region: str | None = None, t_ns: int | None = None) -> None:
        """The thread left its innermost region (`region` defaults to it)."""
        top = self.stack.pop()
        self._send({"type": "exit", "region": region or top,
                    "t_ns": time.time_ns() if t_ns is None else t_ns})

    @contextlib.contextmanager
    def region(self, name: str, group: str | None = None):
        """`with s.region("solve"):` enters and exits around the block."""
        self.enter(name, group)
        try:
            yield
        finally:
            self.exit(name)

    def counter(self, name: str, value: float, t_ns: int | None = None) -> None:
        """A value of the counter `name` (a TAU user event)."""
        self._send({"type": "counter", "name": name, "value": value,
                    "t_ns": time.time_ns() if t_ns is None else t_ns})

    def message(self, nbytes: int, to: int | None = None, frm: int | None = None,
                t_ns: int | None = None) -> None:
        """A message of `nbytes` sent to rank `to`, or received from rank `frm`."""
        r = {"type": "message", "bytes": nbytes, "t_ns": time.time_ns() if t_ns is None else t_ns}
        r["to" if to is not None else "from"] = to if to is not None else frm
        self._send(r)

    def sample(self, name: str, t_ns: int | None = None, events=None, user_events=None) -> None:
        """A profile sample named `name` (TAU's snapshot); flushes."""
        r = {"type": "sample", "name": name, "t_ns": time.time_ns() if t_ns is None else t_ns}
        if events is not None:
            r["events"] = events
            if user_events is not None:
                r["user_events"] = user_events
        self._send(r)
        self.flush()

    def end(self, t_ns: int | None = None) -> None:
        """The thread ends (its final sample is taken); flushes and closes the sending side."""
        self._send({"type": "end", "t_ns": time.time_ns() if t_ns is None else t_ns})
        self.flush()
        self.sock.shutdown(socket.SHUT_WR)

    def errors(self, timeout: float = 5.0) -> list[dict]:
        """The server's replies (error records) once it closed the connection (after `end`)."""
        self.sock.settimeout(timeout)
        data = b""
        with contextlib.suppress(OSError):
            while chunk := self.sock.recv(65536):
                data += chunk
        return [json.loads(line) for line in data.splitlines() if line.strip()]

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc) -> None:
        with contextlib.suppress(OSError):
            self.end()
        self.close()
