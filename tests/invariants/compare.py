"""Comparing two strata answers for the metamorphic relations: equal "within rounding", with ranks renamed.

`differences(a, b, ignore=...)` walks two JSON values side by side and lists where they differ, as
"path: a != b" strings (at most `limit`). Numbers are equal within one unit of their field's last printed
place: a field is the nearest key above the number that is a name (not a rank or step number, not a list
index), and its precision the most decimals any of its values shows in either document
(jsonnum.within_rounding). Strings are compared with their digits masked when `mask_digits` (free text names
ranks and figures that the numeric fields already carry); paths matching an `ignore` pattern are skipped.

`map_ranks(doc, perm)` renames every rank in a diagnosis or summary: the values of `rank` keys, the items of
`ranks` lists, and the keys of the per-rank maps (clock_offsets_us, by_rank, wait_ms_by_rank, last_arrivals;
peers, the cross-layer evidence's peers by rank; late_ms_by_step is per step, not per rank, and is left
alone); for op tables also the data-parallel ranks (`dp_rank` values, `dp_ranks*` lists, `by_dp_rank` keys).
Lists of ranks are compared as sets (sorted). It is the one place that knows which fields
hold a rank, so every relation renames the same fields.

Invariants: differences(x, x) == [] for any JSON value x; map_ranks with the identity changes nothing;
ignore patterns are fnmatch patterns on "/"-joined paths with list indices as numbers.
"""
import copy
import fnmatch
import re

from jsonnum import decimals_of, within_rounding

RANK_VALUE_KEYS = {"rank"}
RANK_LIST_KEYS = {"ranks", "waiting_ranks"}
RANK_MAP_KEYS = {"clock_offsets_us", "by_rank", "wait_ms_by_rank", "last_arrivals", "peers"}
DP_VALUE_KEYS = {"dp_rank"}
DP_LIST_PREFIX = "dp_ranks"  # dp_ranks_slowest_in_some_step, ...
DP_MAP_KEYS = {"by_dp_rank"}
_DIGITS = re.compile(r"\d+(\.\d+)?")


def map_ranks(doc, perm, dp_perm=None):
    """A copy of `doc` with every rank r written as perm[r] and every data-parallel rank d (op tables) as
    dp_perm[d] (ranks missing from the maps stay as they are)."""
    dp_perm = dp_perm or {}

    def rank(r, p=perm):
        return p.get(r, r) if isinstance(r, int) and not isinstance(r, bool) else r

    def keyed(value, p):
        return {str(p.get(int(k), int(k))) if k.lstrip("-").isdigit() else k: walk(v) for k, v in value.items()}

    def walk(node):
        if isinstance(node, list):
            return [walk(x) for x in node]
        if not isinstance(node, dict):
            return node
        out = {}
        for key, value in node.items():
            if key in RANK_VALUE_KEYS:
                out[key] = rank(value)
            elif key in DP_VALUE_KEYS:
                out[key] = rank(value, dp_perm)
            elif key.startswith(DP_LIST_PREFIX) and isinstance(value, list):
                out[key] = sorted(rank(x, dp_perm) for x in value)
            elif key in DP_MAP_KEYS and isinstance(value, dict):
                out[key] = keyed(value, dp_perm)
            elif key in RANK_LIST_KEYS and isinstance(value, list):
                out[key] = sorted(rank(x) for x in value) if all(isinstance(x, int) for x in value) else walk(value)
            elif key in RANK_MAP_KEYS and isinstance(value, dict):
                out[key] = keyed(value, perm)
            else:
                out[key] = walk(value)
        return out

    return walk(copy.deepcopy(doc))


def _ignored(path, ignore):
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in ignore)


def field_precision(*docs):
    """{field: most decimals printed} over every number of the given documents."""
    prec = {}

    def walk(node, field):
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, field if k.lstrip("-").isdigit() else k)
        elif isinstance(node, list):
            for v in node:
                walk(v, field)
        else:
            d = decimals_of(node)
            if d is not None and not isinstance(node, bool):
                prec[field] = max(prec.get(field, d), d)

    for doc in docs:
        walk(doc, "")
    return prec


def differences(a, b, ignore=(), mask_digits=True, limit=8, path="", slack=None):
    """Where a and b differ: a list of "path: a != b" strings, at most `limit`. `slack(field, x, y)`, when
    given, is a further tolerance for two numbers of `field` (a relation whose transformation moves figures
    by a known bound, e.g. the clock alignment's residual)."""
    out = []
    _diff(a, b, (ignore, mask_digits, field_precision(a, b), limit, slack), path, "", out)
    return out


def _diff(a, b, how, path, field, out):
    ignore, mask, prec, limit, slack = how
    if len(out) >= limit or _ignored(path, ignore):
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            sub = f"{path}/{key}"
            if _ignored(sub, ignore):
                continue
            if key not in a or key not in b:
                out.append(f"{sub}: only in {'the first' if key in a else 'the second'}")
            else:
                _diff(a[key], b[key], how, sub, field if key.lstrip("-").isdigit() else key, out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items != {len(b)} items")
            return
        for i, (x, y) in enumerate(zip(a, b)):
            _diff(x, y, how, f"{path}/{i}", field, out)
    elif _numbers(a, b):
        ulp = (10.0 ** -prec[field] if field in prec else 0.0) + (slack(field, a, b) if slack else 0.0)
        if not within_rounding(a, b, ulp):
            out.append(f"{path}: {a} != {b}")
    elif isinstance(a, str) and isinstance(b, str) and mask:
        if _DIGITS.sub("#", a) != _DIGITS.sub("#", b):
            out.append(f"{path}: {_around_change(a, b)}")
    elif a != b or type(a) is not type(b):
        out.append(f"{path}: {str(a)[:80]} != {str(b)[:80]}")


def _around_change(a, b, width=70):
    """'...x...' != '...y...': the two strings from a little before where they first differ."""
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    start = max(0, i - 20)
    return f"{a[start:start + width]!r} != {b[start:start + width]!r}"


def _numbers(a, b):
    return all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
