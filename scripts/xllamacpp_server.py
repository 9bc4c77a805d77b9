"""llama.cpp's own HTTP server (its C++ ``llama-server``: parallel slots, continuous batching)
from the ``xllamacpp`` wheel (prebuilt for the CPU; the ``dev`` extra) on a loopback port,
for the tests and the speed benchmark.

xllamacpp has no command-line entry: ``xllamacpp.Server(params)`` starts the server's HTTP
and inference threads inside the calling process. ``python -m scripts.xllamacpp_server``
is that process; ``XllamacppServer`` starts it and waits until it answers ``/health``.

What it serves (xllamacpp 2026.10.11549, llama.cpp's server): ``/v1/completions`` with the
top log-probabilities of each generated token (``logprobs: k``, llama.cpp's ``n_probs``,
in the chat API's ``content`` shape; before sampling: a softmax over the whole vocabulary),
a list of prompts per request, and ``/tokenize``; no log-probabilities of the prompt's own
tokens: ``echo`` and vLLM's ``prompt_logprobs`` are ignored, so NP cannot be read and a run
scores rules without it (``--verifier retrieve-lm``). ``/v1/models`` lists the model by
the GGUF's path (or ``--alias``), with no ``max_model_len``. The CPU wheel is built for
AVX2 (no AVX-512, no ``-march=native``: ``xllamacpp.get_system_info()``).

Example:
    >>> context_size(8)  # tokens to allocate: 8 slots of 8192
    65536
    >>> server = XllamacppServer(Path("model.gguf"), Path("server.log"), slots=8)  # doctest: +SKIP
    >>> server.start(); server.url  # doctest: +SKIP
    'http://127.0.0.1:40123/v1'
    >>> server.kill()  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

from factscore_local.lm import LM_CONTEXT
from factscore_local.runtime.cores import usable_cores
from scripts.llama_server import LoopbackServer

ROOT = Path(__file__).resolve().parents[1]


def context_size(slots: int, per_slot: int = LM_CONTEXT) -> int:
    """The context to allocate for ``slots`` parallel slots. llama.cpp's server splits it
    evenly among them (one KV cache per slot, not unified), and each must hold the longest
    prompt a run sends: ``LM_CONTEXT`` tokens, the in-process context, which ``ServerLM``
    assumes of a server that reports no ``max_model_len`` (the evidence budget is 7000)."""
    if slots < 1:
        raise ValueError(f"a server needs at least one slot, not {slots}")
    return slots * per_slot


def xllamacpp_version() -> str | None:
    """The installed xllamacpp's version (read without loading llama.cpp), or None."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("xllamacpp")
    except PackageNotFoundError:
        return None


class XllamacppServer(LoopbackServer):
    """llama.cpp's server with a GGUF on a loopback port, ``slots`` requests decoded together
    (continuous batching), the machine's cores as threads; its output goes to ``log``.

    ``alias`` is the name ``/v1/models`` lists; by default the GGUF's path, which names the
    embedded model (its tokenizer and fitted rule apply) and lets a run check the served
    weights by their sha256, as llama-cpp-python's server (``scripts/llama_server.py``)."""

    name = "xllamacpp's server"
    ready_path = "/health"

    def __init__(
        self,
        model: Path,
        log: Path,
        slots: int = 8,
        threads: int | None = None,
        alias: str | None = None,
    ) -> None:
        super().__init__(model, log)
        self.slots, self.alias = slots, alias
        self.threads = threads or usable_cores()
        self.n_ctx = context_size(slots)

    def describe(self) -> str:
        """What serves, for a benchmark's record."""
        return (f"llama.cpp's server (xllamacpp {xllamacpp_version()}, its CPU wheel: AVX2), "
                f"{self.model.name}, {self.slots} parallel slots (continuous batching) of "
                f"{self.n_ctx // self.slots} tokens, {self.threads} threads")  # fmt: skip

    def command(self) -> list[str]:
        """The server process's command line (``python -m scripts.xllamacpp_server``)."""
        cmd = [sys.executable, "-m", "scripts.xllamacpp_server", "--model", str(self.model),
               "--port", str(self.port), "--slots", str(self.slots), "--ctx-size",
               str(self.n_ctx), "--threads", str(self.threads)]  # fmt: skip
        return cmd + (["--alias", self.alias] if self.alias else [])

    def popen_options(self) -> dict:
        return {"cwd": ROOT}  # python -m scripts.xllamacpp_server

    def start(self, timeout_s: float = 300) -> None:
        super().start(timeout_s)


def serve(args: argparse.Namespace) -> None:
    """Starts llama.cpp's server in this process and serves until it is killed."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(args.model)
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.n_parallel = args.slots
    params.cont_batching = True
    params.kv_unified = False  # each slot its own n_ctx / slots tokens (context_size)
    params.n_ctx = args.ctx_size
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    if args.alias:
        params.model_alias = {args.alias}
    print(f"xllamacpp {xllamacpp.__version__}: {xllamacpp.get_system_info()}", flush=True)
    server = xllamacpp.Server(params)  # its threads serve; this one only keeps it alive
    print(f"listening at {server.listening_address}", flush=True)
    threading.Event().wait()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.xllamacpp_server",
                                 description=__doc__.split("\n\n")[0])  # fmt: skip
    ap.add_argument("--model", type=Path, required=True, help="a GGUF file")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--slots", type=int, default=8, help="requests decoded together")
    ap.add_argument("--ctx-size", type=int, default=None, help="default: LM_CONTEXT a slot")
    ap.add_argument("--threads", type=int, default=None, help="default: every usable core")
    ap.add_argument("--alias", default=None, help="the model's name (default: its path)")
    args = ap.parse_args(argv)
    args.ctx_size = args.ctx_size or context_size(args.slots)
    args.threads = args.threads or usable_cores()
    serve(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
