"""The command line's flags: the parser of ``tcdist count | partition | info | convert |
generate | kernels | warm-up``, the types of its values and its help. Library errors name options as FLAGS says."""

import argparse
import os
import re
import sys
import time

from tcdist import __version__
from tcdist.config import (
    BACKENDS,
    CSV_EDGE_COLUMNS,
    DEFAULT_PRUNE,
    DEFAULT_SCHEME,
    EDGE_LIST_SUFFIXES,
    HDF5_SUFFIXES,
    MTX_SUFFIXES,
    PRUNE_MODES,
    READERS,
    SCHEDULES,
    SCHEMES,
)
from tcdist.errors import OPTIONS, TcdistError
from tcdist.report import print_through

DESCRIPTION = f"""\
Exact triangle counting for graphs of up to billions of edges (LSTC: partitions that
need no communication while counting, one GPU per rank, an MPI reduce of the counts).

GRAPH is a file or a generator spec:
  files       SNAP/KONECT edge lists ({' '.join(EDGE_LIST_SUFFIXES)};
              '#'/'%' comments, extra columns ignored), Matrix Market coordinate files
              ({' '.join(MTX_SUFFIXES)}), tcdist HDF5 graphs ({' '.join(HDF5_SUFFIXES)}); any of the text formats may be
              gzip-compressed (.gz)
  generators  rmat:SCALE[:EDGEFACTOR]  er:N:M  grid:ROWS:COLS  complete:N  tripartite:A:B:C

Under an MPI launcher (mpirun -n R python -m tcdist count ..., srun, sbatch slurm/cluster.sh)
every rank reads its share of the graph and builds its rows of it (--read; or rank 0 reads it
alone), every rank binds one GPU (by its rank on its node), and the graph reaches every rank (its
GPU, a node's shared memory, a broadcast between nodes): each counts its share of the rows, or
builds and counts its own LSTC parts where the graph does not fit a GPU or parts are asked for.
Where rank 0's host cannot hold the graph (--host-memory-limit), no rank holds it whole: each
counts the part of its own rows and their out-neighbours' rows. The counts meet in an MPI reduce;
only rank 0 prints. Where a host's ranks outnumber
its GPUs, one rank per GPU counts and the others wait (--ranks-per-gpu).

Exit status: 0 on success, 2 for bad input or options (one line on stderr), 1 when a rank
fails for another reason, 128+N when ended by signal N."""


_USAGE_ERROR_WAIT_S = 1  # seconds a rank other than 0 leaves rank 0 to say a usage error
_GRAPH_HELP = "file, generator spec or - for standard input (default: embedded ego-Facebook)"
_EDGE_LIST_OUT = (f"a text edge list ({' '.join(EDGE_LIST_SUFFIXES)}; .csv is comma-separated with a header "
                  f"row {','.join(CSV_EDGE_COLUMNS)}, the others tab-separated; .gz to compress)")
