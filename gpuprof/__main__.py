"""`python -m gpuprof` is the same as the `gpuprof` command."""
from gpuprof.commands.cli import main

if __name__ == "__main__":
    main()
