"""script/lint's check that no modules import each other in a circle (tools/import_cycles.py):
it finds a circle however long, and one that a module closes on itself, and the tree has
none."""

from __future__ import annotations

from tools.import_cycles import circles, main


def test_a_circle_is_found_and_a_chain_is_not() -> None:
    chain = {"a": ["b"], "b": ["c"], "c": []}
    assert circles(chain) == []
    circle = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": []}
    assert circles(circle) == [["a", "b", "c"]]
    assert circles({"a": ["a"]}) == [["a"]]
    two = {"a": ["b"], "b": ["a"], "c": ["d"], "d": ["c", "a"]}
    assert sorted(circles(two)) == [["a", "b"], ["c", "d"]]


def test_the_tree_has_no_import_cycle() -> None:
    assert main() == 0
