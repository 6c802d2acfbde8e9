"""The adaptive_max_pool family: its cards (card.py) and public functions (ops.py)."""
