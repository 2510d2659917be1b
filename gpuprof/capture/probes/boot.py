"""The one entry point of gpuprof inside a process of the job: the bootstrap starts it here, a
notebook kernel arms it here. It opens the process's event file (capture/probes/runtime.py) and installs
the probes (capture/probes/install.py); no probe imports this module."""

from . import runtime


def start(config: dict) -> None:
    """Called once by the bootstrap in every freshly started interpreter of the job."""
    runtime.open_process(config)
    if config.get("record_files"):
        from . import files_read

        files_read.install()
    if config.get("probes", True):
        from . import install

        install.arm(config)


def arm_in_kernel() -> None:
    """`%load_ext gpuprof` in a notebook kernel (gpuprof.commands.notebook): install the probes now (at once
    for torch and h5py already imported), so a DataLoader built in any later cell is known with its
    line; they write only inside a profiled cell."""
    if runtime.enter_kernel():
        from . import install

        install.arm(runtime.settings())


def begin_cell(config: dict) -> None:
    """A profiled notebook cell begins: the probes armed, the cell's own event file open."""
    arm_in_kernel()
    runtime.open_cell(config)


def end_cell() -> None:
    """The profiled cell is over (its event file closed)."""
    runtime.close_cell()
