"""The package's import graph has no cycle: every module can be read, tested and changed from its
imports down. (The layers' direction is checked by import-linter's contracts in pyproject.toml, which
`.ci/run` runs as `lint-imports`.) Lazy imports inside functions count: they are edges too."""

import pytest

grimp = pytest.importorskip("grimp")


def strongly_connected(graph) -> list:
    """The module groups that import one another round in a circle (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, groups = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[module] = min(low[module], index[child])
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
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def test_no_module_of_the_package_imports_itself_through_others():
    graph = grimp.build_graph("gpuprof", cache_dir=None)
    assert strongly_connected(graph) == []


def test_a_cycle_is_found_where_there_is_one():
    class Graph:
        modules = {"a", "b", "c", "d"}
        edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}

        def find_modules_directly_imported_by(self, module):
            return self.edges.get(module, set())

    assert strongly_connected(Graph()) == [["a", "b", "c"]]
