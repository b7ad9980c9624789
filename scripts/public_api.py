#!/usr/bin/env python3
"""The public API of `fusion` and `fusion-macros` as a sorted text list, checked against the
snapshots `fusion/public-api.txt` and `fusion-macros/public-api.txt`, so that a change to the
public API is a decision rather than an accident.

Reads the HTML rustdoc writes (stable rustdoc, no JSON output needed), documented with all
features, as docs.rs documents the crates. One line per public item, per method of an inherent
impl, per trait impl (auto traits included, blanket impls left out) and per re-export:

    fusion::ToolError | impl ToolError | pub fn new(code: impl Into<ErrorCode>, ...) -> ToolError

Run: scripts/public_api.py              (runs `cargo doc`, then compares; a difference fails
                                          with a unified diff)
     PUBLIC_API=overwrite scripts/public_api.py   (accepts the current API)
     scripts/public_api.py --doc-dir DIR  (reads DIR instead of running `cargo doc`)
"""

import difflib
import html.parser
import json
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ left in scripts/

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (package directory, rustdoc's directory name for the crate)
CRATES = [("fusion", "fusion"), ("fusion-macros", "fusion_macros")]

DOC_COMMAND = ["cargo", "doc", "-p", "fusion", "-p", "fusion-macros", "--all-features",
               "--no-deps", "--locked"]

HEADER = """\
# The public API of {package} (all features), one line per item. Checked in CI by
# scripts/public_api.py; after a deliberate change: PUBLIC_API=overwrite scripts/public_api.py
"""

# Sections of an item page whose code headers belong to the item's API. Methods (h4) count in
# inherent impls; in trait impls only associated types and constants do (a trait's methods are
# the trait's). Blanket impls (`impl<T> From<T> for T`) and methods reached through `Deref`
# are left out: they say nothing about this crate.
# Auto traits and markers only nightly code can name; which of them rustdoc lists changes with
# the toolchain, not with this crate.
UNSTABLE_TRAITS = {"Freeze", "UnsafeUnpin", "StructuralPartialEq"}

IMPL_SECTIONS = {"implementations", "trait-implementations", "synthetic-implementations",
                 "foreign-impls", "implementors", "synthetic-implementors"}


def normalize(text):
    """One line: whitespace runs to one space, and rustdoc's line wrapping of long signatures
    (`f(\\n    a: A,\\n)`) read as the one-line form (`f(a: A)`)."""
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"([(<\[]) ", r"\1", text)
    text = re.sub(r",? ([)>\]])", r"\1", text)
    return re.sub(r",$", "", text)


class Page(html.parser.HTMLParser):
    """The text of an item page's declaration and of its code headers, by section."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.decl = None  # text of `<pre class="rust item-decl">`
        self.headers = []  # (section id, "h3" or "h4", text)
        self.reexports = []  # text of each `<code>` in the re-exports section
        self.modules = []  # hrefs of the modules section
        self.section = None
        self._stack = []  # open tags while capturing: (tag, what) with what in {capture, skip}
        self._capture = None  # (kind, tag, parts)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if self._capture is not None:
            if tag in ("br", "wbr"):
                return
            if tag == "div":  # a `where` clause: a block, so a word break before it
                self._capture[2].append(" ")
            skipping = tag == "summary" or "hideme" in classes
            self._stack.append(skipping)
            return
        if tag == "h2" and attrs.get("id"):
            self.section = attrs["id"]
        elif tag == "pre" and "item-decl" in classes:
            self._start("decl", tag)
        elif tag in ("h3", "h4") and "code-header" in classes:
            self._start(tag, tag)
        elif tag == "code" and self.section == "reexports":
            self._start("reexport", tag)
        elif tag == "a" and self.section == "modules" and "mod" in classes:
            self.modules.append(attrs["href"])

    def _start(self, kind, tag):
        self._capture = (kind, tag, [])
        self._stack = []

    def handle_endtag(self, tag):
        if self._capture is None:
            return
        if self._stack:
            self._stack.pop()
            return
        kind, _, parts = self._capture
        self._capture = None
        text = normalize("".join(parts))
        if kind == "decl":
            self.decl = text
        elif kind == "reexport":
            self.reexports.append(text)
        else:
            self.headers.append((self.section, kind, text))

    def handle_data(self, data):
        if self._capture is not None and not any(self._stack):
            self._capture[2].append(data)


def read_page(path):
    page = Page()
    with open(path, encoding="utf-8") as f:
        page.feed(f.read())
    page.close()
    return page


def all_items(crate_doc):
    """(path relative to the crate, page file) for every item `all.html` lists."""
    page = AllItems()
    with open(os.path.join(crate_doc, "all.html"), encoding="utf-8") as f:
        page.feed(f.read())
    return page.items


class AllItems(html.parser.HTMLParser):
    """The links of the `<ul class="all-items">` lists of `all.html`."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.items = []
        self._in_list = False
        self._href = None
        self._text = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "ul":
            self._in_list = "all-items" in (attrs.get("class") or "").split()
        elif tag == "a" and self._in_list:
            self._href = attrs.get("href")
            self._text = []

    def handle_data(self, data):
        if self._href is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag == "ul":
            self._in_list = False
        elif tag == "a" and self._href is not None:
            self.items.append(("".join(self._text).strip(), self._href))
            self._href = None