FLAGS = {name: "--" + name.replace("_", "-") for name in OPTIONS}  # how the library's errors name options here


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one line and exit status 2, like every other error, and
    which takes no abbreviated option (--part for --parts): an option added later cannot change
    what a script's abbreviation meant."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, allow_abbrev=False, **kwargs)

    def error(self, message):
        from tcdist.ranks.comm import launch_rank, launched_by_mpi

        if launch_rank() == 0:  # every rank parses the same arguments: say it once
            sys.stderr.write(f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        elif launched_by_mpi():
            # Leave rank 0 a moment to say it: a launcher that sees a rank fail kills the others, and
            # Open MPI's mpirun once killed rank 0 before it had (every rank has parsed by then: they
            # start alike). No MPI here: MPI_Init waits for every rank, and one may never start it (--help).
            time.sleep(_USAGE_ERROR_WAIT_S)
        raise SystemExit(2)

    def _print_message(self, message, file=None):
        """--help and --version written as a command's result is (argparse drops what it cannot write)."""
        if file is not sys.stdout:
            return super()._print_message(message, file)
        try:
            print_through(message.removesuffix("\n"), file)
        except BrokenPipeError:  # a reader that left (| head): as a command's exit status for it
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise SystemExit(128 + 13) from None
        except TcdistError as e:
            self.exit(2, f"tcdist: error: {e}\n")

    def parse_known_args(self, args=None, namespace=None):
        return super().parse_known_args(None if args is None else self._negative_values_joined(list(args)), namespace)

    def _negative_values_joined(self, args):
        """'--opt -1GiB' as '--opt=-1GiB': argparse would take -1GiB for an option, not for the value it is."""
        options = {s: a for a in self._actions for s in a.option_strings if s.startswith("--")}
        joined = []
        for i, arg in enumerate(args):
            if arg == "--":  # the rest are positionals
                return joined + args[i:]
            action = options.get(joined[-1]) if joined else None
            if action is not None and action.nargs is None and re.match(r"-\.?\d", arg) and arg not in options:
                joined[-1] = f"{joined[-1]}={arg}"
            else:
                joined.append(arg)
        return joined


def _integer(text):
    """An integer in ASCII digits (int() also takes any script's, ٤ for 4)."""
    if not re.fullmatch(r"[-+]?[0-9]+", text):
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer")
    return int(text)


def _positive(text):
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _parts(text):
    """A positive number of parts, or 'auto'."""
    return "auto" if text == "auto" else _positive(text)


def _size(text):
    from tcdist.budget.sizes import parse_size

    try:
        return parse_size(text)
    except TcdistError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _seed(text):
    value = _integer(text)
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"must be from 0 to 2^64-1, got {value}")
    return value


def _labels(p):
    p.add_argument("--labels", action="store_true",
                   help="GRAPH is a text edge list whose ids are names (alice bob): the first two fields of a line "
                        "are taken as written, and every output shows the names")


def _common(p, quiet="no progress bars or warnings"):
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout, no progress bars")
    p.add_argument("--quiet", "-q", action="store_true", help=quiet)
    p.add_argument("--debug", action="store_true", help="show a traceback when something fails")


def _partition_options(p, required):
    if required:
        p.add_argument("--parts", "-P", type=_positive, required=True, help="number of LSTC parts")
    else:
        p.add_argument("--parts", "-P", type=_parts, default=None,
                       help="number of LSTC parts, or auto: few whose largest part fits the memory budget, "
                            "chosen from the degrees (docs/memory.md) [1: the whole graph]")
    p.add_argument("--scheme", choices=list(SCHEMES), default=None,
                   help="vertex partitioning: random, contiguous (chunks of the rank order) or metis "
                        f"[{DEFAULT_SCHEME}]")
    p.add_argument("--prune", choices=list(PRUNE_MODES), default=None,
                   help="what a part keeps: lstc (Algorithm 2), none (the induced subgraph) or minimal (what a "
                        f"local triangle uses; docs/counting.md) [{DEFAULT_PRUNE}]")
    p.add_argument("--seed", type=_seed, default=0, help="seed for generators and random partitions, 0 to 2^64-1 [0]")


def _writes(p, out_help: str, seed_help: str) -> None:
    """-o OUT, --seed and the common flags of a command that writes a file."""
    p.add_argument("-o", "--output", required=True, metavar="OUT", help=out_help)
    p.add_argument("--seed", type=_seed, default=0, help=seed_help)
    _common(p)


