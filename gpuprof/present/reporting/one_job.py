"""Whether several run folders are one job's nodes. Only the runs can say so: each ran the same
program, each was placed in a distributed world by its launcher (torchrun's or Slurm's RANK and
WORLD_SIZE, or torch.distributed's own rank), the worlds are of one size and no rank ran twice.
Anything else is separate runs, which `gpuprof report` refuses to merge into a job that never was:
their "slowest rank" would compare two programs."""

from gpuprof.judge.verdict.ranks import launcher_world
from gpuprof.record.reader import RecordError
from gpuprof.present.reporting.build import program_identity
from gpuprof.present.reporting.cut_short import is_cut_short


def check_one_job(run_dirs: list, records: list) -> None:
    """Raises RecordError (one line, naming the runs) unless the records are one job's nodes."""
    if len(run_dirs) < 2:
        return
    first = run_dirs[0]
    hint = f"report each on its own, as in `gpuprof report {first}`"
    # a node cut short has no header naming its program (gpuprof.present.reporting.cut_short): its world decides
    named = [(path, program_identity(record["meta"]).get("name")) for path, record in zip(run_dirs, records)
             if not is_cut_short(record.get("meta"))]
    for path, program in named[1:]:
        if program != named[0][1]:
            raise RecordError(f"{named[0][0]} and {path} are runs of different programs ({named[0][1]}, {program}), "
                              f"not one job's nodes: {hint}")
    worlds = [launcher_world(record.get("processes") or []) for record in records]
    for path, world in zip(run_dirs, worlds):
        if not world["world_sizes"]:
            raise RecordError(f"{path} is no node of a distributed job (no launcher gave its processes a RANK "
                              f"and WORLD_SIZE, nor did torch.distributed), so it is not one job with the other "
                              f"run folders: {hint}")
    sizes = sorted(set().union(*(world["world_sizes"] for world in worlds)))
    if len(sizes) > 1:
        raise RecordError(f"the run folders belong to jobs of different sizes ({', '.join(map(str, sizes))} ranks), "
                          f"not one job: {hint}")
    seen: dict = {}
    for path, world in zip(run_dirs, worlds):
        for rank in sorted(world["ranks"]):
            if rank in seen:
                raise RecordError(f"{seen[rank]} and {path} both ran rank {rank}: two jobs, not one job's nodes: "
                                  f"{hint}")
            seen[rank] = path
