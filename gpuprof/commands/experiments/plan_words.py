"""How an experiment describes its rounds before it runs: rounds are said to be added only where
they can be (more rounds allowed than the minimum), and the budget only where it can stop them."""


def rounds_words(rounds: int, max_rounds: int, budget_s: float = None) -> str:
    """"3 to 8 rounds: after 3, rounds are added until every speed-up is clear, while another fits in
    900 s" or, where the most is the least, "exactly 2 rounds"."""
    most = max(max_rounds or rounds, rounds)
    if most <= rounds:
        return f"exactly {rounds} round{'s' if rounds != 1 else ''}"
    budget = f", while another fits in {budget_s:.0f} s" if budget_s else ""
    return f"{rounds} to {most} rounds: after {rounds}, rounds are added until every speed-up is clear{budget}"
