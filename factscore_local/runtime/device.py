"""Where the heavy parts run: ``auto``, ``cpu`` or ``cuda`` (``cuda:N`` for one card).

Every part that can use a GPU (the transformers LM, llama.cpp's layer offload, the dense
encoder, FAISS) asks :func:`resolve_device` once, so ``auto`` means the same card for all
of them, and ``cuda`` on a machine without one stops with one clear line instead of a
crash deep inside torch.
"""

from __future__ import annotations

DEVICES = ("auto", "cpu", "cuda")


class DeviceError(RuntimeError):
    """The device asked for is not there (e.g. ``cuda`` on a machine without a GPU)."""


def cuda_available() -> bool:
    """Whether torch sees a CUDA GPU (False when torch is not installed)."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def resolve_device(spec: str | None = "auto") -> str:
    """The concrete device for a setting.

    Args:
        spec: ``auto`` (a CUDA GPU when torch sees one, else the CPU), ``cpu``, ``cuda``
            or ``cuda:N``. ``None`` means ``auto``.

    Returns:
        ``"cpu"``, ``"cuda"`` or ``"cuda:N"``.

    Raises:
        DeviceError: for ``cuda`` when no GPU is visible, or an unknown name.

    Example:
        >>> resolve_device("cpu")
        'cpu'
    """
    spec = (spec or "auto").strip().lower()
    if spec == "auto":
        return "cuda" if cuda_available() else "cpu"
    if spec == "cpu":
        return "cpu"
    if spec == "cuda" or (spec.startswith("cuda:") and spec[5:].isdigit()):
        if not cuda_available():
            raise DeviceError(
                f"device {spec!r} asked for, but no CUDA GPU is visible to torch "
                "(torch.cuda.is_available() is False); use --device cpu or auto"
            )
        return spec
    raise DeviceError(f"unknown device {spec!r}; choose auto, cpu, cuda or cuda:N")


def is_gpu(device: str) -> bool:
    """Whether a resolved device is a GPU."""
    return device.startswith("cuda")
