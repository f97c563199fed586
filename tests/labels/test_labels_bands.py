"""Difficulty bands: the release's default and configurable cut points."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from termgrade.core.errors import OptionError
from termgrade.labels import DEFAULT_SCHEME, BandScheme


def test_default_bands_and_their_edges() -> None:
    rates = [0, 1e-9, 0.1, 0.25, 0.5, 0.75, 0.8, 1 - 1e-9, 1, float("nan")]
    assert DEFAULT_SCHEME.assign(rates) == ["zero", "low", "low", "central", "central",
                                            "central", "high", "high", "one", None]
    assert DEFAULT_SCHEME.describe() == ["zero: p = 0", "low: (0, 0.25)",
                                         "central: [0.25, 0.75]", "high: (0.75, 1)",
                                         "one: p = 1"]
    assert DEFAULT_SCHEME.band(None) is None
    assert DEFAULT_SCHEME.bounds_of("central") == (0.25, 0.75)
    assert DEFAULT_SCHEME.bounds_of("one") == (1.0, 1.0)
    assert DEFAULT_SCHEME.bounds_of("nope") is None


def test_eighths_land_where_the_release_puts_them() -> None:
    bands = DEFAULT_SCHEME.assign([i / 8 for i in range(9)])
    assert bands == ["zero", "low", "central", "central", "central", "central", "central",
                     "high", "one"]


def test_custom_cuts_get_default_names() -> None:
    scheme = BandScheme.from_cuts([0.2, 0.5, 0.8])
    assert scheme.names == ("zero", "band1", "band2", "band3", "band4", "one")
    assert scheme.assign([0.2, 0.5, 0.8]) == ["band2", "band2", "band3"]


@pytest.mark.parametrize(("cuts", "names"), [
    ((0.75, 0.25), None), ((0.0, 0.5), None), ((0.5, 1.0), None), ((0.3, 0.3), None),
    ((0.25, 0.75), ("a", "b", "c")), ((0.25, 0.75), ("a", "a", "b", "c", "d")),
])
def test_bad_schemes_are_refused(cuts: tuple[float, ...], names: tuple[str, ...] | None) -> None:
    with pytest.raises(OptionError):
        BandScheme.from_cuts(cuts, names)


@settings(max_examples=200, deadline=None)
@given(p=st.floats(0, 1), cut=st.floats(0.01, 0.49))
def test_symmetric_schemes_are_symmetric(p: float, cut: float) -> None:
    scheme = BandScheme.from_cuts([cut, 1 - cut])
    index = scheme.names.index
    forward, mirrored = scheme.assign([p, 1 - p])
    assert forward is not None and mirrored is not None
    assert index(forward) == len(scheme.names) - 1 - index(mirrored)
