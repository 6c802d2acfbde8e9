"""The interpolate family: its cards (card.py) and public functions (ops.py)."""
