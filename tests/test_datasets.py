"""Every real graph of the shared datasets, counted exactly against its published numbers."""

import pytest
from conftest import DATASETS, dataset_params

import tcdist


@pytest.mark.parametrize("entry", dataset_params())
@pytest.mark.parametrize("kernel", ["marker", "merge", "middle"])
def test_published_counts(entry, kernel):
    result = tcdist.count_triangles(DATASETS / entry["file"], backend="cpu", kernel=kernel)
    assert result.triangles == entry["published_triangles"]
    assert (result.n, result.m) == (entry["n"], entry["m"])


def test_embedded_graph_is_ego_facebook():
    result = tcdist.count_triangles()
    assert (result.triangles, result.n, result.m) == (1_612_010, 4039, 88234)
