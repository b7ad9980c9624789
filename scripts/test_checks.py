#!/usr/bin/env python3
"""Tests of `module_cycles.py` and `file_lengths.py` on small crates written to a temporary
directory. Run: python3 scripts/test_checks.py"""

import contextlib
import io
import os
import sys
import tempfile
import textwrap
import unittest

sys.dont_write_bytecode = True  # no __pycache__ left in scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import file_lengths  # noqa: E402
import module_cycles  # noqa: E402


def write_crate(root, files):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(textwrap.dedent(text))


class ModuleCycles(unittest.TestCase):
    def run_on(self, files):
        """(exit code, output, edges as {module: set of modules}) for a crate of `files`."""
        with tempfile.TemporaryDirectory() as root:
            write_crate(root, files)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                code = module_cycles.main(["module_cycles.py", root])
            graph = module_cycles.edges(module_cycles.load_tree(root))
        return code, out.getvalue(), {a: set(b) for a, b in graph.items()}

    def test_a_cycle_is_printed_and_fails(self):
        code, out, _ = self.run_on({
            "lib.rs": "mod a;\nmod b;\n",
            "a.rs": "use crate::b::B;\npub struct A;\n",
            "b.rs": "use crate::a::A;\npub struct B;\n",
        })
        self.assertEqual(code, 1)
        self.assertIn("cycle: a -> b -> a", out)
        self.assertIn("b.rs:1 uses crate::a::A", out)

    def test_layers_pass(self):
        code, out, graph = self.run_on({
            "lib.rs": "mod a;\nmod b;\nmod c;\n",
            "a.rs": "use crate::b::B;\nuse crate::c::C;\n",
            "b.rs": "use crate::c::C;\npub struct B;\n",
            "c.rs": "pub struct C;\n",
        })
        self.assertEqual(code, 0, out)
        self.assertEqual(graph, {"a": {"b", "c"}, "b": {"c"}, "c": set()})

    def test_test_code_comments_and_literals_are_left_out(self):
        _, _, graph = self.run_on({
            "lib.rs": "mod a;\nmod b;\n",
            "a.rs": """\
                //! Uses [`crate::b::B`] in a doc link only.
                // crate::b::B
                /* crate::b::B /* nested */ crate::b::B */
                const S: &str = "crate::b::B";
                const R: &str = r#"crate::b::B " still a string"#;
                const C: char = '"';
                fn f<'a>(x: &'a str) -> &'a str { x }
                #[cfg(test)]
                use crate::b::B;
                #[cfg(all(test, feature = "x"))]
                fn helper() { crate::b::helper(); }
                #[cfg(test)]
                mod tests {
                    use crate::b::B;
                }
                #[cfg(test)]
                mod more_tests;
            """,
            "a/more_tests.rs": "use crate::b::B;\n",
            "b.rs": "pub struct B;\n",
        })
        self.assertEqual(graph["a"], set())

    def test_code_outside_test_items_still_counts(self):
        _, _, graph = self.run_on({
            "lib.rs": "mod a;\nmod b;\nmod c;\n",
            "a.rs": """\
                #[cfg(not(test))]
                use crate::b::B;
                #[cfg(test)]
                const X: [u8; 2] = [1, 2];
                fn f() { crate::c::go(); }
            """,
            "b.rs": "pub struct B;\n",
            "c.rs": "pub fn go() {}\n",
        })
        self.assertEqual(graph["a"], {"b", "c"})

    def test_crate_root_re_exports_lead_to_the_defining_module(self):
        _, _, graph = self.run_on({
            "lib.rs": """\
                mod a;
                mod b;
                mod c;
                mod d;
                pub use b::{Thing, Other as Renamed};
                pub use c::Alias;
            """,
            "a.rs": "use crate::{Renamed, Thing};\nfn f() -> crate::Alias { todo!() }\n",
            "b.rs": "pub struct Thing;\npub struct Other;\n",
            # `c` only re-exports what `d` defines.
            "c.rs": "pub use crate::d::Alias;\n",
            "d.rs": "pub struct Alias;\n",
        })
        self.assertEqual(graph["a"], {"b", "d"})

    def test_a_modules_re_export_still_charges_that_module(self):
        code, out, graph = self.run_on({
            "lib.rs": "mod a;\nmod b;\nmod c;\n",
            # `b` re-exports what `c` defines, and uses `a`: `a` naming `b::Thing` is a cycle.
            "a.rs": "use crate::b::Thing;\npub struct A;\n",
            "b.rs": "pub use crate::c::Thing;\nuse crate::a::A;\n",
            "c.rs": "pub struct Thing;\n",
        })
        self.assertEqual(graph["a"], {"b"})
        self.assertEqual(code, 1, out)

    def test_super_and_self_paths_and_inline_modules(self):
        _, _, graph = self.run_on({
            "lib.rs": "mod a;\nmod b;\nmod c;\npub use c::C;\n",
            "a/mod.rs": """\
                mod x;
                use super::b::B;
                mod inner {
                    // `super` here is `a`, not the crate root.
                    use super::x::X;
                    use self::deeper::D;
                    mod deeper { pub struct D; }
                }
            """,
            "a/x.rs": "pub struct X;\nuse super::super::C;\n",
            "b.rs": "pub struct B;\n",
            "c.rs": "pub struct C;\n",
        })
        self.assertEqual(graph["a"], {"b", "c"})

    def test_path_attributes_and_use_trees(self):
        _, _, graph = self.run_on({
            "lib.rs": '#[path = "other.rs"]\npub mod renamed;\nmod a;\nmod b;\n',
            "other.rs": "pub struct O;\n",
            "a.rs": "use crate::{b::{self, B}, renamed::O as P};\n",
            "b.rs": "pub struct B;\n",
        })
        self.assertEqual(graph["a"], {"b", "renamed"})


class FileLengths(unittest.TestCase):
    def test_long_files_are_found_outside_target_and_fuzz(self):
        with tempfile.TemporaryDirectory() as root:
            write_crate(root, {
                "src/short.rs": "x\n" * 600,
                "src/long.rs": "x\n" * 601,
                "target/debug/build/generated.rs": "x\n" * 900,
                "fuzz/fuzz_targets/t.rs": "x\n" * 900,
                "notes.txt": "x\n" * 900,
            })
            found = file_lengths.long_files([root], 600)
            self.assertEqual(found, [(601, os.path.join(root, "src", "long.rs"))])
            self.assertEqual(file_lengths.long_files([root], 601), [])


if __name__ == "__main__":
    unittest.main()
