import json

import pytest

from gpuprof.record.redact import MASK, redact_argv, redact_text

SECRET = "S3cr3tValue9"


def test_secret_option_values_are_masked_in_both_spellings():
    argv = ["train.py", "--api-key=S1", "--token", "S2", "--password", "S3", "--lr", "3e-4"]
    out = redact_argv(argv)
    assert out == ["train.py", f"--api-key={MASK}", "--token", MASK, "--password", MASK, "--lr", "3e-4"]


def test_secret_assignments_are_masked_and_plain_ones_kept():
    out = redact_argv(["env", "HF_TOKEN=S2", "WANDB_API_KEY=abc", "OMP_NUM_THREADS=4", "train.py"])
    assert out == ["env", f"HF_TOKEN={MASK}", f"WANDB_API_KEY={MASK}", "OMP_NUM_THREADS=4", "train.py"]


def test_words_that_only_contain_key_are_not_secrets():
    argv = ["train.py", "--keyframes", "5", "--monkey", "x", "--num-workers", "4", "--lr=0.1", "data.csv"]
    assert redact_argv(argv) == argv


def test_secret_option_at_the_end_without_value():
    assert redact_argv(["x.py", "--secret"]) == ["x.py", "--secret"]


# Forms seen in real command lines: every one must lose the secret and keep the rest readable.
REAL_WORLD_FORMS = [
    ["--db", f"https://user:{SECRET}@host.example/x"],
    [f"mysql://root:{SECRET}@db:3306/train"],
    [f"--db-url=postgresql://u:{SECRET}@h/db?sslmode=require"],
    [f"redis://:{SECRET}@cache:6379/0"],
    [f"git+https://{SECRET}@github.com/org/repo.git"],
    ["-p", SECRET],
    [f"-p{SECRET}"],
    [f"--passwd:{SECRET}"],
    [f"--token {SECRET}"],
    [f"--token={SECRET}"],
    ["--api_key", SECRET],
    ["--apiKey", SECRET],
    ["--hf_token", SECRET],
    ["--github-token", SECRET],
    ["--aws-secret-access-key", SECRET],
    ["--client-secret", SECRET],
    ["--wandb-key", SECRET],
    ["--access-token", SECRET],
    ["--auth-token", SECRET],
    [f"AWS_SECRET_ACCESS_KEY={SECRET}"],
    [f"DB_PASSWORD={SECRET}"],
    [json.dumps({"api_key": SECRET, "lr": 0.1})],
    [json.dumps({"password": SECRET})],
    ["--config", "{'password': '" + SECRET + "'}"],
    ["--header", f"Authorization: Bearer {SECRET}"],
    [f"password: {SECRET}"],
    ["--key", f"sk-proj-{SECRET}abcdefghij"],
    ["--notes", f"use ghp_{SECRET}abcdefghijklmn"],
    ["--hub", f"hf_{SECRET}abcdefghijklmnop"],
    [f"--aws=AKIA{'A' * 16}"],
]


@pytest.mark.parametrize("args", REAL_WORLD_FORMS, ids=lambda a: " ".join(a)[:40])
def test_real_world_secret_forms_never_survive(args):
    out = " ".join(redact_argv(["train.py"] + args))
    assert SECRET not in out and "AKIA" + "A" * 16 not in out
    assert out.startswith("train.py") and MASK in out


def test_url_credentials_are_masked_and_the_host_kept():
    assert redact_text("see https://bob:pw@data.example/x") == f"see https://{MASK}@data.example/x"
    assert redact_text("https://data.example/x?y=1") == "https://data.example/x?y=1"
