#!/usr/bin/env python3
"""Fails when a function in src/ is longer than the limit (issue 14: "no function over ~120 lines").

Every function body is measured, wherever it is defined: free functions and out-of-class member
definitions, member functions and constructors defined inside a class or struct body (at any nesting), and
lambdas that initialise a variable or a member at namespace or class scope. A body's length counts from the
first line of its signature (template line included) to its closing brace; a lambda or local class inside a
function belongs to that function.

How: comments, string and character literals (raw strings too) and preprocessor lines are blanked, then
the braces are matched and each `{` at namespace or class scope is classified by the text before it since
the previous `;`, `{`, `}` or access specifier: namespace / extern "C" (entered), class / struct / union
(entered), a function or lambda body (measured), anything else (an enum, a braced initializer: skipped). A
file whose braces do not balance is reported as unreadable rather than passed.
usage: check_function_length.py SRC_DIR [LIMIT]
"""
import pathlib
import re
import sys

# Specifiers that may follow a parameter list before the body.
TRAILING = re.compile(r"(\s*(const|volatile|noexcept(\s*\([^()]*\))?|override|final|mutable|constexpr|&&|&|"
                      r"->\s*[\w:<>,*&\s]+|requires\b.*))*\s*$", re.S)
ATTRIBUTES = re.compile(r"\[\[.*?\]\]|\balignas\s*\([^()]*\)|__attribute__\s*\(\(.*?\)\)", re.S)
TEMPLATE_HEAD = re.compile(r"^\s*template\s*<")
CLASS_HEAD = re.compile(r"^(class|struct|union)\b")
NAMESPACE_HEAD = re.compile(r"^(inline\s+)?namespace\b|^extern\s*\"\s*\"$")  # literals are blanked
ACCESS = re.compile(r"\b(public|private|protected)\s*:(?!:)")


