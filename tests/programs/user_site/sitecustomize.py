"""A user's own sitecustomize: gpuprof must still run it."""
import os

os.environ["USER_SITECUSTOMIZE_RAN"] = "yes"
