"""The parts a rank builds and counts itself from the graph every rank holds and the part of
every vertex (a run whose parts are built by the ranks: ranks/prepare.py, `_built_by_ranks`)."""

from __future__ import annotations

from types import SimpleNamespace

from tcdist import compiled, plan
from tcdist.budget import model
from tcdist.device import Device
from tcdist.errors import TcdistError
from tcdist.partition.build import ArrayPartBuilder
from tcdist.partition.host import PartBuilder, iter_parts_host
from tcdist.partition.part import Part
from tcdist.ranks.prepare import Prepared
from tcdist.xp import to_gpu


class OwnParts:
    """The parts a rank counts, built by the rank from the shared graph and the part of every
    vertex (LSTC's partitioner needs nothing else: no part crosses a rank). On a GPU where the
    graph, a part's build and two parts fit: the graph copied there once, each part built there in
    passes (partition/build.py) when it is due. On a GPU that cannot hold the graph but the
    builder's state and a part's build (plan.streaming_fits): each part built there when it is due,
    from the shared graph's rows streamed to it (partition/gpu_parts.py), none taken ahead; from
    the first part that does not fit beside the builder, the builder is given back and the host
    builds the rest. Else on the host: those of a static plan side by side ahead of their count,
    in the plan's order (a part built by a team of threads gains less from more of them than parts
    built beside each other: on 16 cores, a part of RMAT-25 took 3.4 s on 4 threads and 1.8 s on
    16); a dynamic queue's each when it is due."""

    builds = True  # (what the pipeline waits for is building, not reading)

    def __init__(self, shared, prepared: Prepared, device: Device, deliver=None):
        arrays, h = shared.arrays, prepared.header
        self._deliver = deliver  # each part built, as it is built: to the store rank 0 writes (ranks/gather.py)
        graph = SimpleNamespace(rowptr=arrays["rowptr"], col=arrays["col"], n=arrays["rowptr"].size - 1)
        self._partitioning = (graph, arrays["assignment"], h["parts"], h["prune"])
        self._reached = arrays.get("reached")  # each vertex's parts reached, made once by rank 0 (up to 64 parts)
        self._team = compiled.get_threads()  # this rank's threads, here where the count set them
        self._builder = self._plan = self._ahead = None
        graph_bytes = model.csr_bytes(graph.n, graph.col.size, graph.n, graph.col.itemsize)
        self._device = device if device.is_gpu and device.room() >= model.TWO_AT_ONCE * graph_bytes + graph_bytes + \
            model.gpu_part_build_bytes(graph.n, graph.col.size) else None
        self._fits = None if self._device is not None else plan.streaming_fits(device, graph)
        self._gpu, self._streamed = device, None  # (the streaming builder, made with the first part)
        self.ahead = self._fits is None  # two parts built and counted at once may not fit the GPU's budget

    def plan(self, indices) -> None:
        """The parts this rank will take, in that order (a static plan)."""
        self._plan = list(indices)

    def __getitem__(self, index: int) -> Part:
        part = self._built(index)
        if self._deliver is not None:
            self._deliver(part.on_host())
        return part

    def _built(self, index: int) -> Part:
        if self._device is not None:
            if self._builder is None:  # the graph copied to this rank's GPU with the first part
                graph, assignment, _, prune = self._partitioning
                with self._device.using():
                    rowptr, col, assignment = to_gpu([graph.rowptr, graph.col, assignment])
                    self._builder = ArrayPartBuilder(SimpleNamespace(rowptr=rowptr, col=col), assignment, prune)
            return self._builder.build(index)
        if self._fits is not None:
            part = self._streamed_part(index)
            if part is not None:
                return part
        if self._plan is not None:
            if self._ahead is None:
                self._ahead = iter_parts_host(*self._partitioning, indices=self._plan, threads=self._team,
                                              reached=self._reached)
            part = next(self._ahead)
            if part.index != index:
                raise TcdistError(f"internal error: part {index} asked for, part {part.index} built")
            return part
        if self._builder is None:  # what every part needs, made with the first
            self._builder = PartBuilder(*self._partitioning, reached=self._reached)
        return self._builder.build(index, self._team)

    def _streamed_part(self, index: int) -> Part | None:
        """Part index built on this rank's GPU from the graph's rows streamed there; None where it
        does not fit beside the builder: the builder given back, that part and the rest the host's."""
        from tcdist.partition.gpu_parts import StreamedParts

        with self._gpu.using():
            if self._streamed is None:
                self._streamed = StreamedParts(*self._partitioning, self._fits)
            part = self._streamed.build(index)
        if part is None:
            self._fits = None
            if self._plan is not None:
                self._plan = self._plan[self._plan.index(index):]
        elif self._plan is not None and index == self._plan[-1]:
            self.close()  # the builder's memory and the graph's pages let go of before its last part counts
        return part

    def close(self) -> None:
        """The streaming builder given back (its buffers, and the shared graph's pages it registered:
        before the window is unmapped); again, nothing."""
        if self._streamed is not None:
            with self._gpu.using():
                self._streamed.close()
