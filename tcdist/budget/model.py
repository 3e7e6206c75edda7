"""The one memory model: the bytes each step of a count takes, from sizes alone, so that a plan
(how many parts, which slices, where to build a graph) is made before anything is allocated.

A part on the counting device holds its CSR (rowptr int64, col int32 or int64), the structural
check's temporaries (a comparison per row, a flag per column) and the kernel's per-row output;
a kernel's own memory (bitmaps, tables) comes on top, given by the kernel (Kernel.extra_bytes).
"""

CHECK_BYTES_PER_ROW = 9   # the structural check: a comparison per row (and slack)
CHECK_BYTES_PER_EDGE = 2  # and a flag per column (row starts), the order compared a sixteenth at a time
KERNEL_BYTES_PER_LOCAL = 48  # the kernel's row lengths, masks, the scans behind its row lists, the lists
BUILD_BYTES_PER_EDGE = 64  # building a graph on the host, per raw edge: the pairs, packed keys and their sort, ids, CSR
GENERATED_BYTES_PER_EDGE = 48  # generating one on the host: src and dst (int64) and the draws they are made from
# On a GPU, measured peaks (the allocator's high-water mark, tests/budget/test_estimates.py; RMAT-22
# to RMAT-25 on an H200: build 33.8 bytes per raw edge with its ids dense, generation 16 + 58.5 per
# edge of the draw block):
GPU_BUILD_BYTES_PER_EDGE = 56  # the raw pairs with the build: 34 with ids dense, 50 sparse (their ends sorted)
GPU_BUILD_BYTES_PER_VERTEX = 40  # and per vertex: ids, degrees, the rank order and its sort (38 measured)
GPU_GENERATED_BYTES_PER_EDGE = 16  # src and dst (int64)
GPU_DRAW_BYTES_PER_EDGE = 64  # and per edge of the block being drawn: the draws and the bits made of them
GPU_GENERATED_BYTES_PER_ID = 56  # and per vertex permuted: RMAT's vertex permutation, its draws and their sort
GPU_PERMUTATION_BYTES_PER_ID = 32  # the permutation's draws (their mix's temporaries), where the host sorts them
PIECES_BYTES_PER_EDGE = 18  # a generated graph built from its pieces (graph/pieces_build.py): its keys and their sort
PIECES_BYTES_PER_ID = 48  # and per id below the ids' bound: ids present, their places, degrees, rank order
PIECE_BYTES_PER_EDGE = 80  # and per raw edge of the one piece being drawn and packed: its draws, ids and keys
PIECES_STEP_BYTES_PER_KEY = 48  # and per key of the step being renumbered: both ends' ids and places
RANGES_BYTES_PER_KEY = 64  # a graph built in ranges (graph/ranges_build.py): a range's keys, their sort, ends, ranks
#                            and the next range's keys on their way up
HOST_RANGE_BYTES_PER_KEY = 48  # a range of a graph drawn again on the host's cores: its keys, their sort and what
#                                makes them distinct (35-42 measured on RMAT-18)
RANGES_BYTES_PER_ID = 16  # and per id below the ids' bound: degrees, then ranks and row lengths
RANGES_HELD_BYTES_PER_EDGE = 8  # and per raw edge of a piece: its sorted keys, held while the next piece is drawn
GPU_RANK_BYTES_PER_ID = 48  # ranking the ids on the GPU between ranges: degrees, ids, rank keys and their sort
RANGES_HOST_BYTES_PER_EDGE = 24  # and on the host: the sorted runs, the distinct keys, the columns (int64 or int32)
RANGES_HOST_BYTES_PER_ID = 64  # and per id: degrees, ids, ranks and their sort where ranked there, row pointers
PARSE_BYTES_PER_TEXT_BYTE = 6  # a text block's parse on the host at its peak beyond its pairs, per byte of the
#                                block: the compiled parser's scratch and the buffers read ahead (4.7 measured)
SMALL_PARSE_BYTES_PER_TEXT_BYTE = 24  # and a small block's in whole-array NumPy, before Numba is loaded (22)
REDRAWN_HOST_BYTES_PER_ID = 16  # a graph built drawn again (graph/redrawn_build.py), on the host beside its
#                                 CSR, per id: the rank order, a range plan's counts
RANKS_AGAIN_BYTES_PER_ID = 56  # a rank's rows built drawn or read again (ranks/redrawn_rows.py), per id: its
#                                counts and their sums over the ranks, degrees, rank order, a range's degrees and
#                                RMAT's vertex permutation
RANKS_AGAIN_BYTES_PER_KEY = 32  # and per key of a range at the rank that makes it distinct: received, distinct, ends
RANKS_AGAIN_BYTES_PER_EDGE = 12  # and per raw edge of its share: its rows (a column each, at most) and their pointers
GPU_PART_BUILD_BYTES_PER_EDGE = 8  # building a part on the GPU (partition/gpu_parts.py): its columns (int64 at most)
GPU_PART_BUILD_BYTES_PER_VERTEX = 80  # and per vertex: what the builder holds between parts (a vertex's part, its
#                                       group's masks: 16) and a part's build takes before its columns, a part of
#                                       n rows at most (flags, the selections, global and new ids, each row's kept
#                                       edges and locals, row pointers: 64)
TWO_AT_ONCE = 2  # parts on a GPU together: the next one's copy overlaps the count of this one
ALONE = 0.75  # of the budget, what a slice with no room for the next beside it may take


