"""The parts of a start-up the start-up probe names in its samples (gpuprof.capture.probes.startup), read
back by the analysis and the start-up fixes: one spelling for the writer and the readers."""

IMPORTS = "imports"
DATASET = "dataset"
INDEXING = "dataset indexing"          # listing and checking files (glob, os.walk, os.path, pathlib)
MODEL_LOAD = "model load"
DISTRIBUTED = "distributed init"
COMPILATION = "compilation"
FIRST_STEP = "first batches and step"
YOUR_CODE = "your code"
LIBRARIES = "other library code"
BEFORE_TORCH = "start and imports before torch"   # not sampled: launch to torch's import
