"""llama.cpp's OpenAI-compatible server (``python -m llama_cpp.server``, llama-cpp-python's
server extra) on a loopback port, for the tests and the speed benchmark.

Example:
    >>> server = LlamaServer(Path("model.gguf"), Path("server.log"))  # doctest: +SKIP
    >>> server.start(); server.url  # doctest: +SKIP
    'http://127.0.0.1:40123/v1'
    >>> server.kill()  # doctest: +SKIP
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LoopbackServer:
    """A model server process on a loopback port, its output appended to ``log``: the start
    (until ``ready_path`` answers), the end of its log and the kill the server modules share.
    A subclass gives its ``command()`` (and, where it needs them, ``environment()`` and
    ``popen_options()``)."""

    name = "server"  # in its errors
    ready_path = "/v1/models"  # answers 200 once the model is loaded
    poll_s = 0.5

    def __init__(self, model: Path, log: Path) -> None:
        self.model, self.log, self.port = model, log, free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.proc: subprocess.Popen | None = None
        self.start_s: float | None = None  # how long the last start took

    def command(self) -> list[str]:
        raise NotImplementedError

    def environment(self) -> dict[str, str] | None:
        return None  # this process's

    def popen_options(self) -> dict:
        return {}

    def start(self, timeout_s: float = 180) -> None:
        """Starts the server and waits until it answers ``ready_path``; AssertionError with
        the end of its log when it exits or does not answer in time."""
        import httpx

        began = time.monotonic()
        with self.log.open("a") as log:
            self.proc = subprocess.Popen(self.command(), stdout=log,
                                         stderr=subprocess.STDOUT, env=self.environment(),
                                         **self.popen_options())  # fmt: skip
        ready = f"http://127.0.0.1:{self.port}{self.ready_path}"
        while time.monotonic() < began + timeout_s:
            if self.proc.poll() is not None:
                raise AssertionError(f"{self.name} exited ({self.proc.returncode}): {self.tail()}")
            try:
                if httpx.get(ready, timeout=2).status_code == 200:
                    self.start_s = time.monotonic() - began
                    return
            except httpx.HTTPError:
                pass
            time.sleep(self.poll_s)
        self.kill()
        raise AssertionError(f"{self.name} did not answer within {timeout_s:.0f} s: "
                             f"{self.tail()}")  # fmt: skip

    def tail(self, chars: int = 3000) -> str:
        """The end of the server's log."""
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    def kill(self) -> None:
        """Stops the server (SIGKILL: a killed server is what the resume tests need)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class LlamaServer(LoopbackServer):
    """``python -m llama_cpp.server`` with a GGUF on a loopback port; its output goes to
    ``log``."""

    name = "llama_cpp.server"

    def __init__(self, model: Path, log: Path, threads: int = 2) -> None:
        super().__init__(model, log)
        self.threads = threads

    def describe(self) -> str:
        """What serves, for a benchmark's record."""
        return (f"python -m llama_cpp.server (llama-cpp-python), {self.model.name}, "
                f"{self.threads} threads, one request at a time")  # fmt: skip

    def command(self) -> list[str]:
        n = str(self.threads)
        # logits_all (the default) is what its completions need for logprobs; n_ctx holds
        # the verification prompts (the estimator's LM_CONTEXT).
        return [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model),
                "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", "8192",
                "--logits_all", "true", "--n_threads", n, "--n_threads_batch", n]  # fmt: skip
