"""The HTTP side of an OpenAI-compatible inference server as the LM (``lm/server_backend.py``).

One ``httpx`` client per server, with a bounded pool of requests in flight
(``concurrency``), a read timeout, and retries with exponential backoff where a retry can
help: a connection that fails or breaks, HTTP 429 and 5xx. Every error names the server's
URL. A server that is down, answers something malformed or lacks what the run needs raises
:class:`ServerError`, which stops the run (the estimator reports a ``ValueError`` per bio
and goes on: that is kept for a request the server refuses, such as a prompt too long).
"""

from __future__ import annotations

import functools
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

SERVER_SCHEMES = ("http://", "https://")
DEFAULT_CONCURRENCY = 8
# A request's wait in the server's queue counts against its read timeout: with 8 in flight
# on a server that runs one at a time (llama-cpp-python's), a long generation waits for 7.
READ_TIMEOUT_S = 600.0
CONNECT_TIMEOUT_S = 10.0
RETRIES = 5  # after 0.5, 1, 2, 4 and 8 s: a server restarting has ~15 s to come back
# How many retries a request makes (each waiting twice the last), where ~15 s is the wrong
# wait: more for a server that takes longer to restart, fewer to fail fast.
RETRIES_VARIABLE = "FSCORE_SERVER_RETRIES"
BACKOFF_S = 0.5
RETRY_STATUS = (429, 500, 502, 503, 504)
# The API key some servers want (vLLM --api-key, llama-cpp-python --api_key), as the openai
# client reads it.
API_KEY_VARIABLE = "OPENAI_API_KEY"


def is_server_spec(spec: object) -> bool:
    """Whether an LM spec names a server (``http://HOST:PORT/v1``) rather than a model."""
    return isinstance(spec, str) and spec.startswith(SERVER_SCHEMES)


def default_retries() -> int:
    """The retries a request makes: ``FSCORE_SERVER_RETRIES`` where set, else 5."""
    value = os.environ.get(RETRIES_VARIABLE, "").strip()
    if not value:
        return RETRIES
    if not value.isdigit():
        raise ValueError(f"{RETRIES_VARIABLE}={value!r}: expected a whole number of retries")
    return int(value)


class ServerError(ConnectionError):
    """The LM server is down, answered something malformed, or cannot give what the run
    needs. Not a ValueError: the estimator turns those into one bio's error row and goes
    on, while no bio can be scored without the server."""


