"""Synthetic graphs, deterministic for a given seed: ``NAME:ARG[:ARG...]`` specs."""

from __future__ import annotations

import re

import numpy as np

from tcdist import compiled, progress
from tcdist.budget import host as memory
from tcdist.budget import model
from tcdist.errors import TcdistError
from tcdist.graph.edges import EdgeList
from tcdist.io import draws
from tcdist.xp import reserve_sort

RMAT_ABC = (0.57, 0.19, 0.19)  # Graph500: d = 0.05
_PIECE = 1 << 24  # the host makes RMAT's edges this many at a time, for the progress bar
ARRAYS_UP_TO = 1 << 22  # edges a graph's host draws make in whole-array NumPy while Numba is not loaded
# (RMAT-16's million: 0.5 s on 2 cores, against 5 s of a first run's compiling, or loading it)


class _Random:
    """Counter-based random numbers: splitmix64 of (seed, index), integer arithmetic only.

    The same spec and seed give the same graph on any NumPy version and on CuPy, because
    nothing depends on a library's generator stream, nor on how much a device makes at a time
    (each value is found by its position, so the host's and a GPU's pieces of different sizes
    draw the same graph).
    """

    _GOLDEN = draws.GOLDEN

    def __init__(self, xp, seed, edges: int = 0):
        """edges: how many the graph drawn has, which decides how the host draws (compiled, or in
        whole arrays as a GPU does, for a small graph while Numba is not loaded)."""
        self.xp = xp
        self.compiled = xp is np and (edges > ARRAYS_UP_TO or compiled.is_loaded())
        with np.errstate(over="ignore"):
            self._key = self._mix(np.uint64(seed % 2**64) * self._GOLDEN)
        self._drawn = 0

    @staticmethod
    def _mix(z):
        with np.errstate(over="ignore"):  # uint64 arithmetic wraps by design
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))

    def raw(self, size):
        """size uniform uint64 values, the next ones of this seed's sequence."""
        values = self.at(self._drawn, size)
        self._drawn += size
        return values

    def at(self, first, size):
        """size uniform uint64 values from position first of this seed's sequence (not drawn:
        raw() goes on where it was; skip() draws them)."""
        if self.compiled:
            return draws.raw(self._key, first, size)
        return self.values(self.xp.arange(first, first + size, dtype=np.uint64))

    def values(self, positions):
        """The values at these positions (uint64) of this seed's sequence."""
        with np.errstate(over="ignore"):
            return self._mix((positions + np.uint64(1)) * self._GOLDEN + self._key)

    def skip(self, size) -> int:
        """Draw size values without making them: the position of the first (for at())."""
        self._drawn += size
        return self._drawn - size

    def integers(self, high, size):
        if self.compiled:
            return draws.below(self._key, self.skip(size), size, np.uint64(high))
        return (self.raw(size) % np.uint64(high)).astype(np.int64)

    def permutation(self, n):
        keys = self.raw(n)
        if self.xp is np:
            order = draws.stable_order(keys) if self.compiled else np.argsort(keys, kind="stable")
        else:
            try:
                reserve_sort(keys, copies=4)  # the order, a copy of the keys, and the sort's copies of both
                order = self.xp.argsort(keys)  # CuPy's is stable
            except MemoryError:  # (CuPy's OutOfMemoryError, under a memory limit) the host's, the same order
                keys = keys.get()
                order = self.xp.asarray(draws.stable_order(keys))
        return order.astype(np.int64, copy=False)


_ONE = 1 << 24  # RMAT draws two 24-bit uniforms from each 64-bit value
PIECE_EDGES = 1 << 26  # raw edges of a piece (pieces()): RMAT's draw block
_DRAW_BLOCK = PIECE_EDGES  # RMAT's draws go level by level over blocks of this many edges (the GPU's piece)


def _rmat_plan(scale, edge_factor, seed, xp):
    """What every piece of an RMAT graph is drawn from: (edges, the random stream, the first
    draw, the vertex permutation, the cuts)."""
    if not 1 <= scale <= 40:
        raise TcdistError(f"rmat: scale must be 1..40, got {scale}")
    rng = _Random(xp, seed, edge_factor << scale)
    a, b, c = RMAT_ABC
    row_cut = np.uint64(round((a + b) * _ONE))  # row bit 1 with probability c + d
    col_cut = (np.uint64(round(a / (a + b) * _ONE)), np.uint64(round(c / (1 - a - b) * _ONE)))
    m = edge_factor << scale
    first = rng.skip(m * scale)  # edge b + j of the block from b, at a level: draw b * scale + level * block + j
    perm = rng.permutation(1 << scale)
    if xp is np and scale < 31:
        perm = perm.astype(np.int32)  # the host's gathers from it miss half as much cache
    return m, rng, first, perm, (row_cut, *col_cut)


