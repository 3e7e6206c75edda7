"""A generated graph built from its pieces (8-byte keys, a piece of raw edges at a time) is the
graph build_graph makes of all its raw edges at once: every array and count."""

import pytest
from conftest import same_graph

import tcdist
from tcdist import io
from tcdist.graph import build_graph, pieces_build
from tcdist.io import generators


@pytest.mark.parametrize("spec", ["rmat:12", "rmat:10:40", "er:3000:50000", "er:50:4000", "rmat:16"])
@pytest.mark.parametrize("block, step", [(1 << 26, 1 << 26), (4096, 1000)])
def test_pieces_build_the_graph_build_graph_builds(monkeypatch, spec, block, step):
    monkeypatch.setattr(generators, "_DRAW_BLOCK", block)  # pieces of this many raw edges (and the draws' layout)
    monkeypatch.setattr(pieces_build, "STEP", step)
    reference = build_graph(io.generate(spec, seed=5))
    span, m, pieces = generators.pieces(spec, seed=5)
    same_graph(pieces_build.build_from_pieces(span, m, pieces, spec), reference)


def test_other_generators_have_no_pieces_bad_arguments_are_said_and_ids_that_do_not_pack_too():
    assert generators.pieces("grid:10:10") is None and generators.pieces("complete:10") is None
    assert pieces_build.packs(1 << 31) and not pieces_build.packs((1 << 31) + (1 << 30))
    for spec, usage in (("er:5:6:7", "er:N:M"), ("rmat:3:4:5", "rmat:SCALE")):
        with pytest.raises(tcdist.TcdistError, match=f"generator spec '{spec}': expected {usage}"):
            generators.pieces(spec)


def test_a_host_short_of_memory_for_the_raw_edges_builds_the_graph_from_its_pieces(monkeypatch):
    """Room for the pieces' build but not for the raw edges and their build: load_graph takes the
    pieces, times their drawing as generate and the rest as build, and gives the same graph."""
    from tcdist import source
    from tcdist.budget import model
    from tcdist.graph import pieces_build
    from tcdist.results import Timings

    for module, name in ((generators, "PIECE_EDGES"), (generators, "_DRAW_BLOCK"), (pieces_build, "STEP")):
        monkeypatch.setattr(module, name, 1 << 12)  # pieces and steps small beside the graph, as for a large one
    spec, raw = "rmat:14", io.spec_edges("rmat:14")
    reference = build_graph(io.generate(spec, seed=2))
    room = model.pieces_build_bytes(raw, 1 << 14, 1 << 12, 1 << 12)
    assert room < raw * (model.GENERATED_BYTES_PER_EDGE + model.BUILD_BYTES_PER_EDGE)
    monkeypatch.setattr(source.memory, "available", lambda: (room, "a test's room"))
    timings = Timings()
    same_graph(source.load_graph(spec, seed=2, timings=timings), reference)
    assert timings.generate > 0 and timings.build > 0 and timings.read == 0
    short = 10 * raw  # below the pieces' build, the raw edges' generation, and drawing them again
    assert short < min(room, model.GENERATED_BYTES_PER_EDGE * raw)
    monkeypatch.setattr(source.memory, "available", lambda: (short, "a test's room"))
    with pytest.raises(tcdist.TcdistError, match=r"building the graph of rmat:14 \(262,144 raw edges\)( with its "
                                                 r"columns on disk)? needs about .* but a test's room leaves"):
        source.load_graph(spec, seed=2)
