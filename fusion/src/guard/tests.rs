//! Unit tests of the guard runtime; the behaviour through servers is in `tests/guards.rs`.