def _rmat_piece(scale, plan, lo, src, dst):
    """RMAT's edges lo.. (as many as src holds) into src and dst: compiled on the host, one CUDA
    pass on a GPU (cuda/passes.cu), the same draws."""
    m, rng, first, perm, (row_cut, *col_cut) = plan
    if rng.xp is np and not rng.compiled:
        _rmat_arrays(scale, plan, lo, src, dst)
        return
    if rng.xp is np:
        draws.rmat(rng._key, first, scale, m, _DRAW_BLOCK, np.array([row_cut, *col_cut], np.uint64), perm, lo, src,
                   dst)
        return
    from tcdist.cuda import launch
    from tcdist.cuda.build import PASSES

    launch.grid_stride(PASSES, "rmat_edges", src.size, rng._key, np.int64(first), np.int32(scale), np.int64(m),
                       np.int64(_DRAW_BLOCK), row_cut, *col_cut, perm, np.int64(lo), np.int64(src.size), src, dst)


def _rmat_arrays(scale, plan, lo, src, dst):
    """_rmat_piece's draws in whole-array NumPy, level by level (draws.rmat's positions and cuts)."""
    m, rng, first, perm, (row_cut, *col_cut) = plan
    edge = np.arange(lo, lo + src.size, dtype=np.int64)
    start = edge // _DRAW_BLOCK * _DRAW_BLOCK
    size = np.minimum(m, start + _DRAW_BLOCK) - start
    at = (first + start * scale + edge - start).astype(np.uint64)
    s, d = np.zeros(src.size, np.int64), np.zeros(src.size, np.int64)
    for level in range(scale):
        bits = rng.values(at + (level * size).astype(np.uint64))
        row = (bits >> draws._HIGH24) >= row_cut
        s |= row.astype(np.int64) << level
        d |= ((bits & draws._LOW24) >= np.where(row, col_cut[1], col_cut[0])).astype(np.int64) << level
    src[:], dst[:] = perm[s], perm[d]


def rmat(scale, edge_factor=16, *, seed=0, xp=np):
    """Graph500 Kronecker/RMAT: 2^scale vertices, edge_factor * 2^scale edges, vertices permuted."""
    plan = _rmat_plan(scale, edge_factor, seed, xp)
    m = plan[0]
    src = xp.empty(m, np.int64)
    dst = xp.empty(m, np.int64)
    piece = _PIECE if xp is np else _DRAW_BLOCK  # on a GPU a draw block at a time
    with progress.bar(m, f"generate rmat:{scale}", "edges", True) as bar:
        for lo in range(0, m, piece):
            hi = min(m, lo + piece)
            _rmat_piece(scale, plan, lo, src[lo:hi], dst[lo:hi])
            bar.update(hi - lo)
    return src, dst


def erdos_renyi(n, m, *, seed=0, xp=np):
    """m edges with endpoints drawn uniformly from n vertices (TRICORE's 'RD' graphs)."""
    if n < 1:
        raise TcdistError(f"er: N must be at least 1, got {n}")
    if xp is np:
        rng = _Random(xp, seed, m)
        return rng.integers(n, m), rng.integers(n, m)
    src, dst = xp.empty(m, np.int64), xp.empty(m, np.int64)
    # a block's draws at a time
    for lo, (s, d) in zip(range(0, m, _DRAW_BLOCK), _er_pieces(n, m, seed, xp, _DRAW_BLOCK)):
        src[lo : lo + s.size], dst[lo : lo + d.size] = s, d
    return src, dst


