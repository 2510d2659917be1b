"""What a gate check can come to, shared by the decision, its busy-machine judgement and its output."""

PASS, FAIL, MISSING, SKIPPED = "pass", "fail", "missing", "skipped"
#: A check measured on a machine other processes kept busy that the load could have moved towards its
#: result: neither passed nor failed on numbers the job did not cause (gpuprof.gate.busy_machine).
DISTURBED = "disturbed"
