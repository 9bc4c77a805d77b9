"""Where the LM runs is never silent: llama.cpp's ``auto`` with a GPU that its CPU-only
build cannot use says so, and stays on the CPU."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from factscore_local.lm import llama_backend
from factscore_local.lm.llama_backend import CPU_BUILD_WARNING, LlamaCppLM
from factscore_local.runtime.device import DeviceError

CPU_BUILD = SimpleNamespace(llama_supports_gpu_offload=lambda: False)
GPU_BUILD = SimpleNamespace(llama_supports_gpu_offload=lambda: True)


@pytest.mark.parametrize("gpu", [True, False])
def test_auto_with_a_cpu_build_stays_on_the_cpu_and_says_so_when_a_gpu_is_there(
    monkeypatch, capsys, gpu
):
    monkeypatch.setattr(llama_backend, "cuda_available", lambda: gpu)
    assert LlamaCppLM._offload_device(CPU_BUILD, "auto") == "cpu"
    assert (CPU_BUILD_WARNING in capsys.readouterr().err) is gpu


def test_auto_with_a_gpu_build_offloads_when_torch_sees_a_card(monkeypatch, capsys):
    import factscore_local.runtime.device as device

    monkeypatch.setattr(device, "cuda_available", lambda: True)
    assert LlamaCppLM._offload_device(GPU_BUILD, "auto") == "cuda"
    assert capsys.readouterr().err == ""


def test_cuda_with_a_cpu_build_is_an_error_that_says_how_to_rebuild(monkeypatch):
    import factscore_local.runtime.device as device

    monkeypatch.setattr(device, "cuda_available", lambda: True)
    with pytest.raises(DeviceError, match="GGML_CUDA=on"):
        LlamaCppLM._offload_device(CPU_BUILD, "cuda")