def pieces(spec: str, *, seed: int = 0, xp=np, size: int | None = None, within: tuple[int, int] | None = None):
    """(ids' bound, raw edges, an iterator of (src, dst) pieces) of an rmat or er spec: the edges
    generate() makes, in order, size at a time (by default a draw block), each piece made only
    when it is due (so a device holds one piece, not the graph's raw edges; nothing is drawn
    before the first); None for other specs. within: (lo, hi), only the edges lo..hi-1, drawn on
    their own (each value is found by its position; RMAT's permutation is drawn whole)."""
    size = _DRAW_BLOCK if size is None else size
    if size < 1:
        raise ValueError(f"pieces of {size} edges")
    parsed = _parsed(spec)
    if not parsed or parsed[0] not in ("rmat", "er"):
        return None
    kind, args = parsed
    if not (1 <= len(args) <= 2 if kind == "rmat" else len(args) == 2):
        raise TcdistError(f"generator spec '{spec}': expected {GENERATORS[kind][1]}")
    if kind == "rmat":
        scale, edge_factor = args[0], args[1] if len(args) > 1 else 16
        if not 1 <= scale <= 40:
            raise TcdistError(f"rmat: scale must be 1..40, got {scale}")
        return 1 << scale, edge_factor << scale, _rmat_pieces(scale, edge_factor, seed, xp, size, within)
    span, m = args
    if span < 1:
        raise TcdistError(f"er: N must be at least 1, got {span}")
    return span, m, _er_pieces(span, m, seed, xp, size, within)


def drawn_again(spec: str, *, seed: int = 0, size: int | None = None, within: tuple[int, int] | None = None):
    """pieces(spec, ...)'s pieces on the host as a function that draws them anew on each call, what
    they are all drawn from made once (RMAT's vertex permutation: held, 4 bytes an id)."""
    made = pieces(spec, seed=seed, size=size, within=within)  # (checked; nothing drawn)
    if made is None or _parsed(spec)[0] != "rmat":
        return lambda: pieces(spec, seed=seed, size=size, within=within)[2]
    scale = made[0].bit_length() - 1  # (its ids' bound is 2^scale, its edges edge_factor << scale)
    edge_factor = made[1] >> scale
    plan = _rmat_plan(scale, edge_factor, seed, np)
    return lambda: _rmat_pieces(scale, edge_factor, seed, np, _DRAW_BLOCK if size is None else size, within, plan)


def _rmat_pieces(scale, edge_factor, seed, xp, size, within, plan=None):
    plan = _rmat_plan(scale, edge_factor, seed, xp) if plan is None else plan
    first, last = _within(plan[0], within)
    for lo in range(first, last, size):
        src, dst = xp.empty(min(last, lo + size) - lo, np.int64), xp.empty(min(last, lo + size) - lo, np.int64)
        _rmat_piece(scale, plan, lo, src, dst)
        yield src, dst


def _er_pieces(n, m, seed, xp, size, within=None):
    rng = _Random(xp, seed, m)
    firsts = rng.skip(m), rng.skip(m)  # where generate()'s src and dst draws begin
    first, last = _within(m, within)
    for lo in range(first, last, size):
        yield tuple(_below(rng, at + lo, min(last, lo + size) - lo, n) for at in firsts)


def _within(m: int, within) -> tuple[int, int]:
    """The edges lo..hi of m a piece maker draws (within: (lo, hi), or None for all)."""
    lo, hi = (0, m) if within is None else within
    return min(lo, m), min(hi, m)


def _below(rng, first, size, high):
    """size integers below high from draw first on, as rng.integers() draws them there."""
    if rng.compiled:
        return draws.below(rng._key, first, size, np.uint64(high))
    return (rng.at(first, size) % np.uint64(high)).astype(np.int64)


def grid(rows, cols, *, seed=0):
    """Road-like 2-D grid with one diagonal per cell: degree <= 6, 2 (rows-1)(cols-1) triangles."""
    v = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    pairs = [(v[:, :-1], v[:, 1:]), (v[:-1, :], v[1:, :]), (v[:-1, :-1], v[1:, 1:])]
    return (np.concatenate([p.ravel() for p, _ in pairs]), np.concatenate([q.ravel() for _, q in pairs]))


def complete(n, *, seed=0):
    """K_n: C(n, 3) triangles."""
    src, dst = np.triu_indices(n, 1)
    return src.astype(np.int64), dst.astype(np.int64)


def tripartite(a, b, c, *, seed=0):
    """Complete tripartite K_{a,b,c}: a*b*c triangles."""
    parts = np.split(np.arange(a + b + c, dtype=np.int64), [a, a + b])
    src, dst = [], []
    for x, y in ((0, 1), (0, 2), (1, 2)):
        src.append(np.repeat(parts[x], parts[y].size))
        dst.append(np.tile(parts[y], parts[x].size))
    return np.concatenate(src), np.concatenate(dst)


