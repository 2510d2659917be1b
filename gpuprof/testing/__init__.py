"""Test machinery that ships with gpuprof: the simulated GPU (`simgpu`) that CI's GPU scenarios and
`gpuprof doctor --simulated` run on. Nothing here is imported by a profiled run."""
