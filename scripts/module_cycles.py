#!/usr/bin/env python3
"""Import cycles between the top-level modules of a Rust crate.

Usage: python3 scripts/module_cycles.py [--edges] CRATE_SRC_DIR   (e.g. fusion/src)

Walks the module tree from CRATE_SRC_DIR/lib.rs (`mod` declarations, `#[path]` included) and
collects every path that leaves a module: `use` trees and inline paths that start with
`crate::`, `$crate::`, `super::` or `self::`. Comments, string and character literals, and
items under `#[cfg(test)]` (or `cfg(doctest)`, `cfg(all(test, ..))`) are left out, and so are
the files of test-only modules. A path through a module is charged to that module, as the code
spells it: `crate::validation::ValidationError` imports `validation` even when `validation` only
re-exports it (the importer still names, and depends on, `validation`). A path through the
crate root's re-exports is charged to the module that defines the item: `crate::ToolError`
follows lib.rs's `pub use envelope::error::ToolError` (and any re-export after it) to `envelope`.

Prints each group of top-level modules that import each other in a cycle, one cycle through
the group with the place of each import on it, and exits 1 if there is any; else prints a
summary and exits 0. `--edges` also prints every import between two top-level modules, with the
first place it is made. Python 3 standard library only.
"""

import os
import re
import sys

# --- lexing: comments, literals and test-only items out ----------------------------------------


def blank(text, start, end):
    """`text[start:end]` replaced by spaces, newlines kept (so offsets and lines still match)."""
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def strip_comments_and_literals(text):
    """The text with comments and the insides of string and char literals blanked out.

    Handles nested block comments, raw strings (`r#"…"#`), byte strings, escapes, and tells a
    char literal (`'a'`, `'\\n'`) from a lifetime (`'a`)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c == "/" and nxt == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c == "/" and nxt == "*":
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "rb" and RAW_STRING.match(text, i) and not _ident_before(text, i):
            m = RAW_STRING.match(text, i)
            hashes = m.group(2)
            body = m.end()
            end = text.find('"' + hashes, body)
            end = n if end < 0 else end
            out.append(text[i:body] + re.sub(r"[^\n]", " ", text[body:end]))
            i = end
        elif c == '"' or (c == "b" and nxt == '"' and not _ident_before(text, i)):
            start = i + (2 if c == "b" else 1)
            j = start
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:start] + re.sub(r"[^\n]", " ", text[start:j]))
            i = j
            if i < n:
                out.append('"')
                i += 1
        elif c == "'":
            m = CHAR.match(text, i)
            if m:
                out.append("'" + " " * (m.end() - i - 2) + "'")
                i = m.end()
            else:  # a lifetime or a label
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


RAW_STRING = re.compile(r'(b?r)(#*)"')
CHAR = re.compile(r"'(\\(?:u\{[0-9a-fA-F_]*\}|x[0-9a-fA-F]{2}|.)|[^\\'\n])'")


def _ident_before(text, i):
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")


ATTRIBUTE = re.compile(r"\s*#\s*\[")
TEST_CFG = re.compile(r"#\s*\[\s*cfg\s*\(\s*(?:test|doctest|all\s*\(\s*(?:test|doctest)\b[^\]]*\))\s*\)\s*\]")


def strip_test_items(text):
    """The text with every item under a test-only `#[cfg(..)]` blanked out: its other
    attributes, then up to the `;` or the `{ … }` that ends it."""
    while True:
        m = TEST_CFG.search(text)
        if not m:
            return text
        i = m.end()
        while True:  # further attributes of the same item
            a = ATTRIBUTE.match(text, i)
            if not a:
                break
            i = _skip_balanced(text, a.end() - 1, "[", "]")
        depth, j = 0, i
        while j < len(text):
            c = text[j]
            if c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
            elif c == ";" and depth == 0:
                j += 1
                break
            elif c == "{" and depth == 0:
                j = _skip_balanced(text, j, "{", "}")
                break
            j += 1
        text = blank(text, m.start(), j)


def _skip_balanced(text, i, open_, close):
    """The index just past the `close` that matches the `open_` at `i`."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == open_:
            depth += 1
        elif text[j] == close:
            depth -= 1
            if depth == 0:
                return j + 1
    return len(text)


TOKEN = re.compile(r"\$?(?:r#)?[A-Za-z_][A-Za-z0-9_]*|::|[{}();,*]|\S")


def tokens(text):
    """(token, line) pairs."""
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    out, line = [], 0
    for m in TOKEN.finditer(text):
        while line + 1 < len(line_starts) and line_starts[line + 1] <= m.start():
            line += 1
        out.append((m.group(0).removeprefix("r#"), line + 1))
    return out