def item_lines(path, page):
    """The lines one item page contributes."""
    lines = []
    if page.decl is not None:
        lines.append(f"{path} | {page.decl}")
    impl = None
    for section, level, text in page.headers:
        if section not in IMPL_SECTIONS:
            continue
        if level == "h3":
            impl = text
            if implemented_trait(text) in UNSTABLE_TRAITS:
                continue
            lines.append(f"{path} | {text}")
        elif section == "implementations" or text.startswith(("type ", "const ")):
            lines.append(f"{path} | {impl} | {text}")
    return lines


def implemented_trait(impl_header):
    """`Send` of `impl<T> Send for Json<T>`, `!Sync` read as `Sync`; None for an inherent impl."""
    match = re.match(r"impl(?:<.*?>)? !?([\w:]+)(?:<.*>)? for ", impl_header)
    return match.group(1).split("::")[-1] if match else None


def module_lines(crate_doc, crate):
    """`mod` lines and re-exports of every public module, walked from the crate root (so a
    page left in the target directory by an older build is never read)."""
    lines = []
    pending = [("", "index.html")]
    while pending:
        prefix, rel = pending.pop()
        page = read_page(os.path.join(crate_doc, rel))
        path = crate + prefix
        lines.append(f"{path} | mod")
        lines.extend(f"{path} | {text}" for text in page.reexports)
        base = os.path.dirname(rel)
        for href in page.modules:
            name = href.split("/")[0]
            if name.startswith("__"):
                continue
            pending.append((f"{prefix}::{name}", os.path.join(base, href)))
    return lines


def public_api(crate_doc, crate):
    """The sorted lines of `crate`'s public API, from its rustdoc directory."""
    lines = module_lines(crate_doc, crate)
    for name, href in all_items(crate_doc):
        if "__" in name.split("::")[0]:
            continue
        page = read_page(os.path.join(crate_doc, href))
        lines.extend(item_lines(f"{crate}::{name}", page))
    return sorted(set(lines))


def check(package, lines, overwrite, out=sys.stdout, root=ROOT):
    """Compares `lines` with the package's snapshot; writes it when `overwrite`. True if the
    snapshot holds the API (after writing, when overwriting)."""
    snapshot = os.path.join(root, package, "public-api.txt")
    text = HEADER.format(package=package) + "".join(line + "\n" for line in lines)
    try:
        with open(snapshot, encoding="utf-8") as f:
            old = f.read()
    except FileNotFoundError:
        old = ""
    if old == text:
        return True
    if overwrite:
        with open(snapshot, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"{package}/public-api.txt: written ({len(lines)} lines)", file=out)
        return True
    diff = difflib.unified_diff(old.splitlines(keepends=True), text.splitlines(keepends=True),
                                f"{package}/public-api.txt", f"{package} (current)")
    out.write("".join(diff))
    print(f"\nThe public API of {package} differs from {package}/public-api.txt (above).\n"
          "If the change is deliberate, accept it: PUBLIC_API=overwrite scripts/public_api.py",
          file=out)
    return False


def doc_dir():
    """`cargo doc` with all features; its output directory."""
    subprocess.run(DOC_COMMAND, cwd=ROOT, check=True)
    meta = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps"],
                          cwd=ROOT, check=True, capture_output=True, text=True)
    return os.path.join(json.loads(meta.stdout)["target_directory"], "doc")


def main(argv):
    if len(argv) == 3 and argv[1] == "--doc-dir":
        docs = argv[2]
    elif len(argv) == 1:
        docs = doc_dir()
    else:
        print(__doc__, file=sys.stderr)
        return 2
    overwrite = os.environ.get("PUBLIC_API") == "overwrite"
    ok = True
    for package, crate in CRATES:
        ok &= check(package, public_api(os.path.join(docs, crate), crate), overwrite)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
