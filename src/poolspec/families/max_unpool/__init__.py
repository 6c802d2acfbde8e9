"""The max_unpool family: its cards (card.py) and public functions (ops.py)."""
