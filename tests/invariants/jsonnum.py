"""JSON reading for the invariant suite: numbers that remember how they were printed.

strata rounds the figures it prints (64.44, 0.6566, 183.538) and prints the shortest form (a value rounded to
1.5000 is printed 1.5). Two answers that agree "within rounding" may differ in the last printed digit when the
arithmetic behind them ran in another order (ranks permuted). A `Num` is a float that keeps how many decimals
it was printed with; compare.py takes a field's precision as the most decimals any value of that field shows
(one value printed short does not make the field coarse) and allows one unit of it.

Invariants: `load` returns the same structure as json.loads, with every non-integer number a Num (a float
subclass, so arithmetic works unchanged; copying returns the same immutable object); NaN and Infinity
literals (which strict JSON forbids) are read as NonFinite values so that a rule can flag them instead of the
parser failing; `within_rounding(a, b, ulp)` is symmetric and allows `ulp` (one unit of the field's last
place) plus 1e-9 relative; integers compare exactly.
"""
import json
import math


class Num(float):
    """A float read from JSON text, with `decimals`, the number of decimal places it was printed with."""

    __slots__ = ("decimals",)

    def __new__(cls, text):
        value = super().__new__(cls, text)
        low = str(text).lower()
        mantissa, _, exponent = low.partition("e")
        value.decimals = (len(mantissa.split(".")[1]) if "." in mantissa else 0) - int(exponent or 0)
        return value

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (Num, (repr(float(self)),))


class NonFinite(float):
    """A NaN or Infinity literal found in the JSON text (strict JSON has none; strata must not print them)."""

    __slots__ = ("literal",)

    def __new__(cls, literal):
        value = super().__new__(cls, {"NaN": "nan", "Infinity": "inf", "-Infinity": "-inf"}[literal])
        value.literal = literal
        return value

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def load(text):
    """Parses JSON text; floats become Num, NaN/Infinity literals NonFinite."""
    return json.loads(text, parse_float=Num, parse_constant=NonFinite)


def decimals_of(x):
    """Decimal places x was printed with (0 for integers, None for values not read from text)."""
    if isinstance(x, Num):
        return x.decimals
    if isinstance(x, int) and not isinstance(x, bool):
        return 0
    return None


def within_rounding(a, b, ulp=0.0):
    """True when a and b differ by at most `ulp` (one unit of their field's last printed place) + 1e-9 relative.
    Two integers must be equal."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if all(isinstance(x, int) and not isinstance(x, bool) for x in (a, b)):
        return a == b
    return abs(a - b) <= ulp * 1.0001 + 1e-9 * max(abs(a), abs(b))
