"""What a batch is made of, for the first few batches only: dtype, shape, bytes, and whether float
data could travel as uint8 (every value an integer in [0, 255], or a multiple of 1/255 in [0, 1],
or at most 256 distinct values per channel, as normalised uint8 images have).

Reads the tensors, never changes them, keeps no reference, draws no random numbers."""

from collections.abc import Mapping

SAMPLE = 65536          # elements looked at per tensor
MAX_ITEMS = 16          # elements of a tuple, list or dict looked at
MAX_DEPTH = 3


def describe_batch(data, torch) -> list:
    found = []
    _walk(data, "batch", 0, found, torch)
    return found


def _walk(value, path, depth, found, torch) -> None:
    if isinstance(value, torch.Tensor):
        found.append(_describe_tensor(value, path, torch))
        return
    if depth >= MAX_DEPTH:
        return
    if isinstance(value, dict) or _is_mapping(value):
        for i, (key, item) in enumerate(value.items()):
            if i >= MAX_ITEMS:
                break
            _walk(item, f"{path}[{key!r}]", depth + 1, found, torch)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value[:MAX_ITEMS]):
            _walk(item, f"{path}[{i}]", depth + 1, found, torch)


def _is_mapping(value) -> bool:
    """A mapping that is no dict (Hugging Face's BatchEncoding is a UserDict)."""
    return isinstance(value, Mapping)


def _describe_tensor(tensor, path, torch) -> dict:
    info = {"path": path, "dtype": str(tensor.dtype).replace("torch.", ""), "shape": list(tensor.shape),
            "bytes": int(tensor.numel() * tensor.element_size()), "device": tensor.device.type}
    if tensor.device.type == "cpu" and tensor.is_floating_point() and tensor.numel() > 0 and tensor.layout == torch.strided:
        with torch.no_grad():
            info.update(_uint8_test(tensor, torch))
    return info


def _uint8_test(tensor, torch) -> dict:
    flat = tensor.detach().reshape(-1)
    step = max(1, flat.numel() // SAMPLE)
    sample = flat[::step].to(torch.float64)
    in_byte_range = bool(((sample >= 0) & (sample <= 255)).all())
    integers = in_byte_range and bool((sample == sample.round()).all())
    scaled = sample * 255
    fractions = bool(((sample >= 0) & (sample <= 1)).all()) and bool(((scaled - scaled.round()).abs() < 1e-3).all())
    affine = False
    if not (integers or fractions) and tensor.dim() >= 2 and tensor.numel() >= 1024:
        channels = tensor.detach().transpose(0, 1).reshape(tensor.shape[1], -1) if tensor.dim() >= 3 else tensor.detach().reshape(1, -1)
        if channels.shape[0] <= 64:
            affine = all(int(torch.unique(row[::max(1, row.numel() // SAMPLE)]).numel()) <= 256 for row in channels)
    form = "0..255" if integers else ("k/255" if fractions else ("affine" if affine else None))
    return {"uint8_candidate": form is not None, "uint8_form": form}