def csr_bytes(v_res: int, e_res: int, n_local: int, col_bytes: int) -> int:
    """Bytes of a part's arrays (rowptr and col) alone."""
    return 8 * (v_res + 1) + col_bytes * e_res


def need(v_res: int, e_res: int, n_local: int, col_bytes: int, kernel_bytes: int = 0) -> int:
    """Bytes a part of v_res rows, e_res columns and n_local local rows needs on the device, with
    kernel_bytes of the kernel's own (sizes may be arrays: every vertex's own part at once)."""
    return (csr_bytes(v_res, e_res, n_local, col_bytes) + CHECK_BYTES_PER_ROW * (v_res + 1)
            + CHECK_BYTES_PER_EDGE * e_res + KERNEL_BYTES_PER_LOCAL * n_local + kernel_bytes)


def gpu_part_build_bytes(vertices: int, edges: int) -> int:
    """Bytes building one LSTC part of a graph lying on a GPU takes there, beside the graph."""
    return GPU_PART_BUILD_BYTES_PER_EDGE * edges + GPU_PART_BUILD_BYTES_PER_VERTEX * vertices


def gpu_stream_bytes(vertices: int, buffers: int) -> int:
    """Bytes building LSTC parts of a graph in host memory on a GPU takes there before a part's
    columns, with buffers bytes of the rows streamed."""
    return GPU_PART_BUILD_BYTES_PER_VERTEX * vertices + buffers


def edges_build_on_gpu(raw: int, room: int) -> bool:
    """Whether an edge list of raw edges is moved to a GPU with room bytes free to be built there
    (its vertices are not known yet: a build that runs out of memory there goes on on the host)."""
    return GPU_BUILD_BYTES_PER_EDGE * raw < room


def gpu_build_bytes(raw: int, vertices: int) -> int:
    """Bytes building a graph of raw edges (given on the GPU) and at most vertices ids takes on a GPU."""
    return GPU_BUILD_BYTES_PER_EDGE * raw + GPU_BUILD_BYTES_PER_VERTEX * vertices


def gpu_generated_bytes(raw: int, permuted: int, block: int) -> int:
    """Bytes generating raw edges on a GPU takes, drawn block edges at a time, their ids through a
    permutation of permuted vertices (RMAT's; 0 for none)."""
    return (GPU_GENERATED_BYTES_PER_EDGE * raw + GPU_DRAW_BYTES_PER_EDGE * min(block, raw)
            + GPU_GENERATED_BYTES_PER_ID * permuted)


def pieces_build_bytes(raw: int, span: int, piece: int, step: int) -> int:
    """Bytes building a generated graph from its pieces takes: raw edges, ids below span, pieces of
    piece raw edges, keys renumbered step at a time."""
    return (PIECES_BYTES_PER_EDGE * raw + PIECES_BYTES_PER_ID * span + PIECE_BYTES_PER_EDGE * min(piece, raw)
            + PIECES_STEP_BYTES_PER_KEY * min(step, raw))
