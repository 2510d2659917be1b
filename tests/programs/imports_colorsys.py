"""Imports one standard module gpuprof does not use, for the import-time list."""
import colorsys

print(colorsys.rgb_to_hsv(1.0, 0.0, 0.0))