# --- the module tree -----------------------------------------------------------------------------


class Module:
    def __init__(self, path, file, text):
        self.path = path  # tuple of names from the crate root
        self.file = file
        self.text = text  # comments, literals and test items blanked out


def load_tree(src):
    """Every non-test module file reachable from lib.rs, by module path."""
    modules = {}

    def load(path, file, dir_for_children):
        with open(file, encoding="utf-8") as f:
            raw = f.read()
        text = strip_test_items(strip_comments_and_literals(raw))
        modules[path] = Module(path, file, text)
        # `mod name;` at any depth of inline modules; inline `mod name { … }` bodies are
        # part of this file (their paths are tracked while reading the tokens).
        for m in re.finditer(r"\bmod\s+(?:r#)?([A-Za-z_]\w*)\s*;", text):
            name = m.group(1)
            inline = _inline_mods_around(text, m.start())
            attr = re.search(r'#\s*\[\s*path\s*=\s*"\s*"\s*\]\s*(?:#\s*\[[^\]]*\]\s*|pub(?:\([^)]*\))?\s*)*$',
                             text[max(0, m.start() - 300):m.start()])
            base = os.path.join(dir_for_children, *inline)
            if attr:
                quoted = raw[max(0, m.start() - 300):m.start()][attr.start():attr.end()]
                child = os.path.normpath(os.path.join(os.path.dirname(file) if not inline else base,
                                                      re.search(r'"([^"]*)"', quoted).group(1)))
                child_dir = os.path.dirname(child)
            else:
                child = os.path.join(base, name + ".rs")
                child_dir = os.path.join(base, name)
                if not os.path.exists(child):
                    child = os.path.join(base, name, "mod.rs")
            if os.path.exists(child):
                load(path + tuple(inline) + (name,), child, child_dir)

    load((), os.path.join(src, "lib.rs"), src)
    return modules


def _inline_mods_around(text, pos):
    """The names of the inline `mod name { … }` blocks that enclose `pos`."""
    stack = []
    for m in re.finditer(r"\bmod\s+(?:r#)?([A-Za-z_]\w*)\s*\{|[{}]", text[:pos]):
        if m.group(0) == "}":
            if stack:
                stack.pop()
        else:
            stack.append(m.group(1))  # None for a plain brace
    return [name for name in stack if name]


# --- paths out of each module --------------------------------------------------------------------


def paths_of(module):
    """(module path the path was written in, segments, line, bound name) for every `use` leaf
    (bound name: the name it binds, `None` for a glob) and every inline path that starts with
    `crate`, `$crate`, `super` or `self` (bound name: `None`)."""
    toks = tokens(module.text)
    out = []
    stack = []  # one entry per open brace: an inline module's name, or None
    i = 0
    while i < len(toks):
        tok, line = toks[i]
        here = module.path + tuple(name for name in stack if name)
        if tok == "mod" and i + 2 < len(toks) and toks[i + 2][0] == "{":
            stack.append(toks[i + 1][0])
            i += 3
            continue
        if tok == "{":
            stack.append(None)
        elif tok == "}":
            if stack:
                stack.pop()
        elif tok == "use":
            end = i + 1
            while end < len(toks) and toks[end][0] != ";":
                end += 1
            for segments, bound in use_tree([t for t, _ in toks[i + 1:end]]):
                out.append((here, segments, line, bound))
            i = end
            continue
        elif tok in ("crate", "$crate", "super", "self") and i + 1 < len(toks) and toks[i + 1][0] == "::":
            segments = [tok]
            j = i + 1
            while j + 1 < len(toks) and toks[j][0] == "::" and re.match(r"\$?\w+$", toks[j + 1][0]):
                segments.append(toks[j + 1][0])
                j += 2
            out.append((here, segments, line, None))
            i = j
            continue
        i += 1
    return out


def use_tree(toks):
    """The leaves of a `use` tree as (full path, bound name): `crate::{a::B, c as D, e::*}`
    gives (`crate::a::B`, `B`), (`crate::c`, `D`) and (`crate::e::*`, None); a `self` leaf
    names its prefix."""
    leaves = []

    def parse(i, prefix):
        segments, bound, had_self = list(prefix), None, False
        while i < len(toks):
            t = toks[i]
            if t == "::":
                i += 1
            elif t == "{":
                i += 1
                while i < len(toks) and toks[i] != "}":
                    i = parse(i, segments)
                    if i < len(toks) and toks[i] == ",":
                        i += 1
                return i + 1
            elif t == "*":
                leaves.append((segments + ["*"], None))
                return i + 1
            elif t in (",", "}"):
                break
            elif t == "self":
                had_self = True
                i += 1
            elif t == "as":
                bound = toks[i + 1] if i + 1 < len(toks) else None
                i += 2
            else:
                segments.append(t)
                i += 1
        if segments and (len(segments) > len(prefix) or had_self):
            leaves.append((segments, bound or segments[-1]))
        return i

    parse(0, [])
    return leaves


