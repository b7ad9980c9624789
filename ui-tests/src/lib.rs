//! Compile-fail and compile-pass tests of fusion's macros live in `tests/ui/<macro>/{fail,pass}/`.
//! The macros arrive with the macro issue; until then this crate only anchors the workspace.
