"""Whether gpuprof reached the Ray workers of a job that joined an existing cluster, and what to say
when it did not: the report's reason for no verdict names the cluster, why its workers were not
reached, and how to run so that they are — never a bare "no training step". Pure: reads the
driver's `ray_cluster` note (gpuprof.capture.probes.ray_cluster) and the hosts whose processes reported."""

HOW = ("gpuprof reaches a joined cluster's workers through the job's Ray runtime environment (env_vars): "
       "use Ray 2.x, let the script's ray.init or Ray Train start the job (not `ray job submit`), and give "
       "`gpuprof run --out` a folder every node of the cluster can write (a shared file system)")


def joined(events: list):
    """The driver's note of a cluster it joined (one it did not start itself), or None."""
    return next((e for e in events or [] if e.get("address")), None)


def why_no_step(events: list):
    """The reason a run that joined a cluster has no training step to judge, or None when it joined
    none (the usual reasons then apply)."""
    cluster = joined(events)
    if cluster is None:
        return None
    nodes = [n for n in cluster.get("nodes") or [] if n.get("alive")]
    where = f"the Ray cluster at {cluster['address']}" + (f" ({len(nodes)} node{'s' if len(nodes) != 1 else ''})"
                                                          if nodes else "")
    if not cluster.get("reached"):
        return (f"the training ran in Ray workers of {where}, which gpuprof could not reach: "
                f"{cluster.get('why') or 'the job runtime environment could not be set'}; {HOW}")
    return (f"the program joined {where} and gave its workers gpuprof's bootstrap, but no worker reported a "
            f"training step: workers on nodes that cannot write the run folder stay unseen; {HOW}")

