"""Keeps a Ray cluster of N raylets on this machine (Ray's own multi-node test cluster, one CPU per
node) until stdin closes; prints its address first. For tests of jobs that join an existing cluster."""
import sys

from ray.cluster_utils import Cluster

nodes = int(sys.argv[1]) if len(sys.argv) > 1 else 2
cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
for _ in range(nodes - 1):
    cluster.add_node(num_cpus=1)
cluster.wait_for_nodes()
print(cluster.address, flush=True)
sys.stdin.read()
cluster.shutdown()
