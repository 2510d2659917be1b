"""A program that builds its data, then exits 1 before its first step (as a CLI whose optional
dependency is missing does): it ran only set-up, so its report has no start-up share to give."""
import sys
import time

import torch

data = [torch.rand(64) for _ in range(1000)]
time.sleep(1.0)
sys.exit("error: LightningCLI needs jsonargparse[signatures] (not installed)")
