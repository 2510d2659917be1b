"""Capture: everything that runs while the user's job runs — the supervisor that launches or attaches
(launch), the probes injected into the job (probes) and the samplers beside it (samplers). Its one
product is the run record (gpuprof.record); nothing here judges what it saw."""
