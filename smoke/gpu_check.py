"""GPU smoke check: run inside a pod that asked for one GPU; report what it sees and prove it computes.

Prints the devices (name, count, memory), the driver and CUDA versions, and the result of a small
compute check done on the GPU. Exit codes, so a Job's status says which way it failed:
  0  a GPU was found and computed correctly
  3  no NVIDIA GPU is visible (device plugin missing, pod did not ask for nvidia.com/gpu, wrong node)
  4  a GPU is visible but the compute check gave a wrong answer
  5  a GPU is visible but PyTorch is missing from the image, so nothing could be computed
Standard library plus PyTorch (as the NGC PyTorch image ships it); runs unchanged on any NVIDIA GPU.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from types import ModuleType
from typing import TextIO

EXIT_OK, EXIT_NO_GPU, EXIT_WRONG_RESULT, EXIT_NO_TORCH = 0, 3, 4, 5
SIZE = 1024


def nvidia_smi(*args: str) -> str | None:
    """nvidia-smi's output, or None where it is absent (no driver utilities in the container)."""
    if shutil.which("nvidia-smi") is None:
        return None
    result = subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, check=False, timeout=60)
    return result.stdout.strip() if result.returncode == 0 else None


def import_torch() -> ModuleType | None:
    try:
        import torch
    except ImportError:
        return None
    return torch


def compute_check(torch: ModuleType) -> tuple[bool, str]:
    """A matrix product and a reduction on the GPU, against values known in closed form."""
    device = "cuda"
    ones = torch.ones((SIZE, SIZE), device=device, dtype=torch.float32)
    product = (ones @ ones).mean().item()          # every entry is SIZE
    counting = torch.arange(SIZE, device=device, dtype=torch.float64)
    squares = (counting * counting).sum().item()   # 0^2 + ... + (n-1)^2
    torch.cuda.synchronize()
    expected_squares = (SIZE - 1) * SIZE * (2 * SIZE - 1) / 6
    ok = product == SIZE and squares == expected_squares
    return ok, (f"matmul {SIZE}x{SIZE} mean {product:g} (expected {SIZE}); sum of squares {squares:.0f} "
                f"(expected {expected_squares:.0f})")


def main(torch: ModuleType | None = None, smi: Callable[..., str | None] = nvidia_smi,
         out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    torch = torch if torch is not None else import_torch()
    listed = smi("-L")
    driver = smi("--query-gpu=driver_version", "--format=csv,noheader")
    cuda_visible = torch is not None and torch.cuda.is_available()
    if not cuda_visible and not listed:
        print("gpu-check: FAIL: no NVIDIA GPU is visible to this container. Check that the pod asks for "
              "nvidia.com/gpu in its limits, that it landed on a GPU node, and that the NVIDIA device plugin "
              "runs on that node (kubectl -n gpu-resources get pods -o wide).", file=err)
        return EXIT_NO_GPU
    if driver:
        print(f"driver version: {driver.splitlines()[0]}", file=out)
    if listed:
        print(listed, file=out)
    if torch is None:
        print("gpu-check: FAIL: a GPU is visible but PyTorch is not installed in this image, so no compute "
              "check ran; use an image with PyTorch (e.g. nvcr.io/nvidia/pytorch).", file=err)
        return EXIT_NO_TORCH
    print(f"CUDA version (PyTorch build): {torch.version.cuda}", file=out)
    count = torch.cuda.device_count()
    print(f"devices: {count}", file=out)
    for index in range(count):
        properties = torch.cuda.get_device_properties(index)
        print(f"  cuda:{index} {torch.cuda.get_device_name(index)}, {properties.total_memory / 2**30:.1f} GiB",
              file=out)
    ok, detail = compute_check(torch)
    if not ok:
        print(f"gpu-check: FAIL: wrong result from the GPU: {detail}", file=err)
        return EXIT_WRONG_RESULT
    print(f"compute check: ok ({detail})", file=out)
    print("gpu-check: PASS", file=out)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
