"""Issue 51.3's hostile round, re-run: N cross-site GETs that would start expensive work (the
generated-words retrievers with 1,024 tokens on /ask.json, a test-split evaluation of other
settings on /lab/losses.json, and other settings on each lab exhibit that evaluates a split:
/lab/cuts, /lab/bm25, /lab/fusion, /lab/rerank), sent at once to a real `glassrag serve` on loopback, while a
probe asks /glossary.json every PROBE_EVERY s; prints each GET's status and seconds and the
probe's p50/p95/max.

    python scripts/hostile_gets.py INDEX [N]     # INDEX: an index folder with a golden set (the demo's)

Loopback only; the server is started and stopped here."""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

PROBE_EVERY = 0.5
# the i-th hostile GET's settings per exhibit: each an evaluation of a split with settings of its own
EXHIBITS = {
    "cuts": lambda i: {"chunker": "fixed", "unit": "words", "size": str(60 + 7 * i), "overlap": str(i % 20)},
    "bm25": lambda i: {"k1": f"{0.5 + 0.13 * i:.2f}", "b": f"{0.05 + 0.09 * (i % 10):.2f}", "commit": "1"},
    "fusion": lambda i: {"method": "rrf", "k": str(5 + 11 * i)},
    "rerank": lambda i: {"l2": f"{0.01 * (i + 1):.2f}"},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str, timeout: float = 900.0) -> tuple[int, float]:
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            r.read()
            status = r.status
    except urllib.error.HTTPError as e:
        status = e.code
    return status, time.perf_counter() - t0


def main(index: str, n: int) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, "-m", "glassrag.cli", "serve", "--index", index, "--port", str(port),
                               "--workers", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env={**os.environ, "HF_HUB_OFFLINE": "1"})
    try:
        for _ in range(600):
            try:
                get(base + "/glossary.json", 5)
                break
            except OSError:
                time.sleep(0.5)
        hostile = [base + "/ask.json?" + urllib.parse.urlencode(
            {"q": f"What does error E-41{i:02d} mean?", "role.bm25-hyde": "fused", "retrieve.generated_tokens": "1024"})
            for i in range(n)]
        hostile += [base + "/lab/losses.json?" + urllib.parse.urlencode({"k": str(1 + i % 20), "gate": "off"})
                    for i in range(n)]
        for page, params in EXHIBITS.items():
            hostile += [base + f"/lab/{page}.json?" + urllib.parse.urlencode(params(i)) for i in range(n)]
        results: list[tuple[str, int, float]] = []
        probes: list[float] = []
        done = threading.Event()

        def send(url: str) -> None:
            status, seconds = get(url)
            results.append((url.split("?")[0].rsplit("/", 1)[-1], status, seconds))

        def probe() -> None:
            while not done.is_set():
                probes.append(get(base + "/glossary.json")[1])
                time.sleep(PROBE_EVERY)

        prober = threading.Thread(target=probe)
        prober.start()
        senders = [threading.Thread(target=send, args=(u,)) for u in hostile]
        t0 = time.perf_counter()
        for s in senders:
            s.start()
        for s in senders:
            s.join()
        time.sleep(2)  # a few probes after the last answer
        done.set()
        prober.join()
        print(f"{len(hostile)} hostile GETs answered in {time.perf_counter() - t0:.2f} s")
        for page in ("ask.json", "losses.json", *(f"{e}.json" for e in EXHIBITS)):
            mine = [(s, t) for p, s, t in results if p == page]
            print(f"  {page}: statuses {sorted({s for s, _ in mine})}, seconds max {max(t for _, t in mine):.3f}")
        probes.sort()
        p95 = probes[min(len(probes) - 1, int(0.95 * len(probes)))]
        print(f"/glossary.json meanwhile: {len(probes)} probes, p50 {statistics.median(probes):.3f} s, "
              f"p95 {p95:.3f} s, max {probes[-1]:.3f} s")
    finally:
        server.terminate()
        server.wait(30)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 10)