def absolute(here, segments, modules):
    """The path from the crate root, or None for a path into an extern crate or a relative
    path that stays inside the module."""
    first = segments[0]
    if first in ("crate", "$crate"):
        return list(segments[1:])
    if first in ("super", "self"):
        base = list(here)
        rest = list(segments)
        while rest and rest[0] in ("super", "self"):
            if rest.pop(0) == "super" and base:
                base.pop()
        return base + rest
    if here == () and (first,) in modules:  # lib.rs: relative to the root
        return list(segments)
    return None


def imports_by_module(modules):
    """For each module path, the names its `use` items bind, to their absolute paths."""
    table = {}
    for module in modules.values():
        for here, segments, _, bound in paths_of(module):
            if bound is None:
                continue
            path = absolute(here, segments, modules)
            if path:
                table.setdefault(here, {}).setdefault(bound, path)
    return table


def defining_module(path, modules, imports, seen=()):
    """The top-level module that defines the item `path` names (following re-exports), or
    None when it is the crate root itself or unknown."""
    mod, i = (), 0
    while i < len(path) and mod + (path[i],) in modules:
        mod += (path[i],)
        i += 1
    if i < len(path) and path[i] != "*":
        target = imports.get(mod, {}).get(path[i])
        key = (mod, path[i])
        if target and key not in seen and target[: len(mod) + 1] != list(mod) + [path[i]]:
            found = defining_module(target + path[i + 1:], modules, imports, seen + (key,))
            if found:
                return found
    return mod[0] if mod else None


def edges(modules):
    """top-level module -> {top-level module it imports: (file, line, path)}."""
    imports = imports_by_module(modules)
    graph = {}
    for module in modules.values():
        if not module.path:
            continue
        top = module.path[0]
        graph.setdefault(top, {})
        for here, segments, line, _ in paths_of(module):
            path = absolute(here, segments, modules)
            if path is None:
                continue
            # A path through a module is charged to that module, as the code spells it (a
            # re-export there still makes the importer depend on it); a path through the crate
            # root's re-exports, to the module that defines the item.
            if (path[0],) in modules:
                target = path[0]
            else:
                target = defining_module(path, modules, imports)
            if target and target != top and target not in graph[top]:
                graph[top][target] = (module.file, line, "::".join(segments))
    return graph


# --- cycles --------------------------------------------------------------------------------------


def strongly_connected(graph):
    """Tarjan's algorithm: the groups of more than one node that reach each other."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def a_cycle(graph, group):
    """One cycle through the group's first module: the shortest way back to it."""
    start = group[0]
    inside = set(group)
    parents, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph.get(v, ())):
                if w == start:
                    cycle = [v]
                    while parents[cycle[-1]] is not None:
                        cycle.append(parents[cycle[-1]])
                    return list(reversed(cycle)) + [start]
                if w in inside and w not in parents:
                    parents[w] = v
                    nxt.append(w)
        frontier = nxt
    return [start]


def main(argv):
    show_edges = "--edges" in argv
    args = [a for a in argv[1:] if a != "--edges"]
    if len(args) != 1 or not os.path.isfile(os.path.join(args[0], "lib.rs")):
        print("usage: module_cycles.py [--edges] CRATE_SRC_DIR", file=sys.stderr)
        return 2
    modules = load_tree(args[0])
    graph = edges(modules)
    if show_edges:
        for a in sorted(graph):
            for b in sorted(graph[a]):
                file, line, path = graph[a][b]
                print(f"{a} -> {b}: {os.path.relpath(file)}:{line} uses {path}")
    groups = strongly_connected(graph)
    for group in groups:
        cycle = a_cycle(graph, group)
        print(f"cycle: {' -> '.join(cycle)}   (modules that import each other: {', '.join(group)})")
        for a, b in zip(cycle, cycle[1:]):
            file, line, path = graph[a][b]
            print(f"  {a} -> {b}: {os.path.relpath(file)}:{line} uses {path}")
    in_cycles = sum(len(g) for g in groups)
    print(f"{len(graph)} top-level modules, {in_cycles} in {len(groups)} import cycle(s)")
    return 1 if groups else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
