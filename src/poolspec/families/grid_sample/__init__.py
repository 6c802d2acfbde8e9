"""The grid_sample family: its cards (card.py) and public functions (ops.py)."""
