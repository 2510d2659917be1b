"""Hide the values of secret-looking options and assignments before anything is saved."""

import re

MASK = "***"
_SECRET_WORDS = {
    "token", "key", "apikey", "password", "passwd", "pwd", "secret", "credential",
    "credentials", "auth", "passphrase",
}
_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_.-]*)=(.*)$", re.S)


def is_secret_name(name: str) -> bool:
    """True for names such as --api-key, HF_TOKEN, db.password (split on - _ . and case)."""
    parts = [p for p in re.split(r"[-_.\s]+", name.lstrip("-").lower()) if p]
    return any(p in _SECRET_WORDS or p.endswith("token") or p.endswith("secret") for p in parts)


def redact_argv(argv):
    """Mask `--api-key S`, `--api-key=S` and `NAME_TOKEN=S`; keep everything else as it is."""
    out = []
    mask_next = False
    for arg in argv:
        arg = str(arg)
        if mask_next:
            out.append(MASK)
            mask_next = False
            continue
        if arg.startswith("-") and len(arg) > 1:
            name, eq, _ = arg.partition("=")
            if is_secret_name(name):
                if eq:
                    out.append(f"{name}={MASK}")
                else:
                    out.append(arg)
                    mask_next = True
                continue
        match = _ASSIGNMENT.match(arg)
        if match and is_secret_name(match.group(1)):
            out.append(f"{match.group(1)}={MASK}")
            continue
        out.append(arg)
    return out
