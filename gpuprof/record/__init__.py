"""The run record: the one place where the supervisor's samples and the probes' events meet.

Ground floor of the package: it imports nothing else from gpuprof and nothing heavy, because the
event writer runs inside the user's processes.
"""