def build_parser():
    parser = _Parser(prog="tcdist", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"tcdist {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser,
                                help="one of these; tcdist COMMAND --help says its options")
    sub.required = True

    count = sub.add_parser("count", help="count the triangles of a graph",
                           description="Count triangles exactly. With no GRAPH, counts the embedded "
                                       "ego-Facebook graph (1,612,010 triangles). Under mpirun/srun with R ranks, "
                                       "each rank that counts (one per GPU, see --ranks-per-gpu; every rank with "
                                       "--backend cpu) counts its share: of the rows of the whole graph where it "
                                       "fits every rank's device, else of slices of it from host memory, or (with "
                                       "--parts, or where no slice fits) of LSTC parts, each built by the rank that "
                                       "counts it; the counts are reduced.")
    count.add_argument("graph", nargs="?", metavar="GRAPH", help=_GRAPH_HELP)
    count.add_argument("--backend", default=BACKENDS[0],
                       help="auto (GPU when CuPy and a device are present), cpu or gpu [auto]")
    count.add_argument("--kernel", metavar="NAME[:OPTION=VALUE,...]",
                       help="counting kernel and its options; `tcdist kernels` lists them [auto]")
    count.add_argument("--threads", type=_positive, help="CPU threads for the CPU kernels [all cores]")
    _partition_options(count, required=False)
    count.add_argument("--store", metavar="FILE",
                       help="partition store to reuse if it holds this partitioning, else to write; its counted "
                            "parts are journalled in FILE.journal/ (docs/counting.md) [none]")
    count.add_argument("--schedule", choices=list(SCHEDULES), default=SCHEDULES[0],
                       help="which rank counts which part: static (heaviest part to the least loaded rank, by each "
                            "part's estimated work) or dynamic (an idle rank takes the next part) [static]")
    count.add_argument("--read", choices=list(READERS), default=READERS[0],
                       help="who reads GRAPH under several ranks: ranks (each its share), root (rank 0 alone) or "
                            "auto (by the input, the device and the hosts; docs/ranks.md) [auto]")
    count.add_argument("--ranks-per-gpu", type=_positive, default=1, metavar="N",
                       help="of a host's ranks bound to one GPU, how many count on it, the others waiting; more "
                            "than one pays off only under NVIDIA MPS (docs/ranks.md) [1]")
    count.add_argument("--resume", action="store_true",
                       help="count only the parts that the journal of the store does not hold yet, after a failed "
                            "run (docs/counting.md)")
    count.add_argument("--json-file", metavar="FILE",
                       help="also write the --json record to FILE (- or /dev/stdout, /dev/stderr, /dev/fd/N: "
                            "written to that stream)")
    count.add_argument("--gpu-memory-limit", metavar="SIZE", type=_size,
                       help="the most tcdist allocates on the GPU (e.g. 4GiB): parts and slices are sized to it "
                            "(docs/memory.md) [nine tenths of the free memory]")
    count.add_argument("--host-memory-limit", metavar="SIZE", type=_size,
                       help="host memory one process may take beyond its code, or under ranks what of the graph "
                            "a host's ranks may hold (e.g. 8GiB; docs/memory.md) [all free]")
    count.add_argument("--scratch", metavar="DIR",
                       help="where what host memory cannot hold (a graph's columns, a rank's part or share) is "
                            "written while counted, on each rank's host (docs/memory.md) [TMPDIR]")
    count.add_argument("--plan", action="store_true",
                       help="print where the graph would be built and lie (host, GPU, disk; bytes) and how it would "
                            "be counted, then stop: nothing is counted (docs/memory.md)")
    count.add_argument("--per-vertex", metavar="FILE",
                       help="also write each vertex's triangles and clustering coefficient to FILE (.csv, "
                            ".parquet, .h5; - for standard output; docs/counting.md)")
    count.add_argument("--per-edge", metavar="FILE",
                       help="also write the triangles each edge is in to FILE (.csv, .parquet, .h5; - for "
                            "standard output; docs/outputs.md)")
    _labels(count)
    _common(count, quiet="print the number of triangles alone (with --json, the record alone): no summary, "
                         "progress bars or warnings")

    part = sub.add_parser("partition", help="partition a graph into an HDF5 partition store",
                          description="LSTC workload partitioning: every vertex gets a part; each part holds its "
                                      "local vertices, the proxies they need and the edges between them, so parts "
                                      "are counted independently. Writes OUT.h5 for `tcdist count OUT.h5`.")
    part.add_argument("graph", nargs="?", metavar="GRAPH", help=_GRAPH_HELP)
    part.add_argument("-o", "--output", required=True, metavar="OUT.h5", help="the partition store to write")
    part.add_argument("--force", action="store_true",
                      help="replace OUT.h5 even when it is not a store of this graph (never an input file; "
                           "docs/outputs.md)")
    part.add_argument("--backend", default=BACKENDS[0],
                      help="where the graph and its parts are built: auto (a GPU where CuPy and a device are "
                           "present and they fit it), cpu or gpu [auto]")
    _partition_options(part, required=True)
    _common(part)

    info = sub.add_parser("info", help="graph or partition-store statistics; the environment with no GRAPH",
                          description="With GRAPH: vertices, edges, degrees, wedges and the largest out-degree "
                                      "after orientation. With a partition store: the statistics of every part "
                                      "(LSTC Tables 3-4). Without: versions, threads, GPUs and MPI.")
    info.add_argument("graph", nargs="?", metavar="GRAPH",
                      help="file, partition store, generator spec or - for standard input (none: the environment)")
    info.add_argument("--seed", type=_seed, default=0, help="seed for generator specs [0]")
    _labels(info)
    _common(info)

    convert = sub.add_parser("convert", help="convert a graph to tcdist HDF5 (or a clean edge list)",
                             description="Read, clean and orient GRAPH once and write it as OUT: an .h5 file "
                                         "(tcdist's binary CSR, much faster to read than text) or "
                                         f"{_EDGE_LIST_OUT} of the clean edges in original ids.")
    convert.add_argument("graph", metavar="GRAPH", help="file, generator spec or - for standard input")
    convert.add_argument("output", metavar="OUT", help="the file to write: .h5, or a text edge list by its suffix")
    convert.add_argument("--seed", type=_seed, default=0, help="seed for generator specs [0]")
    _common(convert)

    generate = sub.add_parser("generate", help="write a synthetic graph",
                              description=f"Write the edges of a generator spec to OUT: {_EDGE_LIST_OUT} "
                                          "of the raw generated edges, duplicates included, as Graph500 makes them, "
                                          "or an .h5 graph (cleaned and oriented).")
    generate.add_argument("spec", metavar="SPEC",
                          help="rmat:SCALE[:EDGEFACTOR] er:N:M grid:ROWS:COLS complete:N tripartite:A:B:C")
    _writes(generate, "the file to write: .h5, or a text edge list by its suffix", "random seed [0]")

    listed = sub.add_parser("kernels", help="the counting kernels this machine can run, with their options",
                            description="List the kernels --kernel takes on this machine: the CPU's, and the GPU's "
                                        "where CuPy and a CUDA device are usable (else it says why they are not "
                                        "listed), each with its options, their values and defaults.")
    _common(listed)

    listing = sub.add_parser("list", help="write every triangle of a graph to a file",
                             description="List every triangle of GRAPH once, as u,v,w with u < v < w in the "
                                         "input's own ids, to OUT (.parquet or .csv; - for CSV on standard "
                                         "output), written block by block, so a listing larger than memory is "
                                         "written whole. The number listed is checked against a count.")
    listing.add_argument("graph", nargs="?", metavar="GRAPH", help=_GRAPH_HELP)
    _writes(listing, ".parquet or .csv file, or - for CSV on standard output", "seed for generator specs [0]")
    _labels(listing)

    warm = sub.add_parser("warm-up", help="compile every kernel into the caches, so that no run compiles",
                          description="Compile tcdist's CPU functions (Numba) and, where a GPU is usable, every CUDA "
                                      "kernel instance and the passes of a build, into the caches that later "
                                      "runs load them from: run it once after installing, on each kind of GPU. The "
                                      "caches are Numba's ($XDG_CACHE_HOME/tcdist/numba, else "
                                      "~/.cache/tcdist/numba, or NUMBA_CACHE_DIR) and CuPy's (CUPY_CACHE_DIR, else "
                                      "~/.cupy/kernel_cache); TCDIST_CACHE_DIR sets both, e.g. to a folder every node "
                                      "of a cluster shares.")
    warm.add_argument("--backend", default=BACKENDS[0], help="auto (the GPU too when one is usable), cpu or gpu [auto]")
    _common(warm)
    return parser
