"""An error that advises an option or a value is followed here, and the run it advises succeeds
with the count one process gives without it."""

import json

import pytest

import tcdist
from tcdist.api import partition
from tcdist.errors import OptionError


@pytest.fixture(scope="module")
def rmat10():
    return tcdist.count_triangles("rmat:10", backend="cpu").triangles


def test_resume_without_a_store_advises_one_and_resumes_with_it(tmp_path, cli, rmat10):
    refused = cli("count", "rmat:10", "--backend", "cpu", "--resume")
    assert refused.code == 2 and "give --store FILE or count a store" in refused.err
    followed = cli("count", "rmat:10", "--backend", "cpu", "--resume", "--store", tmp_path / "parts.h5", "-P", 3,
                   "--json")
    assert followed.code == 0, followed.err
    assert json.loads(followed.out)["triangles"] == rmat10


def test_writing_a_store_of_auto_parts_advises_a_number_and_a_number_writes_it(tmp_path, rmat10):
    store = tmp_path / "parts.h5"
    with pytest.raises(OptionError, match="give a number of parts to write a store"):
        partition("rmat:10", parts="auto", output=store)
    assert not store.exists()
    partition("rmat:10", parts=4, output=store)
    assert tcdist.count_triangles(store, backend="cpu").triangles == rmat10


def test_a_graph_that_cannot_be_sliced_to_fit_advises_more_parts_and_more_parts_count_it(cli):
    """Every row's pointer beside the longest row does not fit one slice: two parts have fewer
    rows each, and fit. With no number of parts given, tcdist finds the two itself and says why."""
    whole = tcdist.count_triangles("rmat:12", backend="cpu").triangles
    limit = ("--backend", "cpu", "--gpu-memory-limit", "72KiB")
    refused = cli("count", "rmat:12", *limit, "--parts", "1")
    assert refused.code == 2 and "cannot be sliced to fit 72.0 KiB" in refused.err
    assert refused.err.rstrip().endswith("give the device more memory or count more parts")
    followed = cli("count", "rmat:12", *limit, "--parts", "2", "--json")
    assert followed.code == 0, followed.err
    assert json.loads(followed.out)["triangles"] == whole
    record = cli("count", "rmat:12", *limit, "--json").json()
    assert (record["triangles"], record["parts"], record["mode"]) == (whole, 2, "parts")
    assert record["warnings"] == ["part 0 cannot be sliced to fit 72.0 KiB on the device: its longest row (77 "
                                  "out-neighbours) beside the pointers of its 3,358 rows needs 56.7 KiB, over the "
                                  "54.0 KiB one slice may take; counting 2 parts, whose slices fit"]
