from gpuprof.record.redact import MASK, redact_argv


def test_secret_option_values_are_masked_in_both_spellings():
    argv = ["train.py", "--api-key=S1", "--token", "S2", "--password", "S3", "--lr", "3e-4"]
    out = redact_argv(argv)
    assert out == ["train.py", f"--api-key={MASK}", "--token", MASK, "--password", MASK, "--lr", "3e-4"]
    assert not {"S1", "S2", "S3"} & set(" ".join(out).split())


def test_secret_assignments_are_masked_and_plain_ones_kept():
    out = redact_argv(["env", "HF_TOKEN=S2", "WANDB_API_KEY=abc", "OMP_NUM_THREADS=4", "train.py"])
    assert out == ["env", f"HF_TOKEN={MASK}", f"WANDB_API_KEY={MASK}", "OMP_NUM_THREADS=4", "train.py"]


def test_words_that_only_contain_key_are_not_secrets():
    argv = ["train.py", "--keyframes", "5", "--monkey", "x", "--num-workers", "4"]
    assert redact_argv(argv) == argv


def test_secret_option_at_the_end_without_value():
    assert redact_argv(["x.py", "--secret"]) == ["x.py", "--secret"]
