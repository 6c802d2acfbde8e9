"""The affine_grid family: its cards (card.py) and public functions (ops.py)."""
