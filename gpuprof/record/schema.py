"""Names and versions shared by every producer and reader of a run."""

RUN_FORMAT = "gpuprof.run/1"
REPORT_FORMAT = "gpuprof.report/1"
REPORT_FORMAT_PREFIX = "gpuprof.report/"
SUPPORTED_REPORT_VERSIONS = (1,)

#: The one environment variable that carries the bootstrap's settings into every process of the job.
BOOTSTRAP_ENV = "GPUPROF_BOOTSTRAP"

RUN_FILE = "run.json"
SYSTEM_FILE = "system.json"
GPU_FILE = "gpu.json"
#: `gpuprof attach` only: the Python stacks sampled from outside the job (gpuprof.commands.attach.session).
STACKS_FILE = "stacks.json"
STACKS_FORMAT = "gpuprof.stacks/1"
REPORT_FILE = "report.json"
EVENTS_DIR = "events"
