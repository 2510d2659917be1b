"""A job that says what signals it gets. Modes:
forward   handlers for USR1, USR2, ALRM, WINCH, CONT print the signal; SIGTERM ends it (exit 0)
ignored   prints which of HUP, INT, QUIT, TERM it starts with ignored, then works 1.5 s
twice     a checkpoint handler that treats a second SIGTERM as "abort" (exit 9); one SIGTERM: exit 5
late      a checkpoint handler that ignores every later SIGTERM, then exits 5"""
import signal
import sys
import time

mode = sys.argv[1]
if mode == "forward":
    def say(signum, frame):
        print(f"got {signal.Signals(signum).name}", flush=True)

    for sig in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGWINCH, signal.SIGCONT):
        signal.signal(sig, say)

    def leave(signum, frame):
        print("bye", flush=True)
        sys.exit(0)

    signal.signal(signal.SIGTERM, leave)
elif mode == "ignored":
    names = [s.name for s in (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGTERM)
             if signal.getsignal(s) == signal.SIG_IGN]
    print("ignored:", " ".join(names) or "none", flush=True)
elif mode in ("twice", "late"):
    state = {"saving": False}

    def checkpoint(signum, frame):
        if state["saving"]:
            print("second SIGTERM: abort", flush=True)
            sys.exit(9)
        state["saving"] = True
        if mode == "late":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("saving checkpoint", flush=True)
        time.sleep(0.5)
        print("checkpoint saved", flush=True)
        sys.exit(5)

    signal.signal(signal.SIGTERM, checkpoint)
print("ready", flush=True)
deadline = time.monotonic() + (1.5 if mode == "ignored" else 60)
while time.monotonic() < deadline:
    time.sleep(0.05)
print("finished", flush=True)
