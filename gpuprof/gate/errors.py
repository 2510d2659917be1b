"""Bad gate input: an unreadable or foreign report, a bad config, incomparable runs (exit 2)."""


class GateInputError(Exception):
    pass
