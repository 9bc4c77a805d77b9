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


class LlamaServer:
    """``python -m llama_cpp.server`` with a GGUF on a loopback port; its output goes to
    ``log``."""

    def __init__(self, model: Path, log: Path, threads: int = 2) -> None:
        self.model, self.log, self.port = model, log, free_port()
        self.threads = threads
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.proc: subprocess.Popen | None = None

    def describe(self) -> str:
        """What serves, for a benchmark's record."""
        return (f"python -m llama_cpp.server (llama-cpp-python), {self.model.name}, "
                f"{self.threads} threads, one request at a time")  # fmt: skip

    def start(self, timeout_s: float = 180) -> None:
        """Starts the server and waits until it answers ``/models``; AssertionError with
        the end of its log when it exits or does not answer in time."""
        import httpx

        n = str(self.threads)
        # logits_all (the default) is what its completions need for logprobs; n_ctx holds
        # the verification prompts (the estimator's LM_CONTEXT).
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model),
               "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", "8192",
               "--logits_all", "true", "--n_threads", n, "--n_threads_batch", n]  # fmt: skip
        with self.log.open("a") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"llama_cpp.server exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(self.url + "/models", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        self.kill()
        raise AssertionError(f"llama_cpp.server did not start: {self.log.read_text()[-2000:]}")

    def kill(self) -> None:
        """Stops the server (SIGKILL: a killed server is what the resume test needs)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
