"""vLLM's OpenAI-compatible server (CPU build, ``scripts/vllm_env.sh``) on a loopback port,
serving a safetensors export of an embedded GGUF (``factscore_local.lm.export_hf``) under
the embedded model's name, for the tests and benchmarks.

Example:
    >>> server = VllmServer(Path("export"), Path("vllm.log"), "my-lm")  # doctest: +SKIP
    >>> server.start(); print(server.url); server.kill()  # doctest: +SKIP
    http://127.0.0.1:40123/v1
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

from factscore_local.runtime.cores import first_cores, usable_cores
from scripts.llama_server import LoopbackServer

ROOT = Path(__file__).resolve().parents[1]
VENV_VARIABLE = "FSCORE_VLLM_VENV"  # as scripts/vllm_env.sh reads it
START_TIMEOUT_S = 600.0  # a cold start on 2 busy cores (imports, weights, warm-up)
KV_CACHE_GB = 2  # VLLM_CPU_KVCACHE_SPACE: 8192-token prompts, a few dozen in flight
LOGPROBS = 20  # --max-logprobs: ServerLM asks for the top 20 (lm/server_backend.py)


def vllm_python() -> Path:
    """The python of the vLLM environment (made by ``scripts/vllm_env.sh``)."""
    venv = os.environ.get(VENV_VARIABLE)
    return (Path(venv) if venv else ROOT / ".venv-vllm") / "bin" / "python"


def vllm_version() -> str | None:
    """The installed vLLM's version, or None where the environment is missing."""
    python = vllm_python()
    if not python.exists():
        return None
    code = "import importlib.metadata as m; print(m.version('vllm-cpu'))"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


class VllmServer(LoopbackServer):
    """``python -m vllm.entrypoints.openai.api_server`` with a model folder on a loopback
    port, under ``served_name``; its output goes to ``log``. ``dtype``: vLLM's arithmetic
    (float32 or bfloat16); ``threads``: the cores its OpenMP threads are bound to (by default
    all this process may use: vLLM's own binding keeps one for its scheduler); ``one_process``:
    the engine in the server's process (VLLM_ENABLE_V1_MULTIPROCESSING=0), a start 30 s sooner."""

    name = "vLLM"
    poll_s = 1.0

    def __init__(
        self,
        model: Path,
        log: Path,
        served_name: str,
        dtype: str = "float32",
        threads: int | None = None,
        max_num_seqs: int | None = None,
        python: Path | None = None,
        one_process: bool = False,
    ) -> None:
        super().__init__(model, log)
        self.served_name, self.dtype, self.one_process = served_name, dtype, one_process
        self.threads = threads or usable_cores()
        self.max_num_seqs = max_num_seqs
        self.python = python or vllm_python()

    def describe(self) -> str:
        """What serves, for a benchmark's record."""
        return (f"vLLM {vllm_version()} (python -m vllm.entrypoints.openai.api_server), "
                f"{self.model.name} in {self.dtype} as {self.served_name}, {self.threads} "
                f"threads, {KV_CACHE_GB} GiB of KV cache")  # fmt: skip

    def command(self) -> list[str]:
        cmd = [str(self.python), "-m", "vllm.entrypoints.openai.api_server",
               "--model", str(self.model), "--served-model-name", self.served_name,
               "--host", "127.0.0.1", "--port", str(self.port), "--dtype", self.dtype,
               "--max-model-len", "8192", "--max-logprobs", str(LOGPROBS),
               "--enforce-eager", "--generation-config", "vllm",
               # the model in the engine's own process: one process fewer to start (and to
               # import torch and vLLM in)
               "--distributed-executor-backend", "uni"]  # fmt: skip
        if self.max_num_seqs:
            cmd += ["--max-num-seqs", str(self.max_num_seqs)]
        return cmd

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update({
            "VLLM_CPU_KVCACHE_SPACE": str(KV_CACHE_GB),
            "VLLM_CPU_OMP_THREADS_BIND": first_cores(self.threads),
            "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1",
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
        })  # fmt: skip
        return env | ({"VLLM_ENABLE_V1_MULTIPROCESSING": "0"} if self.one_process else {})

    def popen_options(self) -> dict:
        # its own session: the engine runs in child processes, killed with it
        return {"start_new_session": True}

    def start(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Starts vLLM and waits until it answers ``/models`` (``LoopbackServer.start``)."""
        if not self.python.exists():
            raise AssertionError(f"no vLLM environment at {self.python}: run "
                                 "bash scripts/vllm_env.sh")  # fmt: skip
        super().start(timeout_s)

    def kill(self) -> None:
        """Stops the server and its engine processes (SIGKILL to its process group: a
        killed server is what the resume test needs)."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        # the engine core may outlive the server's process for a moment
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _group_alive(self.proc.pid):
            time.sleep(0.2)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
