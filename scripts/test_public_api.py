#!/usr/bin/env python3
"""Tests of `public_api.py` on small rustdoc-shaped HTML pages written to a temporary
directory. Run: python3 scripts/test_public_api.py"""

import io
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # no __pycache__ left in scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import public_api  # noqa: E402

ALL = """<html><body><nav><ul class="block"><li><a href="#structs">Structs</a></li></ul></nav>
<h3 id="structs">Structs</h3><ul class="all-items">
<li><a href="struct.Shop.html">Shop</a></li></ul>
<h3 id="functions">Functions</h3><ul class="all-items">
<li><a href="sub/fn.open.html">sub::open</a></li></ul></body></html>"""

ROOT_INDEX = """<h2 id="reexports" class="section-header">Re-exports</h2>
<dl class="item-table reexports"><dt><code>pub use serde_json;</code></dt></dl>
<h2 id="modules" class="section-header">Modules</h2><dl class="item-table">
<dt><a class="mod" href="sub/index.html">sub</a></dt>
<dt><a class="mod" href="__private/index.html">__private</a></dt></dl>"""

SHOP = """<pre class="rust item-decl"><code>pub struct Shop {
    pub name: <a class="struct" href="x.html">String</a>,
    <span class="comment">/* private fields */</span>
}</code></pre>
<details class="toggle top-doc"><summary class="hideme"><span>Expand description</span></summary>
<div class="docblock"><p>A shop.</p></div></details>
<h2 id="implementations" class="section-header">Implementations</h2><div id="implementations-list">
<section class="impl"><a class="src rightside" href="s.html">Source</a>
<h3 class="code-header">impl Shop</h3></section>
<section class="method"><h4 class="code-header">pub fn <a href="#m">sell</a>&lt;T&gt;(
    &amp;self,
    item: T,
    count: <a href="u.html">u32</a>,
) -&gt; <a>Receipt</a><div class="where">where
    T: <a>Item</a>,</div></h4></section>
<div class="docblock">Sells.</div></div>
<h2 id="trait-implementations" class="section-header">Trait Implementations</h2>
<div id="trait-implementations-list">
<h3 class="code-header">impl Iterator for Shop</h3>
<h4 class="code-header">type <a>Item</a> = <a>Receipt</a></h4>
<h4 class="code-header">fn <a>next</a>(&amp;mut self) -&gt; Option&lt;Receipt&gt;</h4>
<h3 class="code-header">impl StructuralPartialEq for Shop</h3></div>
<h2 id="synthetic-implementations" class="section-header">Auto Trait Implementations</h2>
<div id="synthetic-implementations-list">
<h3 class="code-header">impl !Send for Shop</h3>
<h3 class="code-header">impl Freeze for Shop</h3></div>
<h2 id="blanket-implementations" class="section-header">Blanket Implementations</h2>
<div id="blanket-implementations-list">
<h3 class="code-header">impl&lt;T&gt; From&lt;T&gt; for T</h3>
<h4 class="code-header">fn from(t: T) -&gt; T</h4></div>"""

OPEN = """<pre class="rust item-decl"><code>pub fn open(path: &amp;<a>str</a>) -&gt; <a>Shop</a>
</code></pre>"""

EXPECTED = [
    "shop | mod",
    "shop | pub use serde_json;",
    "shop::Shop | impl !Send for Shop",
    "shop::Shop | impl Iterator for Shop",
    "shop::Shop | impl Iterator for Shop | type Item = Receipt",
    "shop::Shop | impl Shop",
    "shop::Shop | impl Shop | pub fn sell<T>(&self, item: T, count: u32) -> Receipt where T: Item",
    "shop::Shop | pub struct Shop { pub name: String, /* private fields */ }",
    "shop::sub | mod",
    "shop::sub::open | pub fn open(path: &str) -> Shop",
]


def write_docs(root, shop=SHOP):
    pages = {
        "all.html": ALL,
        "index.html": ROOT_INDEX,
        "struct.Shop.html": shop,
        "sub/index.html": "<h1>Module sub</h1>",
        "sub/fn.open.html": OPEN,
        # Hidden, and a page an older build left behind: neither is linked, neither is read.
        "__private/index.html": "<pre class=\"rust item-decl\"><code>hidden</code></pre>",
        "struct.Gone.html": "<pre class=\"rust item-decl\"><code>pub struct Gone;</code></pre>",
    }
    for path, text in pages.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)


class PublicApi(unittest.TestCase):
    def api(self, shop=SHOP):
        with tempfile.TemporaryDirectory() as docs:
            write_docs(docs, shop)
            return public_api.public_api(docs, "shop")

    def test_items_signatures_and_impls_are_listed_sorted(self):
        self.assertEqual(self.api(), EXPECTED)

    def test_a_wrapped_signature_reads_as_its_one_line_form(self):
        self.assertEqual(
            public_api.normalize("pub fn f(\n    a: A,\n    b: Vec<\n        B,\n    >,\n) -> C"),
            public_api.normalize("pub fn f(a: A, b: Vec<B>) -> C"),
        )

    def test_an_unchanged_api_passes_and_a_changed_signature_fails_with_a_diff(self):
        with tempfile.TemporaryDirectory() as root:
            os.mkdir(os.path.join(root, "shop"))
            out = io.StringIO()
            self.assertTrue(public_api.check("shop", self.api(), True, out, root))
            self.assertIn("written", out.getvalue())
            self.assertTrue(public_api.check("shop", self.api(), False, io.StringIO(), root))

            changed = self.api(SHOP.replace("count: <a href=\"u.html\">u32</a>",
                                            "count: <a href=\"u.html\">u64</a>"))
            out = io.StringIO()
            self.assertFalse(public_api.check("shop", changed, False, out, root))
            report = out.getvalue()
            self.assertIn("\n-shop::Shop | impl Shop | pub fn sell<T>(&self, item: T, count: u32)",
                          report)
            self.assertIn("\n+shop::Shop | impl Shop | pub fn sell<T>(&self, item: T, count: u64)",
                          report)
            self.assertIn("PUBLIC_API=overwrite scripts/public_api.py", report)

    def test_a_removed_item_fails(self):
        with tempfile.TemporaryDirectory() as root:
            os.mkdir(os.path.join(root, "shop"))
            public_api.check("shop", self.api(), True, io.StringIO(), root)
            without_impl = [line for line in self.api() if "Iterator" not in line]
            out = io.StringIO()
            self.assertFalse(public_api.check("shop", without_impl, False, out, root))
            self.assertIn("\n-shop::Shop | impl Iterator for Shop\n", out.getvalue())

    def test_the_trait_of_an_impl_header(self):
        trait = public_api.implemented_trait
        self.assertEqual(trait("impl<T> Send for Json<T> where T: Send"), "Send")
        self.assertEqual(trait("impl !Sync for Tester"), "Sync")
        self.assertEqual(trait("impl<K: Serialize, V> From<Map<K, V>> for Args"), "From")
        self.assertIsNone(trait("impl Shop"))


if __name__ == "__main__":
    unittest.main()
