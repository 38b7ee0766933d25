"""`glassrag serve --workers N`: the app in N processes on one port, so its Python runs on N
cores (in one process it runs under one GIL, on one core).

The parent builds the app once, then forks the workers: each inherits the app as built,
with the one form token the parent drew (web/forms.py), so a form made by one worker is
accepted by any other, and nothing secret crosses a pipe, a file or the environment. The
checks that stop the server with a message (a bad index, a port in use) run in the parent,
before any worker starts. On Linux each worker listens on its own socket of the port
(SO_REUSEPORT: the kernel spreads the connections among them); elsewhere they share one.
Ctrl-C or SIGTERM stops every worker; a worker that dies by itself stops the others and
the server, which exits 1.

Every server process, a worker or the one process of `--workers 1`, runs `server`: a signal
while it starts stops it at once, and one while it serves within GRACE_S seconds (issue 49:
Ctrl-C on `make demo` left the server running while it warmed up its indexes or finished a
request).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import sys
import traceback
from typing import Any

from glassrag.errors import ConfigError

SPREAD = sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")
# seconds the requests in flight at Ctrl-C may take to finish before they are cancelled:
# uvicorn's default waits for them without end, and a stalled client or a long page kept the port
GRACE_S = 5


def server(app: Any, request_s: float | None = None, **where: Any) -> Any:
    """uvicorn's Server for `app` (on `where`: host and port, when it binds its own socket) that stops on Ctrl-C or SIGTERM at once while it starts (its
    lifespan warms every index's models, which uvicorn would finish first: nothing is served
    yet, nothing is lost), and within GRACE_S seconds while it serves (then the requests in
    flight are cancelled). A request that has not fully arrived within `request_s` seconds
    (deadline.REQUEST_S) has its connection closed."""
    import uvicorn

    from glassrag.web.deadline import REQUEST_S, protocol

    class Stoppable(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            if not self.started:
                print("glassrag serve: stopped while starting", file=sys.stderr, flush=True)
                sys.stdout.flush()
                os._exit(128 + sig)
            super().handle_exit(sig, frame)

    logging.getLogger("uvicorn.error").addFilter(_not_cancelled)
    return Stoppable(uvicorn.Config(app, log_level="warning", server_header=False,
                                    timeout_graceful_shutdown=GRACE_S,
                                    http=protocol(REQUEST_S if request_s is None else request_s), **where))


def _not_cancelled(record: logging.LogRecord) -> bool:
    """Drops the traceback uvicorn logs for each request it cancels after GRACE_S (its own line
    `Cancel N running task(s)` stays): a request stopped by Ctrl-C is no error of the app."""
    return not (record.exc_info and isinstance(record.exc_info[1], asyncio.CancelledError))


def listeners(host: str, port: int, count: int) -> list[socket.socket]:
    """Listening sockets on host:port: one per worker where the kernel spreads connections
    among sockets of one port (SPREAD), else one that every worker shares."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    made: list[socket.socket] = []
    try:
        for _ in range(count if SPREAD else 1):
            sock = socket.socket(family, socket.SOCK_STREAM)
            made.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if SPREAD:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind((host, port))
            sock.listen(2048)  # uvicorn's backlog
            sock.set_inheritable(True)
    except OSError as e:
        for sock in made:
            sock.close()
        raise ConfigError(f"cannot listen on {host}:{port} ({e.strerror})",
                          "choose another port with --port, or stop what is using it") from None
    return made


def run(app: Any, host: str, port: int, count: int) -> int:
    """Serves `app` from `count` forked workers until Ctrl-C or SIGTERM (0), or until a
    worker dies by itself (1)."""
    if not hasattr(os, "fork"):
        raise ConfigError(f"--workers {count} needs os.fork, which this system has not",
                          "run one worker: --workers 1")
    sockets = listeners(host, port, count)
    children: dict[int, int] = {}  # pid -> worker number
    parent = os.getpid()
    for number in range(count):
        mine = sockets[number] if SPREAD else sockets[0]
        pid = os.fork()
        if pid == 0:
            _worker(app, mine, parent)  # never returns
        children[pid] = number
        if SPREAD:
            mine.close()  # the worker holds it; the next workers need not
    for sock in sockets:
        sock.close()
    return _supervise(children)


def _worker(app: Any, sock: socket.socket, parent: int) -> None:
    code = 1
    try:
        _stop_with(parent)
        server(app).run(sockets=[sock])
        code = 0
    except KeyboardInterrupt:  # Ctrl-C, raised again by uvicorn once it has stopped
        code = 0
    except BaseException:  # noqa: BLE001 — the worker's last word, then out without the parent's clean-up
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _stop_with(parent: int) -> None:
    """On Linux, SIGTERM to this worker when the parent dies (even by SIGKILL), so no worker
    is left holding the port."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(0)


def _supervise(children: dict[int, int]) -> int:
    """Waits for the workers; a signal to the parent is passed on to every worker."""
    stopping = False

    def stop(signum: int, frame: Any) -> None:
        nonlocal stopping
        stopping = True
        for pid in children:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    code = 0
    try:
        while children:
            pid, status = os.wait()
            number = children.pop(pid, None)
            if number is not None and not stopping:
                print(f"glassrag serve: worker {number + 1} stopped by itself (exit status "
                      f"{os.waitstatus_to_exitcode(status)}); stopping the others", file=sys.stderr, flush=True)
                code = 1
                stop(signal.SIGTERM, None)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    return code
