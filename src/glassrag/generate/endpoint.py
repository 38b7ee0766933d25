"""Any OpenAI-compatible chat endpoint (llama.cpp server, Ollama, vLLM) by base URL:
`POST {url}/chat/completions` with {model, messages, max_tokens, temperature, seed}, and
`stop` and llama.cpp's `repeat_penalty` only when the caller sets them; the answer is
`choices[0].message.content`, the tokens `usage`. A key, when the server wants one, comes
from the environment variable GLASSRAG_GENERATE_KEY (never a file), and is sent only to the
URL's own origin: a redirect to another scheme, host or port is followed without it
(`SameOriginAuth`). The URL is shown and saved without a key in its query.
"""

from __future__ import annotations

import json
import os
import socket
import time
import urllib.error
import urllib.request
from typing import Any, Sequence

from urllib.parse import urlsplit

from glassrag.errors import GenerationError, redact
from glassrag.generate.base import Answering, Completion

POINT = ("start the server (llama.cpp: llama-server -m MODEL.gguf; Ollama: ollama serve) or "
         "correct [generate] backend")


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the scheme's default port filled in: two URLs of one origin
    are the same server (RFC 6454)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port or {"http": 80, "https": 443}.get(scheme)


class SameOriginAuth(urllib.request.HTTPRedirectHandler):
    """urllib's redirects, but a redirect to another origin drops the Authorization header
    (urllib copies every header to wherever the server points, the key included)."""

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str,
                         headers: Any, newurl: str) -> urllib.request.Request | None:
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and origin(newurl) != origin(req.full_url):
            for name in [k for k in new.headers if k.lower() == "authorization"]:
                del new.headers[name]
            new.unredirected_hdrs.pop("Authorization", None)
        return new


_OPENER = urllib.request.build_opener(SameOriginAuth)


class Endpoint:
    # a model behind an endpoint is the user's choice, most often far larger than the bundled
    # one: it gets the citing prompt, the passages setting as it is and plain decoding
    answering = Answering()

    def __init__(self, url: str, model: str, timeout: float = 120.0) -> None:
        self.url = url.rstrip("/")
        self.shown = redact(self.url)  # in messages, traces and run files: no key of its query
        self.model = model or "default"
        self.timeout = timeout

    def params(self) -> dict[str, Any]:
        return {"backend": self.shown, "model": self.model, "timeout": self.timeout}

    def complete(self, messages: list[dict[str, str]], max_tokens: int, temperature: float,
                 seed: int, stop: Sequence[str] = (), repeat_penalty: float = 1.0) -> Completion:
        fields: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": max_tokens,
                                  "temperature": temperature, "seed": seed}
        if stop:
            fields["stop"] = list(stop)
        if repeat_penalty != 1.0:  # llama.cpp's server and Ollama read it; others ignore it
            fields["repeat_penalty"] = repeat_penalty
        body = json.dumps(fields).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if os.environ.get("GLASSRAG_GENERATE_KEY"):
            headers["Authorization"] = "Bearer " + os.environ["GLASSRAG_GENERATE_KEY"]
        request = urllib.request.Request(self.url + "/chat/completions", body, headers, method="POST")
        t0 = time.perf_counter()
        try:
            with _OPENER.open(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as e:
            detail = e.read()[:300].decode("utf-8", "replace")
            raise GenerationError(f"{self.shown} answered HTTP {e.code}: {detail}",
                                  "check [generate] model (the name the server knows) and the URL") from None
        except (urllib.error.URLError, socket.timeout, ConnectionError) as e:
            reason = getattr(e, "reason", e)
            raise GenerationError(f"nothing usable answers at {self.shown}: {reason}", POINT) from None
        try:
            data = json.loads(raw)
            choice = data["choices"][0]
            text = choice["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError):
            raise GenerationError(f"{self.shown} did not answer like an OpenAI-compatible chat endpoint: "
                                  f"{raw[:200].decode('utf-8', 'replace')!r}",
                                  "the URL should be the API base, e.g. http://127.0.0.1:8080/v1") from None
        usage = data.get("usage") or {}
        return Completion(str(text), usage.get("prompt_tokens"), usage.get("completion_tokens"),
                          (time.perf_counter() - t0) * 1000.0, choice.get("finish_reason"))
