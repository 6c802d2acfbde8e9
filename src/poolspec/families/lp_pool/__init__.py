"""The lp_pool family: its cards (card.py) and public functions (ops.py)."""
