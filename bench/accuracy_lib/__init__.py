"""Helpers of bench/accuracy: the case table (cases.py) and the runner/scorer (suite.py)."""
