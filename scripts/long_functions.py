#!/usr/bin/env python3
"""Lists the functions of sim/ longer than a limit (default 80 lines), to keep functions
short enough to read at once (STYLE.md). A function is counted from the line that opens
its body to its closing brace; namespace-level definitions and member functions defined
in class bodies are both found (by brace matching after a line that ends a signature).

Exceptions are declarative tables, listed in scripts/long_functions.allow as
"path:function  reason"; the script fails (exit 1) on any other long function, or on an
exception that is no longer long.

Usage: scripts/long_functions.py [--limit 80] [--root sim]
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SIGNATURE_END = re.compile(r"\)\s*(const)?\s*(noexcept)?\s*(override)?\s*(->\s*[\w:<>,\s*&]+)?\s*\{\s*$")
NAME = re.compile(r"([\w:~]+)\s*\(")
CONTROL = {"if", "for", "while", "switch", "catch", "return"}


def strip(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split("//")[0]


def blank_raw_strings(text):
    """Replaces the contents of C++ raw strings (R"x(...)x") by empty lines, so that an
    embedded page's script is not taken for code."""
    out, i = [], 0
    for m in re.finditer(r'R"([^(\s]*)\(', text):
        if m.start() < i:
            continue
        end = text.find(")" + m.group(1) + '"', m.end())
        if end < 0:
            break
        out.append(text[i:m.end()])
        out.append("\n" * text.count("\n", m.end(), end))
        i = end
    out.append(text[i:])
    return "".join(out)


def functions(path):
    lines = blank_raw_strings(open(path, encoding="utf-8").read()).split("\n")
    i = 0
    while i < len(lines):
        code = strip(lines[i])
        if SIGNATURE_END.search(code) and not re.match(r"\s*(\}|else)", code):
            # The signature may start on an earlier line: find the function's name.
            j, text = i, code
            while "(" not in text and j > 0:
                j -= 1
                text = strip(lines[j]) + text
            names = [n for n in NAME.findall(text) if n.split("::")[-1] not in CONTROL]
            depth, k = 0, i
            while k < len(lines):
                c = strip(lines[k])
                depth += c.count("{") - c.count("}")
                if depth <= 0:
                    break
                k += 1
            if names and not text.lstrip().startswith(("if", "for", "while", "switch", "} else")):
                yield names[0], i + 1, k - i + 1
                i = k
        i += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=80)
    ap.add_argument("--root", default=os.path.join(ROOT, "sim"))
    args = ap.parse_args()
    allow = {}
    with open(os.path.join(HERE, "long_functions.allow"), encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                key, _, reason = line.partition(" ")
                allow[key] = reason.strip()
    long_ones, status = set(), 0
    for dirpath, _, files in os.walk(args.root):
        for name in sorted(files):
            if not name.endswith((".cc", ".h")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, ROOT)
            for func, line, length in functions(path):
                if length <= args.limit:
                    continue
                key = f"{rel}:{func}"
                long_ones.add(key)
                if key in allow:
                    print(f"{rel}:{line}: {func}: {length} lines (allowed: {allow[key]})")
                else:
                    print(f"{rel}:{line}: {func}: {length} lines, over {args.limit}")
                    status = 1
    for key in sorted(set(allow) - long_ones):
        print(f"{key}: listed in long_functions.allow but no longer over {args.limit} lines")
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