class ServerClient:
    """JSON requests to one server, ``concurrency`` of them in flight at most.

    ``base_url`` is the API's base (``http://HOST:PORT/v1``): ``/completions`` and
    ``/models`` are under it; ``root=True`` paths (``/tokenize``) under its host."""

    def __init__(
        self,
        base_url: str,
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout: float = READ_TIMEOUT_S,
        retries: int | None = None,
        backoff: float = BACKOFF_S,
    ) -> None:
        import httpx

        if concurrency < 1:
            raise ValueError("an LM server needs at least 1 request in flight")
        self.base = base_url.rstrip("/")
        self.root = self.base.removesuffix("/v1")
        self.timeout, self.backoff = timeout, backoff
        self.retries = default_retries() if retries is None else retries
        key = os.environ.get(API_KEY_VARIABLE)
        self._httpx = httpx
        self._http = httpx.Client(
            timeout=httpx.Timeout(timeout, connect=CONNECT_TIMEOUT_S),
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
            headers={"Authorization": f"Bearer {key}"} if key else {},
        )
        self._pool = ThreadPoolExecutor(concurrency, thread_name_prefix="lm-server")

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._http.close()

    def get(self, path: str, *, root: bool = False, optional: bool = False) -> Any:
        return self.request("GET", path, None, root=root, optional=optional)

    def post(self, path: str, payload: dict, *, root: bool = False, optional: bool = False) -> Any:
        return self.request("POST", path, payload, root=root, optional=optional)

    def text(self, path: str) -> str | None:
        """The text a GET of ``path`` under the server's host answers (``/metrics``), or
        None where it has no such endpoint or does not answer at once: never an error."""
        try:
            response = self._http.get(self.root + path, timeout=CONNECT_TIMEOUT_S)
        except self._httpx.HTTPError:
            return None
        return response.text if response.status_code == 200 else None

    def post_many(self, path: str, payloads: list[dict]) -> list[Any]:
        """The answers to many POSTs, in order, ``concurrency`` in flight. The first error
        is raised; requests not yet sent are cancelled."""
        futures = [self._pool.submit(self.post, path, p) for p in payloads]
        try:
            return [f.result() for f in futures]
        finally:
            for f in futures:
                f.cancel()

    def request(
        self, method: str, path: str, payload: dict | None, *, root: bool, optional: bool
    ) -> Any:
        """The JSON answer; None for an endpoint the server lacks when ``optional``."""
        url = (self.root if root else self.base) + path
        problem = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                response = self._http.request(method, url, json=payload)
            except self._httpx.TimeoutException as exc:
                if isinstance(exc, self._httpx.ConnectTimeout):
                    problem = "cannot be reached (the connection timed out)"
                    continue
                # alive but slow: a retry would queue the same work again
                raise ServerError(f"the LM server at {self.base} did not answer {path} within "
                                  f"{self.timeout:.0f} s") from exc  # fmt: skip
            except self._httpx.TransportError as exc:  # refused, reset, closed mid-answer
                problem = f"cannot be reached ({type(exc).__name__}: {exc})"
                continue
            status = response.status_code
            if status < 400:
                return self._json(response, path)
            if status in RETRY_STATUS or status >= 500:
                problem = f"answered {path} with HTTP {status}: {_snippet(response.text)}"
                continue
            if optional and status in (404, 405, 501):
                return None
            raise self._refusal(response, path)
        raise ServerError(f"the LM server at {self.base} {problem} ({self.retries + 1} tries "
                          f"over {self.backoff * (2**self.retries - 1):.1f} s); is it running "
                          f"there?")  # fmt: skip

    def _json(self, response, path: str) -> Any:
        try:
            return response.json()
        except ValueError as exc:
            raise ServerError(f"the LM server at {self.base} answered {path} with something "
                              f"that is not JSON: {_snippet(response.text)}") from exc  # fmt: skip

    def _refusal(self, response, path: str) -> Exception:
        """A 4xx: a request the server will not take (a ValueError, one bio's), or one no
        request of the run can pass (a ServerError)."""
        status, said = response.status_code, _snippet(response.text)
        if status in (401, 403):
            return ServerError(f"the LM server at {self.base} refused {path} (HTTP {status}: "
                               f"{said}); set {API_KEY_VARIABLE} to its API key")  # fmt: skip
        if status in (404, 405):
            return ServerError(f"the LM server at {self.base} has no {path} (HTTP {status}); "
                               f"--lm takes the API's base URL, e.g. http://HOST:PORT/v1, of a "
                               f"server with the completions API")  # fmt: skip
        return ValueError(f"the LM server at {self.base} refused a request to {path} (HTTP "
                          f"{status}): {said}")  # fmt: skip

    def malformed(self, path: str, what: str, answer: object) -> ServerError:
        return ServerError(f"the LM server at {self.base} answered {path} with {what}: "
                           f"{_snippet(repr(answer))}")  # fmt: skip

    def models(self) -> list[dict]:
        """The models the server lists (``GET /models``)."""
        answer = self.get("/models")
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list) or not all(
            isinstance(m, dict) and isinstance(m.get("id"), str) for m in data
        ):
            raise self.malformed("/models", "no list of models", answer)
        return data


def _snippet(text: str, limit: int = 240) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "…"


def pick_model(client: ServerClient, models: list[dict], lm_model: str | None) -> dict:
    """The entry of the model the run uses: ``lm_model``, or the only one served."""
    names = [m["id"] for m in models]
    if lm_model is not None:
        for m in models:
            if m["id"] == lm_model:
                return m
        if not models:  # a server that lists none may still serve the name it is given
            return {"id": lm_model}
        raise ServerError(f"the LM server at {client.base} serves no model {lm_model!r} "
                          f"(it serves: {', '.join(names)})")  # fmt: skip
    if len(models) == 1:
        return models[0]
    if not models:
        raise ServerError(f"the LM server at {client.base} lists no model; name the one to "
                          f"use with --lm-model")  # fmt: skip
    raise ServerError(f"the LM server at {client.base} serves several models "
                      f"({', '.join(names)}): choose one with --lm-model")  # fmt: skip


@functools.lru_cache(maxsize=16)
def served_model(url: str, lm_model: str | None = None) -> str:
    """The name of the model a run uses on a server: ``lm_model`` when given (no request),
    else the only one ``/models`` lists."""
    if lm_model is not None:
        return lm_model
    client = ServerClient(url, concurrency=1, retries=2)
    try:
        return pick_model(client, client.models(), None)["id"]
    finally:
        client.close()
