"""A device's peak arithmetic rate, with where the figure comes from.

Order of trust: the user's own figure (`--peak-tflops`, `[tool.gpuprof.run] peak_tflops`), then
one measured on this device model (a dense matmul benchmark, `gpuprof doctor`, kept in the cache),
then the table below, else unknown. The table holds *dense* tensor-core figures: NVIDIA's data
sheets print the 2:4-sparsity figure first ("1,979 TFLOPS" BF16 on an H100 SXM, twice the dense
989), and training runs dense matmuls. Figures (TFLOPS) from:

- NVIDIA H100 Tensor Core GPU Datasheet (H100 SXM, H100 PCIe, H100 NVL)
- NVIDIA H200 Tensor Core GPU Datasheet (H200 SXM, H200 NVL)
- NVIDIA A100 Tensor Core GPU Datasheet (40GB and 80GB, SXM and PCIe)
- NVIDIA L4 Tensor Core GPU Datasheet; NVIDIA L40S GPU Datasheet; NVIDIA A10 Tensor Core GPU Datasheet
- NVIDIA V100 Tensor Core GPU Datasheet (SXM2, PCIe); NVIDIA T4 Tensor Core GPU Datasheet
- NVIDIA Ada Lovelace GPU Architecture whitepaper, Appendix A (GeForce RTX 4090: FP16/BF16 tensor
  with FP32 accumulate, as PyTorch runs it)

`float32` matmuls run on TF32 tensor cores only when the program allows it
(`torch.backends.cuda.matmul.allow_tf32`, matmul precision "high"); otherwise the FP32 figure applies."""

import json
import os
import re

from gpuprof.stats.digits import FINE_DIGITS

#: (pattern over the NVML device name, label, {dtype: dense TFLOPS}); the first match wins.
KNOWN = (
    (r"H100.*NVL", "H100 NVL", {"FP64": 30.0, "FP32": 60.0, "TF32": 417.5, "BF16": 835.5, "FP16": 835.5,
                                "FP8": 1670.5}),
    (r"H100.*PCI", "H100 PCIe", {"FP64": 26.0, "FP32": 51.0, "TF32": 378.0, "BF16": 756.0, "FP16": 756.0,
                                 "FP8": 1513.0}),
    (r"H100", "H100 SXM", {"FP64": 34.0, "FP32": 67.0, "TF32": 494.7, "BF16": 989.4, "FP16": 989.4, "FP8": 1978.9}),
    (r"H200.*NVL", "H200 NVL", {"FP64": 30.0, "FP32": 60.0, "TF32": 417.5, "BF16": 835.5, "FP16": 835.5,
                                "FP8": 1670.5}),
    (r"H200", "H200 SXM", {"FP64": 34.0, "FP32": 67.0, "TF32": 494.7, "BF16": 989.4, "FP16": 989.4, "FP8": 1978.9}),
    (r"A100", "A100", {"FP64": 9.7, "FP32": 19.5, "TF32": 156.0, "BF16": 312.0, "FP16": 312.0}),
    (r"L40S", "L40S", {"FP32": 91.6, "TF32": 183.0, "BF16": 362.05, "FP16": 362.05, "FP8": 733.0}),
    (r"\bL4\b", "L4", {"FP32": 30.3, "TF32": 60.0, "BF16": 121.0, "FP16": 121.0, "FP8": 242.5}),
    (r"\bA10\b", "A10", {"FP32": 31.2, "TF32": 62.5, "BF16": 125.0, "FP16": 125.0}),
    (r"V100.*PCI", "V100 PCIe", {"FP64": 7.0, "FP32": 14.0, "FP16": 112.0}),
    (r"V100", "V100 SXM2", {"FP64": 7.8, "FP32": 15.7, "FP16": 125.0}),
    (r"\bT4\b", "T4", {"FP32": 8.1, "FP16": 65.0}),
    (r"RTX 4090", "GeForce RTX 4090", {"FP32": 82.6, "TF32": 82.6, "BF16": 165.2, "FP16": 165.2, "FP8": 330.3}),
)

#: The boost SM clock (MHz) each data sheet's peaks are stated at, same patterns: a GPU whose clock ran
#: lower while busy (a power cap, heat) reaches the peaks times the ratio. Data sheets as above; the
#: V100 and T4 sheets' boost clocks (1530, 1590), RTX 4090's 2520 from the Ada whitepaper.
BOOST_MHZ = ((r"H100.*NVL", 1785), (r"H100.*PCI", 1755), (r"H100", 1980), (r"H200.*NVL", 1785), (r"H200", 1980),
             (r"A100", 1410), (r"L40S", 2520), (r"\bL4\b", 2040), (r"\bA10\b", 1695), (r"V100", 1530),
             (r"\bT4\b", 1590), (r"RTX 4090", 2520))


def boost_clock(device_name: str):
    """The SM clock (MHz) the data sheet's peaks for this device are stated at, or None."""
    for pattern, mhz in BOOST_MHZ:
        if device_name and re.search(pattern, device_name):
            return mhz
    return None


DTYPE_KEYS = {"float64": "FP64", "float32": "FP32", "bfloat16": "BF16", "float16": "FP16",
              "float8_e4m3fn": "FP8", "float8_e5m2": "FP8"}


def dtype_key(dtype: str, tf32: bool = False) -> str:
    """The table's key for a torch dtype name ("float32" -> "FP32", or "TF32" where TF32 is allowed)."""
    key = DTYPE_KEYS.get(dtype or "", (dtype or "FP32").upper())
    return "TF32" if key == "FP32" and tf32 else key


def known_peak(device_name: str, key: str):
    """{tflops, source} from the data-sheet table for this device and dtype key, or None."""
    for pattern, label, figures in KNOWN:
        if device_name and re.search(pattern, device_name):
            if key in figures:
                return {"tflops": figures[key], "source": f"data sheet: {label} dense {key.upper()}"}
            return None
    return None


def cache_path() -> str:
    """~/.cache/gpuprof/peaks.json, or under $XDG_CACHE_HOME."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gpuprof", "peaks.json")


def cache_key(device_name: str, key: str, threads=None) -> str:
    return f"{device_name}|{key}" + (f"|{threads} threads" if threads else "")


def cached_peak(device_name: str, key: str, threads=None, path: str = None):
    """{tflops, source} measured earlier on this device model (and thread count), or None."""
    entry = _read(path or cache_path()).get(cache_key(device_name, key, threads))
    if not isinstance(entry, dict) or not isinstance(entry.get("tflops"), (int, float)) or entry["tflops"] <= 0:
        return None
    return {"tflops": float(entry["tflops"]), "source": f"measured ({entry.get('how') or 'matmul benchmark'})"}


def remember_peak(device_name: str, key: str, tflops: float, how: str, threads=None, path: str = None) -> None:
    """Keep a measured peak for the next runs on this device model; an unwritable cache is skipped."""
    path = path or cache_path()
    data = _read(path)
    data[cache_key(device_name, key, threads)] = {"tflops": round(float(tflops), FINE_DIGITS), "how": how}
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w") as handle:
            json.dump(data, handle, indent=1, sort_keys=True)
        os.replace(temporary, path)
    except OSError:
        pass


def _read(path: str) -> dict:
    try:
        with open(path) as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
