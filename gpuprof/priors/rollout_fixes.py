"""Priors of the reinforcement-learning fixes: the share of a rollout's part each change saves,
the garbage an environment's steps leave, the cheapest env step worth a process of its own, and what
the messages to and from an env's process cost."""

from gpuprof.priors.prior import Prior

TITLE = "Reinforcement learning"

PPO = "tests/programs/ppo_rollout.py"

POLICY_CALL_SAVING = Prior(
    id="rollout-inference.saving", kind="assumed saving", low=0.1, high=0.5, unit="of the policy-inference share",
    source="reasoned, 2026-11-25, from what the change drops (autograd's bookkeeping, the distribution's "
           "argument checks, a Python loop over sub-envs); checked on the 2-core VM under load 6-40: "
           "validate_args=False alone measured 1.16x on the whole PPO program against the fix's 1.04-1.61x "
           "(docs/benchmarks.md); then call by call with bench/policy_calls.py (2026-12-02, quiet, 5 rounds, one "
           "thread; torch.inference_mode() and validate_args=False against torch.no_grad() and checked "
           "arguments): the PPO agent on CartPole's and Acrobot's shapes saved 27-29% of a call, CleanRL's "
           "continuous-action agent (a Normal over 6 actions) 18-20%, CleanRL's Atari agent (convolutions over "
           "84 x 84 frames, 2 ms a call) 3-16%. The low end was 0.2 from the MLP agents alone; it is 0.1 where "
           "a policy's own compute outweighs its fixed costs",
    programs=(PPO, "bench/policy_calls.py (4 policies)"),
    used_for="rollout-inference: its range, from the measured policy-inference share",
    without_it="rollout-inference has no estimate")

CONVERSION_SAVING = Prior(
    id="rollout-buffers.saving", kind="assumed saving", low=0.3, high=0.7, unit="of the host conversions' share",
    source="reasoned, 2026-11-25: a buffer filled with torch.from_numpy copies once where a new tensor copies "
           "twice, and scalars are read once per rollout; not measured",
    used_for="rollout-buffers: its range, from the sampled share of conversions between numpy and tensors",
    without_it="rollout-buffers has no estimate")

PER_CALL_SAVING = Prior(
    id="more-envs-per-call.saving", kind="assumed saving", low=0.25, high=0.5, unit="of the per-step parts' share",
    source="reasoned, 2026-11-25: twice the sub-envs per call halve the calls, so their fixed costs fall by up "
           "to half (a quarter where the batch's own work grows with it); not measured",
    used_for="more-envs-per-call: its range, from the measured per-step parts (inference, conversions, the rest)",
    without_it="more-envs-per-call has no estimate where the rollout's parts were measured")

ENV_GARBAGE = Prior(
    id="vectorised-env.garbage-share", kind="bound", value=0.10, unit="of the other code's time",
    source="calibrated on the 2-core x86-64 VM with bench/rollout_truth.py (a PPO rollout in a SyncVectorEnv "
           "of 4, the env's recorded results replayed): CartPole-v1, 2026-11-25, replaying measured 1.24x where "
           "its own 13% of the time gives 1.15x (1.16x with Python's cyclic collector off), 7% of the other code; "
           "Acrobot-v1, 2026-12-02, quiet, 5 rounds: 1.48x where its own 25% gives 1.33x, 10% of the other code. "
           "The bound is the larger of the two (it was 8%, from CartPole alone, and put Acrobot's 1.48x just above "
           "the fix's 1.45x)",
    programs=(PPO, "bench/rollout_truth.py --env Acrobot-v1"),
    used_for="the high end of the vectorised-env fix: the collections of the garbage an env step leaves fall on the other "
             "code",
    without_it="the high end is the env's own time made free, below what replaying measured")

ASYNC_STEP_FLOOR = Prior(
    id="async-vector-env.cheapest-step", kind="threshold", value=100e-6, unit="s",
    source="reasoned, 2026-11-25: an AsyncVectorEnv sends actions and observations to and from every process "
           "each step (gymnasium's 'Vectorize' reference), tens of microseconds; not measured",
    used_for="async-vector-env is offered only where one sub-env's step takes at least this long",
    without_it="envs whose steps cost less than the messages are told to step in processes, an estimate the "
               "messages undo")

SUBPROC_MESSAGES = Prior(
    id="subproc-vec-env.message-cost", kind="measured cost", value=110e-6, low=103e-6, high=130e-6, unit="s",
    source="measured on the 2-core x86-64 VM with bench/env_messages.py (SB3's SubprocVecEnv against its "
           "DummyVecEnv with 1, 2 and 4 envs, 3000 vector steps): CartPole-v1, 2026-11-26, the median of 3 rounds "
           "in two sessions, 103-117 µs more per sub-env step; 2026-12-02, quiet, 5 rounds in one sitting, "
           "CartPole-v1 125 µs and Acrobot-v1 (an in-process step about 3x CartPole's, 6 observations, 3 "
           "actions) 130 µs: the two envs agree within 4%, the sittings within 1.2x",
    programs=("bench/env_messages.py (CartPole-v1)", "bench/env_messages.py --env Acrobot-v1"),
    used_for="subproc-vec-env: the messages each vector step then sends to and from every process, added to the "
             "env's time the parallel processes leave",
    without_it="the estimate counts only the env's own time divided over the cores, above what a cheap env step "
               "gains (CartPole's 11 µs a step costs 110 µs in messages)")

ASYNC_MESSAGES = Prior(
    id="async-vector-env.message-cost", kind="measured cost", value=65e-6, low=57e-6, high=96e-6, unit="s",
    source="measured on the 2-core x86-64 VM with bench/env_messages.py (gymnasium's AsyncVectorEnv against its "
           "SyncVectorEnv with 1, 2 and 4 envs, 3000 vector steps): CartPole-v1, 2026-11-26, the median of 3 rounds "
           "in two sessions, 57-69 µs more per sub-env step; 2026-12-02, quiet, 5 rounds in one sitting, "
           "CartPole-v1 96 µs and Acrobot-v1 95 µs: the two envs agree within 1%, the sittings within 1.5x (the "
           "machine ran slower that day: CartPole's in-process vector step of 4 took 44 µs)",
    programs=("bench/env_messages.py (CartPole-v1)", "bench/env_messages.py --env Acrobot-v1"),
    used_for="async-vector-env: the messages each vector step then sends to and from every process, added to the "
             "env's time the parallel processes leave",
    without_it="the estimate counts only the env's own time divided over the cores, above what a cheap env step "
               "gains")
