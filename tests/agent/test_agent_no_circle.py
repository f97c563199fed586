"""The agent floor's modules import one another one way (kinds -> scaffolds -> episode): no
circle, TYPE_CHECKING and function-level imports counted. The floors contract
(tests/package/test_layering.py) sees only imports between floors; this sees inside one."""

from __future__ import annotations

from graphlib import CycleError, TopologicalSorter

import grimp
import pytest

AGENT = "termgrade.agent"


def _order(graph: grimp.ImportGraph) -> list[str]:
    """The agent's modules, each after those it imports; CycleError on a circle."""
    modules = sorted(m for m in graph.find_children(AGENT))
    edges = {m: {i for i in graph.find_modules_directly_imported_by(m)
                 if i.startswith(f"{AGENT}.") and i != m} for m in modules}
    return list(TopologicalSorter(edges).static_order())


def test_the_agent_modules_import_one_way() -> None:
    graph = grimp.build_graph("termgrade", include_external_packages=False)
    order = _order(graph)
    assert order.index(f"{AGENT}.episode") < order.index(f"{AGENT}.scaffolds") < \
        order.index(f"{AGENT}.kinds")
    # the check can fail: the import back that made the circle before
    graph.add_import(importer=f"{AGENT}.scaffolds", imported=f"{AGENT}.kinds")
    with pytest.raises(CycleError):
        _order(graph)
