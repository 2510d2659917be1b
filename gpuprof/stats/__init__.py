"""Pure arithmetic every layer borrows: the report's decimals, byte units, the probes' streams and
their quantiles, and the noise of repeated measurements. Imports nothing of gpuprof."""
