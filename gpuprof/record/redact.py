"""Hide secrets in anything gpuprof saves that came from the user (command lines, file names).

Masked, in every argument and in any text inside one:
- URL credentials: `scheme://user:pass@host` and `scheme://token@host` keep only the scheme and host;
- the value after a secret-looking name, however it is attached: `--api-key S`, `--api-key=S`,
  `--passwd:S`, `"--token S"` in one argument, `HF_TOKEN=S`, `{"api_key": "S"}`, `password: S`,
  `Authorization: Bearer S`; short `-p S` / `-pS` (MySQL's password option) too;
- values that are keys by their own shape (`sk-...`, `ghp_...`, `hf_...`, `AKIA...`, `xoxb-...`).

Redaction errs towards masking: a masked port number costs nothing, a saved token costs a lot."""

import re

MASK = "***"
_SECRET_WORDS = {
    "token", "key", "apikey", "password", "passwd", "pwd", "pass", "secret", "credential",
    "credentials", "auth", "authorization", "passphrase", "cookie", "session", "signature",
    "privatekey", "accesskey", "secretkey",
}
_NOT_SECRET_PARTS = {"keyframes", "keys", "monkey", "keyword", "keywords", "passes", "passthrough"}
_SHORT_SECRET_OPTIONS = {"-p"}
_AUTH_SCHEMES = ("bearer", "basic", "token")

_URL_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#@\s\"']*)@")
_KEY_SHAPES = re.compile(
    r"\b(?:sk-(?:proj-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|hf_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{16,}"
    r"|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{5,})")
# NAME, an optional closing quote, a separator (= or : with spaces, or spaces alone), an optional
# quote, then the value: up to a quote, a comma, a closing brace or the end of the text.
_NAMED_VALUE = re.compile(
    r"(?P<name>-{0,2}[A-Za-z_][A-Za-z0-9_.-]*)(?P<q1>[\"']?)(?P<sep>\s*[:=]\s*|\s+)(?P<q2>[\"']?)"
    r"(?P<value>[^\"',}\s]+(?:\s+[^\"',}\s]+)?)")
_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_.-]*)([=:])(.*)$", re.S)


def is_secret_name(name: str) -> bool:
    """True for names such as --api-key, HF_TOKEN, db.password, apiKey (split on - _ . and case)."""
    stripped = name.lstrip("-")
    if not stripped:
        return False
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", stripped)       # apiKey -> api Key
    parts = [p for p in re.split(r"[-_.\s]+", spaced.lower()) if p]
    if not parts:
        return False
    joined = "".join(parts)
    if joined in _SECRET_WORDS:
        return True
    return any(p not in _NOT_SECRET_PARTS and (p in _SECRET_WORDS or p.endswith("token") or p.endswith("secret")
                                               or p.endswith("password"))
               for p in parts)


def redact_text(text: str) -> str:
    """Mask URL credentials, secret-looking name/value pairs and key-shaped values in free text."""
    text = _URL_USERINFO.sub(lambda m: f"{m.group('scheme')}{MASK}@", text)
    text = _KEY_SHAPES.sub(MASK, text)

    def named(match):
        name, sep, value = match.group("name"), match.group("sep"), match.group("value")
        if not is_secret_name(name) or (not sep.strip() and not name.startswith("-")):
            return match.group(0)      # `word value` counts only for an option inside one argument
        words = value.split()
        if words[0].lower() in _AUTH_SCHEMES and len(words) > 1:
            masked = f"{words[0]} {MASK}"          # Authorization: Bearer S
        else:
            masked = MASK + value[len(words[0]):]
        return f"{name}{match.group('q1')}{sep}{match.group('q2')}{masked}"

    return _NAMED_VALUE.sub(named, text)


def redact_argv(argv):
    """The command line with every secret masked; everything else as it is."""
    out = []
    mask_next = False
    for arg in argv:
        arg = str(arg)
        if mask_next:
            out.append(MASK)
            mask_next = False
            continue
        if arg.startswith("-") and len(arg) > 1 and not any(c.isspace() for c in arg):
            name, sep, value = _split_option(arg)
            if is_secret_name(name) or name in _SHORT_SECRET_OPTIONS:
                if sep or value:
                    out.append(f"{name}{sep}{MASK}")
                else:
                    out.append(arg)
                    mask_next = True
                continue
        match = _ASSIGNMENT.match(arg)
        if match and is_secret_name(match.group(1)):
            out.append(f"{match.group(1)}{match.group(2)}{MASK}")
            continue
        out.append(redact_text(arg))
    return out


def _split_option(arg: str):
    """(name, separator, value) of `--name=value`, `--name:value`, `-pVALUE` or `--name`."""
    for sep in ("=", ":"):
        if sep in arg:
            name, _, value = arg.partition(sep)
            return name, sep, value
    if not arg.startswith("--") and len(arg) > 2 and arg[:2] in _SHORT_SECRET_OPTIONS:
        return arg[:2], "", arg[2:]
    return arg, "", ""
