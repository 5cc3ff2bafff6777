"""Options shared by the backends that load a model (device, dtype, batch size)."""

from __future__ import annotations

from typing import Any

from custom_metrics.judge.spec import JudgeSpec


def device_and_dtype(spec: JudgeSpec) -> tuple[Any, Any]:
    import torch

    device = torch.device(spec.options.get("device") or ("cuda" if torch.cuda.is_available() else "cpu"))
    name = spec.options.get("dtype") or ("bfloat16" if device.type == "cuda" else "float32")
    if not hasattr(torch, name) or not isinstance(getattr(torch, name), torch.dtype):
        raise ValueError(f"judge {spec.name}: unknown dtype {name!r} (e.g. float32, bfloat16, float16)")
    return device, getattr(torch, name)


def batch_size(spec: JudgeSpec, default: int) -> int:
    value = spec.options.get("batch_size", str(default))
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"judge {spec.name}: batch_size must be a positive integer, got {value!r}")
    return int(value)
