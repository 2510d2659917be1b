"""What runs in the slow steps: a step that runs past SLOW times the recent median step (and 20 ms
more) is slow, and when it ends its stack samples are added to the slow steps' tally; the samples of
every other step go to the ordinary steps' tally. Each sample counts every user function on the stack (not only
the innermost, which in an evaluation is the model's own forward, as in any step), so the analysis
can name the function that runs in slow steps and not in others: `estimate_loss` called every 250
steps, a checkpoint save, a logging call.

Runs in the sampler's thread; reads the step count and the last step's end that the steps probe
keeps, changes nothing."""

import time
from collections import deque

SLOW = 3.0
SLOW_MIN_S = 0.02
RECENT = 64           # per-step durations the median is taken over
KNOWN = 8             # ... needed before any sample is tallied
USER_FRAMES = 6       # user frames counted per sample, innermost first
MAX_FRAMES = 256      # distinct functions tallied per emit


class SlowSteps:
    def __init__(self, step_state: dict, classify, display, clock=time.monotonic):
        self.state = step_state           # the step probe's: "count", "last_end"
        self.classify = classify
        self.display = display
        self.clock = clock
        self.count = step_state.get("count")
        self.ended = step_state.get("last_end")
        self.recent = deque(maxlen=RECENT)
        self.slow, self.normal = {}, {}
        self.slow_weight = self.normal_weight = 0
        self.slow_steps = self.normal_steps = 0
        self.normal_presence = {}                    # function -> ordinary steps it was sampled in
        self.current, self.current_weight = {}, 0    # the samples of the step under way
        self.marked = False                          # ... which has run past the threshold

    def add(self, frame, weight: int) -> None:
        """One sample of the training thread's stack, `weight` microseconds. The samples of a step are
        held until it ends, then tallied as slow (it ran past the threshold) or ordinary: the start
        of a slow step, before it was known to be slow, never counts as ordinary."""
        count, ended = self.state.get("count"), self.state.get("last_end")
        if count != self.count:
            if self.count is not None and count > self.count and ended is not None and self.ended is not None:
                self.recent.append((ended - self.ended) / (count - self.count))
            self._step_ended()
            self.count, self.ended = count, ended
        if ended is None or len(self.recent) < KNOWN:
            return
        if not self.marked:
            median = sorted(self.recent)[len(self.recent) // 2]
            self.marked = self.clock() - ended > max(SLOW * median, median + SLOW_MIN_S)
        seen = set()
        while frame is not None and len(seen) < USER_FRAMES:
            code = frame.f_code
            if self.classify(code) == "user" and code not in seen:
                seen.add(code)
                key = f"{code.co_name} ({self.display(code.co_filename)}:{code.co_firstlineno})"
                self.current[key] = self.current.get(key, 0) + weight
            frame = frame.f_back
        self.current_weight += weight

    def _step_ended(self) -> None:
        tally = self.slow if self.marked else self.normal
        for key, weight in self.current.items():
            if key in tally or len(tally) < MAX_FRAMES:
                tally[key] = tally.get(key, 0) + weight
        if self.marked:
            self.slow_weight += self.current_weight
            self.slow_steps += 1
        elif self.current_weight:
            self.normal_weight += self.current_weight
            self.normal_steps += 1
            for key in self.current:
                if key in self.normal_presence or len(self.normal_presence) < MAX_FRAMES:
                    self.normal_presence[key] = self.normal_presence.get(key, 0) + 1
        self.current, self.current_weight, self.marked = {}, 0, False

    def take(self):
        """What to add to the sampler's event once a second (and reset), or None while no sample fell
        in a slow step."""
        if not self.slow_steps:
            return None
        out = {"steps": self.slow_steps, "weight": self.slow_weight, "frames": self.slow,
               "normal_weight": self.normal_weight, "normal_frames": self.normal,
               "normal_steps": self.normal_steps, "normal_presence": self.normal_presence}
        self.slow, self.normal, self.normal_presence = {}, {}, {}
        self.slow_weight = self.normal_weight = self.slow_steps = self.normal_steps = 0
        return out
