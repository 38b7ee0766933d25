"""Issue 51.7's trial, re-run: M questions (/ask.json) sent by C clients at once to a real
`glassrag serve --workers 2` on loopback; once a third of them are answered, one worker is
killed with SIGKILL (as the OOM killer does). Prints how many were answered (200), how many
failed and how, how many of those failed were sent after the killed worker was gone (none may
be: they are the other worker's), whether the server still runs, and how long until 2
sockets listen again.

    python scripts/worker_kill.py INDEX [M] [C] [W]  # INDEX: an index folder (the demo's); W: 1 or 2, the worker killed

Loopback only, Linux only (/proc); the server is started and stopped here."""

from __future__ import annotations

import collections
import http.client
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

QUESTIONS = ["What does error E-4107 mean?", "How do I rotate the API key?", "Which port does the agent use?"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def children_of(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return sorted(found)


def listening(port: int) -> int:
    rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return sum(1 for row in rows if row.split()[1] == f"0100007F:{port:04X}" and row.split()[3] == "0A")


def ask(base: str, number: int) -> str:
    url = f"{base}/ask.json?" + urllib.parse.urlencode({"q": QUESTIONS[number % len(QUESTIONS)]})
    try:
        with urllib.request.urlopen(url, timeout=300) as r:
            r.read()
            return str(r.status)
    except urllib.error.HTTPError as e:
        return str(e.code)
    except (OSError, http.client.HTTPException) as e:
        return type(getattr(e, "reason", e)).__name__


def main(index: str, total: int = 120, clients: int = 4, which: int = 1) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([sys.executable, "-m", "glassrag.cli", "serve", "--index", index, "--port", str(port),
                             "--workers", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        while listening(port) < 2 or len(children_of(proc.pid)) < 2:
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.1)
        results: list[tuple[float, str]] = []  # (when sent, outcome)
        lock = threading.Lock()
        turn = iter(range(total))

        def client() -> None:
            while True:
                with lock:
                    number = next(turn, None)
                if number is None:
                    return
                sent = time.monotonic()
                outcome = ask(base, number)
                with lock:
                    results.append((sent, outcome))

        threads = [threading.Thread(target=client) for _ in range(clients)]
        for t in threads:
            t.start()
        while len(results) < total // 3:
            time.sleep(0.01)
        victim = children_of(proc.pid)[which - 1]  # forked in turn: worker 1, then worker 2
        os.kill(victim, signal.SIGKILL)
        killed = time.monotonic()
        while Path(f"/proc/{victim}").exists() and time.monotonic() - killed < 30:  # until reaped
            time.sleep(0.005)
        gone = time.monotonic()
        back = None
        while any(t.is_alive() for t in threads) or back is None:
            if back is None and proc.poll() is None and listening(port) == 2 and len(children_of(proc.pid)) == 2:
                back = time.monotonic() - killed
            if proc.poll() is not None and not any(t.is_alive() for t in threads):
                break
            time.sleep(0.05)
        for t in threads:
            t.join()
        counts = collections.Counter(outcome for _, outcome in results)
        later = sum(1 for sent, outcome in results if sent > gone and outcome != "200")
        print(f"{total} asks, {clients} clients, worker {which} (pid {victim}) killed after {total // 3} answers")
        print("outcomes:", dict(counts))
        print(f"lost: {total - counts['200']} of {total}, {later} of them sent after the worker was gone; "
              f"server running: {proc.poll() is None}; "
              f"2 workers listening again after: {'never' if back is None else f'{back:.2f} s'}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(timeout=30)
        print(proc.stderr.read().strip(), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:5]))
