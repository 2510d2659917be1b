"""Run as `-m pkg.train`: relative imports and __spec__ must work as under plain python."""
from . import helper

print("module", __name__, __spec__.name, helper.VALUE)
