"""The adaptive_avg_pool family: its cards (card.py) and public functions (ops.py)."""
