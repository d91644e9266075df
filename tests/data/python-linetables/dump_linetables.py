#!/usr/bin/env python3
"""Dumps the location tables of real code objects, as the running interpreter compiled them, with what the
interpreter itself says of them: the test data of strata's line-table decoder (src/recorder/python_line_table.h,
checked by tests/unit/python_line_table_test.cc).

usage: python3.11 dump_linetables.py [OUT.json]    (default: stdout)

The code objects: the functions below (shapes that take each of the table's entry forms: short, one-line with
line deltas 0-2, no-columns, long with big and negative line deltas and wide columns, no-location entries),
the module code of a standard-library file (json/decoder.py), and every code object nested in them. For each:
{"name" (co_qualname), "first_line" (co_firstlineno), "code_units" (len(co_code) // 2), "linetable" (hex of
co_linetable), "lines" (co_lines(): [start byte, end byte, line or null]), "positions" (co_positions(): one
[line, end line, column, end column] per code unit, null where None)}.
"""
import json
import sys
import types


def plain(a, b):
    c = a + b
    return c * 2


def multi_line_call(values):
    total = sum(
        v * 2
        for v in values
        if v > 0
    )
    return max(
        total,
        0,
    )


def loops_back(n):
    s = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        s += i
    while s > 100:
        s //= 2
    return s


def far_apart(x):
    y = x + 1
















































    z = y * 2  # 50 lines below: a line delta that needs two varint chunks
    return z


def wide(items):
    return [item for item in items if item is not None and item != 0 and item != 1 and item != 2 and item != 3 and item != 4 and item != 5 and item != 6 and item != 7 and item != 8 and item != 9 and item != 10]  # noqa: E501


def handlers(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        raise RuntimeError(str(e)) from e
    finally:
        path = None


def decorator(f):
    return f


@decorator
def decorated(a):
    return lambda b: (a,
                      b)


class Holder:
    def method(self, lock):
        lock.acquire()  # a call whose line the lab's lock fault blocks on
        return self

    async def coroutine(self):
        return await self.method(None)

    def generator(self):
        yield 1
        yield from range(3)


def spin():
    x = 1.0
    while True: x = x * 1.000001 + 1e-9  # noqa: E701


def code_objects():
    """The functions above, the module code of json/decoder.py, and all code nested in them."""
    roots = [f.__code__ for f in (plain, multi_line_call, loops_back, far_apart, wide, handlers, decorator,
                                  decorated, spin, Holder.method, Holder.coroutine, Holder.generator)]
    import json.decoder
    with open(json.decoder.__file__) as f:
        roots.append(compile(f.read(), json.decoder.__file__, "exec"))
    seen, out = set(), []

    def walk(code):
        if id(code) in seen:
            return
        seen.add(id(code))
        out.append(code)
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                walk(c)
    for r in roots:
        walk(r)
    return out


def describe(code):
    return {"name": code.co_qualname,
            "file": code.co_filename.rsplit("/", 1)[-1],
            "first_line": code.co_firstlineno,
            "code_units": len(code.co_code) // 2,
            "linetable": code.co_linetable.hex(),
            "lines": [list(r) for r in code.co_lines()],
            "positions": [list(p) for p in code.co_positions()]}


def main():
    doc = {"python": sys.version.split()[0], "code": [describe(c) for c in code_objects()]}
    text = json.dumps(doc, separators=(",", ":")) + "\n"
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