def blank(text):
    """The text with comments, literals and preprocessor lines replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":  # a preprocessor line, with its continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if c == "\n":
            line_start = True
            out.append(c)
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c == "R" and i + 1 < n and text[i + 1] == '"' and (i == 0 or not (text[i - 1].isalnum() or
                                                                             text[i - 1] == "_")):
            delim_end = text.find("(", i + 2)
            close = ")" + text[i + 2:delim_end] + '"'
            end = text.find(close, delim_end)
            end = n if end < 0 else end + len(close)
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:end]))
            i = end
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 1'000'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_template_heads(head):
    """head without leading `template <...>` clauses (nested angle brackets allowed)."""
    while TEMPLATE_HEAD.match(head):
        start = head.index("<")
        depth = 0
        for k in range(start, len(head)):
            depth += {"<": 1, ">": -1}.get(head[k], 0)
            if depth == 0:
                head = head[k + 1:]
                break
        else:
            return head
    return head.strip()


def collapse_parens(head):
    """head with every balanced (...) group replaced by "()", so that top-level structure is visible."""
    out, depth = [], 0
    for c in head:
        if c == "(":
            if depth == 0:
                out.append("(")
            depth += 1
        elif c == ")":
            depth = max(depth - 1, 0)
            if depth == 0:
                out.append(")")
        elif depth == 0:
            out.append(c)
    return "".join(out)


def classify(head):
    """What a `{` opens, from the statement text before it: namespace, class, function, init or other.

    "init" is a braced member initializer of a constructor's initializer list (`: a_{1}, b_{2} {`): the
    statement goes on after it."""
    h = strip_template_heads(ATTRIBUTES.sub(" ", head)).strip()
    flat = collapse_parens(h)
    if NAMESPACE_HEAD.match(h):
        return "namespace"
    if CLASS_HEAD.match(h) and "(" not in flat and "=" not in flat:
        return "class"
    if re.match(r"^enum\b", h):
        return "other"
    # A constructor's initializer list: `X(args) [specs] : a_(..), b_{..}` then the body.
    init = re.search(r"\)[^:;=]*?(?<!:):(?!:)", flat)
    if init and "(" in flat[:init.start() + 1]:
        rest = flat[init.end():].rstrip()
        return "function" if rest.endswith((")", "}")) else "init"
    if re.search(r"\)$", TRAILING.sub("", flat).rstrip()) and "(" in flat:
        return "function"
    if re.search(r"=\s*\[[^\]]*\]\s*$", TRAILING.sub("", flat)):  # a lambda with no parameter list
        return "function"
    return "other"


def function_name(head, classes):
    """A readable name for the body opened after head: Class::Name, or the variable a lambda initialises."""
    h = collapse_parens(strip_template_heads(ATTRIBUTES.sub(" ", head)))
    lam = re.search(r"([A-Za-z_][\w:]*)\s*(\{\s*\})?\s*=\s*\[", h)
    if lam:
        name = f"lambda {lam.group(1)}"
    else:
        m = re.search(r"((?:[A-Za-z_]\w*(?:<[^()]*?>)?::)*(?:operator\s*\S+?|~?[A-Za-z_]\w*))\s*\(\)", h)
        name = m.group(1) if m else " ".join(head.split())[:60]
    return "::".join(classes + [name]) if classes else name


def functions(text):
    """(first line, last line, name) of every function body at namespace or class scope in text."""
    code = blank(text)
    line_of = [0] * (len(code) + 1)
    line = 1
    for k, c in enumerate(code):
        line_of[k] = line
        if c == "\n":
            line += 1
    line_of[len(code)] = line
    found = []
    scopes = []  # ("namespace" | "class", class name or None)
    head_start = 0
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if c in ";}":
            if c == "}":
                if not scopes:
                    raise ValueError(f"line {line_of[i]}: unmatched }}")
                scopes.pop()
            head_start = i + 1
        elif c == ":" and ACCESS.search(code[head_start:i + 1]) and code[head_start:i + 1].strip() in (
                "public:", "private:", "protected:"):
            head_start = i + 1
        elif c == "{":
            head = code[head_start:i]
            kind = classify(head)
            if kind in ("namespace", "class"):
                name = None
                if kind == "class":
                    m = re.match(r"(class|struct|union)\s+(?:\w+\s+)*?([A-Za-z_]\w*)\s*(final\b)?\s*(:|$)",
                                 strip_template_heads(ATTRIBUTES.sub(" ", head)).strip())
                    name = m.group(2) if m else None
                scopes.append((kind, name))
                head_start = i + 1
            else:
                end = matching_brace(code, i)
                if end is None:
                    raise ValueError(f"line {line_of[i]}: unmatched {{")
                if kind == "function":
                    first = head_start + (len(head) - len(head.lstrip()))
                    classes = [s[1] for s in scopes if s[0] == "class" and s[1]]
                    found.append((line_of[first], line_of[end], function_name(head, classes)))
                    head_start = end + 1
                i = end  # "init" and "other": the statement goes on after the braces
        i += 1
    if scopes:
        raise ValueError(f"{len(scopes)} unclosed scope(s) at the end of the file")
    return found


def matching_brace(code, i):
    depth = 0
    for k in range(i, len(code)):
        if code[k] == "{":
            depth += 1
        elif code[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return None


def long_functions(path, limit):
    """(line, length, name) of each function of path over limit lines."""
    for first, last, name in functions(path.read_text(errors="replace")):
        if last - first + 1 > limit:
            yield first, last - first + 1, name


def main():
    src = pathlib.Path(sys.argv[1])
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 120
    found, unreadable, measured = [], [], 0
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".cc", ".h", ".c"):
            continue
        try:
            measured += len(functions(path.read_text(errors="replace")))
            found += [(path, *f) for f in long_functions(path, limit)]
        except ValueError as e:
            unreadable.append(f"{path}: cannot match its braces ({e})")
    for path, line, length, name in found:
        print(f"{path}:{line}: {length} lines (limit {limit}): {name}")
    for u in unreadable:
        print(u)
    if found or unreadable:
        if found:
            print(f"{len(found)} function(s) over {limit} lines: split them by step of the algorithm")
        return 1
    print(f"function length: all {measured} functions in {src} (free, member, in-class, lambdas) "
          f"are at most {limit} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
