"""The package's import graph: no module imports itself back through others.

The layer rules themselves are import-linter contracts (pyproject.toml, run by script/lint).
"""

from __future__ import annotations

import grimp


def _cycle_from(graph: grimp.ImportGraph, start: str) -> list[str] | None:
    """A chain of imports from ``start`` back to itself, if there is one."""
    for imported in graph.find_modules_directly_imported_by(start):
        chain = graph.find_shortest_chain(importer=imported, imported=start)
        if chain is not None:
            return [start, *chain]
    return None


def test_no_import_cycles() -> None:
    graph = grimp.build_graph("wyoming_hayakoe")
    cycles = {m: c for m in sorted(graph.modules) if (c := _cycle_from(graph, m)) is not None}
    assert not cycles, "\n".join(" -> ".join(chain) for chain in cycles.values())
