"""`glassrag serve --workers N`: the app in N processes on one port, so its Python runs on N
cores (in one process it runs under one GIL, on one core).

The parent builds the app once, then forks the workers: each inherits the app as built,
with the one form token the parent drew (web/forms.py), so a form made by one worker is
accepted by any other, and nothing secret crosses a pipe, a file or the environment. The
checks that stop the server with a message (a bad index, a port in use) run in the parent,
before any worker starts. On Linux each worker listens on its own socket of the port
(SO_REUSEPORT: the kernel spreads the connections among them); elsewhere they share one.
Ctrl-C or SIGTERM stops every worker.

A worker that dies without being asked to (killed by the system for memory, `kill -9`, a
crash) is replaced (issue 51.7: one killed worker used to stop the whole server): the parent
says which worker died and how, and forks another from the app as built, which warms up as
the first ones did while the others keep serving. The dead worker's requests are lost (its
connections, accepted or waiting in its socket's queue, are closed with it); the others'
are not. On Linux the new worker's socket is bound at once but listens only once it is warm,
so no connection waits for its warm-up. A worker that keeps dying is not restarted in a
loop: past RESTARTS deaths within WINDOW_S seconds the server says so and stops (exit 1), as
a broken start stops it, rather than serve on with fewer workers than asked for unnoticed.

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
import time
import traceback
from typing import Any, Callable

from glassrag.errors import ConfigError

SPREAD = sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")
# seconds the requests in flight at Ctrl-C may take to finish before they are cancelled:
# uvicorn's default waits for them without end, and a stalled client or a long page kept the port
GRACE_S = 5
# a dead worker is replaced unless more than RESTARTS workers died within WINDOW_S seconds: then
# the server stops (a worker that dies as it starts would otherwise be forked again without end)
RESTARTS = 5
WINDOW_S = 60.0
STOPS = {signal.SIGINT, signal.SIGTERM}


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


def bound(host: str, port: int) -> socket.socket:
    """A socket bound to host:port beside the others (SO_REUSEPORT) that does not listen yet:
    asyncio's server makes it listen once the worker's lifespan (its warm-up) is done, so until
    then the kernel gives its connections to the workers that serve."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def run(app: Any, host: str, port: int, count: int) -> int:
    """Serves `app` from `count` forked workers until Ctrl-C or SIGTERM (0), replacing a worker
    that dies by itself, or until more than RESTARTS died within WINDOW_S seconds (1)."""
    if not hasattr(os, "fork"):
        raise ConfigError(f"--workers {count} needs os.fork, which this system has not",
                          "run one worker: --workers 1")
    sockets = listeners(host, port, count)
    shared = None if SPREAD else sockets[0]  # kept open here: a new worker serves on it too
    children: dict[int, int] = {}  # pid -> worker number
    parent = os.getpid()
    for number in range(count):
        mine = sockets[number] if SPREAD else sockets[0]
        _fork(app, mine, parent, {}, children, number, [s for s in sockets[number + 1:] if s is not mine])
        if SPREAD:
            mine.close()  # the worker holds it; the next workers need not
    previous = {s: signal.getsignal(s) for s in STOPS}

    def replace(number: int) -> None:
        mine = shared if shared is not None else bound(host, port)
        try:
            _fork(app, mine, parent, previous, children, number)
        finally:
            if mine is not shared:
                mine.close()

    try:
        return _supervise(children, replace)
    finally:
        if shared is not None:
            shared.close()


def _fork(app: Any, sock: socket.socket, parent: int, handlers: dict[int, Any],
          children: dict[int, int], number: int, others: list[socket.socket] | None = None) -> None:
    """Forks worker `number` serving `app` on `sock` and puts its pid in `children`. The stop
    signals are blocked across the fork, so the parent's handler (which passes a signal on to
    every worker in `children`) runs only once the new pid is there, and the worker gets
    `handlers` back (the ones before the parent's) before it can take a signal. The worker
    closes `others`, the sockets of the workers forked after it: a socket it kept would
    outlive its own worker and, never accepted on, hold the connections the kernel gives it."""
    signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    try:
        pid = os.fork()
        if pid == 0:
            _worker(app, sock, parent, handlers, others or [])  # never returns
        children[pid] = number
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)


def _worker(app: Any, sock: socket.socket, parent: int, handlers: dict[int, Any],
            others: list[socket.socket]) -> None:
    code = 1
    try:
        for other in others:
            other.close()
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)
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


def died(status: int) -> str:
    """How a worker ended, from its wait status: `was killed by signal 9 (SIGKILL)` or
    `exited with status 1`."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = f" ({signal.Signals(number).name})"
        except ValueError:
            name = ""
        return f"was killed by signal {number}{name}"
    return f"exited with status {os.waitstatus_to_exitcode(status)}"


def _supervise(children: dict[int, int], replace: Callable[[int], None]) -> int:
    """Waits for the workers; a signal to the parent is passed on to every worker. A worker
    that dies unasked is replaced by `replace(number)` (which adds the new pid), unless more than RESTARTS
    died within WINDOW_S seconds: then every worker is stopped and the server exits 1."""
    stopping = False

    def stop(signum: int, frame: Any) -> None:
        nonlocal stopping
        stopping = True
        for pid in children:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def say(text: str) -> None:
        print(f"glassrag serve: {text}", file=sys.stderr, flush=True)

    previous = {s: signal.signal(s, stop) for s in STOPS}
    deaths: list[float] = []  # when workers died unasked, the last WINDOW_S seconds
    code = 0
    try:
        while children:
            pid, status = os.wait()
            number = children.pop(pid, None)
            if number is None or stopping:
                continue
            now = time.monotonic()
            deaths = [t for t in deaths if now - t < WINDOW_S] + [now]
            which = f"worker {number + 1} (pid {pid}) {died(status)}"
            if len(deaths) > RESTARTS:
                say(f"{which}; {len(deaths)} workers died within {WINDOW_S:g} s, so none is started "
                    "again: stopping the server. If a worker dies as it starts, its messages are above; "
                    "if the system killed it for memory, serve fewer workers (--workers)")
                code = 1
                stop(signal.SIGTERM, None)
                continue
            say(f"{which}; the requests it held are lost. Starting another in its place "
                f"(any other workers serve meanwhile)")
            try:
                replace(number)
            except OSError as e:
                say(f"cannot start a worker in place of worker {number + 1} ({e}): stopping the server")
                code = 1
                stop(signal.SIGTERM, None)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    return code