GENERATORS = {
    "rmat": (rmat, "rmat:SCALE[:EDGEFACTOR]", "Graph500 RMAT, a=.57 b=.19 c=.19, edge factor 16"),
    "er": (erdos_renyi, "er:N:M", "M uniform random edges on N vertices"),
    "grid": (grid, "grid:ROWS:COLS", "grid with diagonals, 2(ROWS-1)(COLS-1) triangles"),
    "complete": (complete, "complete:N", "K_N, C(N,3) triangles"),
    "tripartite": (tripartite, "tripartite:A:B:C", "K_{A,B,C}, A*B*C triangles"),
}
_SPEC = re.compile(r"([a-z]+)((?::[0-9]+)+)")  # ASCII digits: \d and int() take any script's (٤ for 4)
_SPEC_LIKE = re.compile(r"([a-z]+)(:[^/]*)?")


def _edges_of_spec(kind, args):
    """How many raw edges a spec makes (for the memory estimate; 0 when the arguments are off)."""
    try:
        if kind == "rmat":  # a scale out of range is the generator's own error
            return (args[1] if len(args) > 1 else 16) << args[0] if 1 <= args[0] <= 40 else 0
        if kind == "er":
            return args[1]
        if kind == "grid":
            return 3 * args[0] * args[1]
        if kind == "complete":
            return args[0] * args[0] // 2
        if kind == "tripartite":
            a, b, c = args
            return a * b + a * c + b * c
    except (IndexError, ValueError, OverflowError):
        pass
    return 0


def _parsed(spec: str):
    """(generator name, its integer arguments) of a spec's form, or None; a number past int64 is refused."""
    match = _SPEC.fullmatch(spec)
    if not match:
        return None
    numbers = match.group(2)[1:].split(":")
    # ids and edge counts are int64 (and int() reads no more than 4,300 digits)
    if any(len(x.lstrip("0")) > 19 or int(x) >= 2**63 for x in numbers):
        raise TcdistError(f"generator spec '{spec}': its numbers must be below 2^63")
    return match.group(1), [int(x) for x in numbers]


def permuted(spec: str) -> int:
    """The vertices of the permutation a spec draws (RMAT's), 0 for others."""
    parsed = _parsed(spec)
    return 1 << parsed[1][0] if parsed and parsed[0] == "rmat" and 1 <= parsed[1][0] <= 40 else 0


def spec_edges(spec: str) -> int:
    """How many raw edges a spec makes (0 when it is not one), for memory estimates."""
    parsed = _parsed(spec)
    return _edges_of_spec(*parsed) if parsed else 0


def is_spec(text):
    """Whether text names a generator (``rmat:18``) rather than a file."""
    match = _SPEC.fullmatch(str(text))
    return bool(match) and match.group(1) in GENERATORS


def not_a_spec(name: str) -> str | None:
    """For a name that is no file but looks like a generator spec: what is wrong with it."""
    match = _SPEC_LIKE.fullmatch(name)
    if not match or (match.group(2) is None and match.group(1) not in GENERATORS):
        return None
    if match.group(1) in GENERATORS:
        return f"generator spec '{name}': expected {GENERATORS[match.group(1)][1]}"
    known = ", ".join(usage for _, usage, _ in GENERATORS.values())
    return f"'{name}' is no file and no generator spec (generators: {known})"


def generate(spec: str, *, seed: int = 0, xp=np) -> EdgeList:
    """The EdgeList a generator spec describes; rmat and er are computed with xp (NumPy or CuPy),
    the same edges either way."""
    parsed = _parsed(spec)
    if not parsed or parsed[0] not in GENERATORS:
        known = ", ".join(usage for _, usage, _ in GENERATORS.values())
        raise TcdistError(f"unknown generator spec '{spec}' (known: {known})")
    kind, args = parsed
    fn, usage, _ = GENERATORS[kind]
    if xp is np:
        memory.require(model.GENERATED_BYTES_PER_EDGE * _edges_of_spec(kind, args), f"generating '{spec}'",
                       "generate a smaller graph, or on a machine with more memory")
    try:
        src, dst = fn(*args, seed=seed, xp=xp) if fn in (rmat, erdos_renyi) else fn(*args, seed=seed)
    except TypeError:
        raise TcdistError(f"generator spec '{spec}': expected {usage}") from None
    except ValueError as e:
        raise TcdistError(f"generator spec '{spec}': {e}") from None
    except MemoryError as e:
        if xp is not np:
            raise  # a GPU short of memory: the caller goes another way
        raise TcdistError(f"generator spec '{spec}': {e}") from None
    return EdgeList(src, dst, spec)
