"""The verdict: the evidence every rule reads (gathered once from the sections), the declared
bottlenecks with their rules, and the classification that picks the largest removable one."""
