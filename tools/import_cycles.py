"""No import cycle anywhere in the tree: ``python -m tools.import_cycles`` (script/lint).

The import-linter contracts keep the server's layers apart; this finds any circle of modules
importing each other, in the server and in tools/, ``TYPE_CHECKING`` imports included (a
circle that only type hints close still ties the two modules together). Prints each circle
and exits 1 if there is one.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping

import grimp

PACKAGES = ("wyoming_hayakoe", "tools")


def circles(imports: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (or one importing itself), each
    sorted; Tarjan's algorithm, iterative so that long chains do not exhaust the stack."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(imports):
        if root in index:
            continue
        work = [(root, iter(sorted(imports.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(imports.get(target, ())))))
                elif target in on_stack:
                    low[module] = min(low[module], index[target])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == module:
                        break
                if len(group) > 1 or module in imports.get(module, ()):
                    found.append(sorted(group))
    return found


def main() -> int:
    graph = grimp.build_graph(*PACKAGES, include_external_packages=False)
    imports = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    found = circles(imports)
    for group in found:
        print("import cycle: " + " <-> ".join(group))
    if not found:
        print(f"no import cycle in {', '.join(PACKAGES)} ({len(imports)} modules)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
