"""The public ops, one module per family."""
