"""Priors of the fixes for host-to-device copies: the share of the copy time each change saves."""

from gpuprof.priors.prior import Prior

TITLE = "Fixes for host-to-device copies"

PINNED_COPY_SAVED = Prior(
    id="pin-memory.copy-time-saved", kind="assumed saving", value=0.6, unit="of the copy time",
    source="assumed since the fix was written, 2026-11-21 (faster DMA from pinned pages, and copies that overlap "
           "compute with non_blocking); not measured: on the H200 (2026-11-27, docs/validation.md) it was "
           "estimated for gpu_check/h2d_pageable.py, not tried",
    used_for="pin-memory: the share of the measured copy time pinned memory and non-blocking copies save",
    without_it="pin-memory has no estimate")

UINT8_COPY_SAVED = Prior(
    id="uint8-transfer.copy-time-saved", kind="assumed saving", value=0.75, unit="of the copy time",
    source="assumed since the fix was written, 2026-11-21: a copy takes time in proportion to its bytes, and "
           "uint8 is a quarter of float32's; not measured",
    used_for="uint8-transfer: the share of the measured copy time that shipping bytes instead of floats saves",
    without_it="uint8-transfer has no estimate")

STAGED_COPY_SAVED = Prior(
    id="gpu-staging.copy-time-saved", kind="assumed saving", value=0.9, unit="of the copy time",
    source="assumed since the fix was written, 2026-11-21: the data crosses once, not every step; not measured",
    used_for="gpu-staging for a transfer bottleneck: the share of the copy time staging the data set saves",
    without_it="staging has no estimate for a transfer bottleneck")
