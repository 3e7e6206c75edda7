"""The command line: its commands (count, partition, info, convert, generate, kernels, list, warm-up) and how a run ends
(exit status, one line on stderr). The parser and its flags are flags.py; `python -m tcdist` too."""

import json
import os
import stat
import sys
import traceback

from tcdist import progress, report, signals
from tcdist.config import (
    DEFAULT_PRUNE,
    DEFAULT_SCHEME,
)
from tcdist.errors import TcdistError, options_named
from tcdist.flags import FLAGS, build_parser
from tcdist.ranks.stop import JobStop, end_job


def _write_json_file(args, record) -> None:
    if getattr(args, "json_file", None) is not None:
        from tcdist.io.write import write_text

        write_text(args.json_file, json.dumps(record) + "\n")


def _emit(args, record, lines, warnings=(), out=None, json_file=True):
    """What a command prints (and, unless the caller has, the --json-file it writes), once its files are in place."""
    from tcdist.io.write import stream_fd

    if json_file:
        _write_json_file(args, record)
    if getattr(args, "json_file", None) is not None and stream_fd(args.json_file) == 1:
        out = sys.stderr  # (standard output holds the --json-file record: one document)
    if not args.quiet:
        for w in warnings:
            print(f"tcdist: warning: {w}", file=sys.stderr)
    report.print_through(json.dumps(record) if args.json else "\n".join(lines), out or sys.stdout)


def cmd_count(args, comm):
    from tcdist.api import count_triangles
    from tcdist.io.per_edge import per_edge_kind, write_per_edge
    from tcdist.io.per_vertex import per_vertex_kind, write_per_vertex
    from tcdist.io.write import check_outputs, outputs_together, stream_fd
    from tcdist.ranks.guard import collective

    tables = {"per_vertex": per_vertex_kind, "per_edge": per_edge_kind}
    if args.plan:
        return _plan(args, comm)

    def check():  # every output, before any work
        check_outputs({"store": args.store, "json_file": args.json_file, "per_vertex": args.per_vertex,
                       "per_edge": args.per_edge},
                      inputs=[args.graph], streams=("json_file", *tables), kept=("store",))
        for option, kind in tables.items():
            path = getattr(args, option)
            if path is not None and stream_fd(path) is None:
                kind(path)

    collective(comm, check, root_only=True, debug=args.debug)
    r = count_triangles(args.graph, backend=args.backend, kernel=args.kernel, threads=args.threads,
                        parts=args.parts, scheme=args.scheme, prune=args.prune, seed=args.seed, store=args.store,
                        schedule=args.schedule, resume=args.resume, read=args.read,
                        per_vertex=args.per_vertex is not None, per_edge=args.per_edge is not None,
                        gpu_memory_limit=args.gpu_memory_limit,
                        host_memory_limit=args.host_memory_limit, comm=comm, ranks_per_gpu=args.ranks_per_gpu,
                        labels=args.labels, scratch=args.scratch, debug=args.debug)
    if comm.rank != 0:
        return 0
    record = r.to_dict()
    with outputs_together():  # a file that fails (a full disk) replaces none of the others
        if r.per_vertex is not None:
            write_per_vertex(r.per_vertex, args.per_vertex)
        if r.per_edge is not None:
            write_per_edge(r.per_edge, args.per_edge)
        _write_json_file(args, record)
    files = (args.per_vertex, args.per_edge)
    on_stdout = [path is not None and stream_fd(path) == 1 for path in files]
    shown = ("standard output" if out else path for out, path in zip(on_stdout, files))
    lines = [str(r.triangles)] if args.quiet else report.count_lines(r, *shown)
    # with a per-vertex or per-edge CSV on stdout, the summary goes to stderr: stdout stays one CSV
    _emit(args, record, lines, r.warnings, out=sys.stderr if any(on_stdout) else None, json_file=False)
    return 0


def _plan(args, comm):
    """`count --plan`: the plan, printed by rank 0 (its lines, or --json), nothing counted."""
    from tcdist.api import plan_count

    written = [flag for flag, given in (("--per-vertex", args.per_vertex), ("--per-edge", args.per_edge),
                                        ("--store", args.store)) if given is not None]
    if written:
        raise TcdistError(f"--plan counts nothing, and {written[0]} would write nothing: leave it out, or count "
                          "without --plan")

    planned = plan_count(args.graph, backend=args.backend, parts=args.parts, gpu_memory_limit=args.gpu_memory_limit,
                         host_memory_limit=args.host_memory_limit, scratch=args.scratch, read=args.read,
                         comm=None if comm.size == 1 else comm)
    if comm.rank != 0:
        return 0
    lines = planned.pop("lines")
    _emit(args, planned, [f"plan for {planned['source']}", *(f"  {line}" for line in lines)])
    return 0


def cmd_partition(args):
    from tcdist.api import Timings, partition

    timings = Timings()
    p = partition(args.graph, parts=args.parts, scheme=args.scheme or DEFAULT_SCHEME, prune=args.prune or DEFAULT_PRUNE,
                  seed=args.seed, output=args.output, force=args.force, backend=args.backend, timings=timings)
    stats = [{"part": i, **s} for i, s in enumerate(p.part_stats())]
    record = {"output": args.output, "graph": p.graph_name, "n": p.graph_n, "m": p.graph_m, "parts": p.num_parts,
              "scheme": p.scheme, "prune": p.prune, "seed": p.seed, "fingerprint": p.fingerprint,
              "part_stats": stats, "totals": p.totals(), "timings": timings.to_dict()}
    lines = [f"wrote {args.output}: {p.graph_name} in {p.num_parts} parts ({p.scheme}, prune {p.prune}, seed {p.seed})",
             f"time {report.seconds(timings.to_dict())}", "", *report.parts_table(stats, p.graph_n, p.graph_m)]
    _emit(args, record, lines)
    return 0


def _graph_info(args):
    from tcdist.api import Timings, load_graph

    timings = Timings()
    g = load_graph(args.graph, seed=args.seed, timings=timings, labels=args.labels)
    s = g.stats()
    d = s["degree"]
    record = {"name": g.name, "n": g.n, "m": g.m, "self_loops": g.self_loops, "duplicates": g.duplicates,
              "reciprocal": g.reciprocal, **s, "fingerprint": g.fingerprint(), "timings": timings.to_dict()}
    lines = [
        g.name,
        f"  vertices          {g.n:,}",
        f"  edges             {g.m:,}   ({report.cleaning(g)})",
        f"  degree            min {d['min']:,}  mean {d['mean']:.2f}  median {d['median']:g}  max {d['max']:,}",
        f"  wedges            {s['wedges']:,}",
        f"  max out-degree    {s['max_out_degree']:,}   (after (degree, id) orientation)",
        f"  oriented wedges   {s['oriented_wedges']:,}   (pairs in N+(u): the work of a counting kernel)",
        f"  fingerprint       {record['fingerprint']}",
    ]
    return record, lines, g.warnings


def _environment_info():
    from tcdist.environment import describe

    record = describe()
    width = max(map(len, record))
    return record, [f"{k:<{width}}  {v}" for k, v in record.items()], []


def _store_info(store):
    h = store.header
    stats = [{"part": i, **store.stats(i)} for i in range(store.num_parts)]
    record = {"path": store.path, **h, "part_stats": stats}
    lines = [f"{store.path}: partition store of {h['graph_name']}",
             f"  {h['parts']} parts, scheme {h['scheme']}, prune {h['prune']}, seed {h['seed']}, "
             f"graph fingerprint {h['fingerprint']}", "", *report.parts_table(stats, h["graph_n"], h["graph_m"])]
    return record, lines, []


def cmd_info(args):
    from tcdist.api import open_store_source

    store = open_store_source(args.graph) if args.graph else None
    if store is not None:
        with store:
            record, lines, warnings = _store_info(store)
    else:
        record, lines, warnings = _graph_info(args) if args.graph else _environment_info()
    _emit(args, record, lines, warnings)
    return 0


def cmd_convert(args):
    from tcdist.api import convert

    done = convert(args.graph, args.output, seed=args.seed)
    record = {"input": args.graph, "output": args.output, "n": done["n"], "m": done["m"], "bytes": done["bytes"]}
    _emit(args, record, [f"wrote {args.output}: {done['n']:,} vertices, {done['m']:,} edges, {done['bytes']:,} bytes"],
          done["warnings"])
    return 0


def cmd_generate(args):
    from tcdist.api import write_generated

    done = write_generated(args.spec, args.output, seed=args.seed)
    record = {"spec": args.spec, "seed": args.seed, "output": args.output, **done}
    _emit(args, record, [f"wrote {args.output}: {done['edges']:,} generated edges, {done['bytes']:,} bytes"])
    return 0


def cmd_kernels(args):
    from tcdist.count.registry import kernels
    from tcdist.device.gpu import problem

    gpu = problem()
    shown = [k for k in kernels().values() if k.backend == "cpu" or gpu is None]
    record = {"kernels": [{"name": k.name, "backend": k.backend, "summary": k.summary,
                           "options": [{"name": o.name, "choices": list(o.choices), "default": o.default,
                                        "help": o.help} for o in k.options]} for k in shown],
              "gpu": gpu or "usable"}
    lines = ["auto (the default): each part's kernel by a rule from measurements",
             *(line for k in shown for line in k.describe()),
             "", "choose one with --kernel NAME[:OPTION=VALUE,...]"]
    if gpu:
        lines[-2:-2] = [f"GPU kernels are not listed: {gpu}"]
    _emit(args, record, lines)
    return 0


def cmd_list(args):
    from tcdist.api import list_triangles
    from tcdist.io.write import stream_fd

    done = list_triangles(args.graph, args.output, seed=args.seed, labels=args.labels)
    record = {"input": args.graph, "output": args.output, **done}
    on_stdout = stream_fd(args.output) == 1  # the triangles are there: the summary goes to standard error
    _emit(args, record, [f"listed {done['triangles']:,} triangles to {args.output}"], done["warnings"],
          out=sys.stderr if on_stdout else None)
    return 0


def cmd_warm_up(args):
    from tcdist.api import warm_up

    done = warm_up(args.backend)
    gpu = f" and {done['gpu_kernel_instances']:,} GPU kernel instances" if done["gpu"] else ""
    lines = [f"compiled CPU functions{gpu} in {done['seconds']:.1f} s; kept in:",
             *(f"  {what}: {where}" for what, where in done["caches"].items())]
    _emit(args, done, lines)
    return 0


def _on_rank_zero(command):
    """Commands other than count are one process's work: under a launcher, rank 0 does it."""

    def run(args, comm):
        from tcdist.ranks.guard import collective

        return collective(comm, lambda: command(args), root_only=True, debug=args.debug)

    return run


def _exit_status(e: BaseException, args, rank: int, stop: JobStop | None) -> int:
    """The exit status of a run that ended in e, after its one line on stderr."""
    signum = e.signum if isinstance(e, signals.Stopped) else signals.received()
    if signum is not None:  # also another exception a signal caused (one raised inside a lock)
        if stop is None or stop.says:  # under ranks: rank 0 alone
            signals.say_stopped(signum)
        return 128 + signum
    if isinstance(e, BrokenPipeError):  # stdout closed early (| head): not an error of tcdist's
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + 13
    if not isinstance(e, (TcdistError, MemoryError)):
        raise e
    if args.debug:
        traceback.print_exc()
    if isinstance(e, MemoryError):
        said = f" ({str(e).rstrip('.')})" if str(e) else ""  # CuPy says how much, and under which limit
        print(f"tcdist: error: out of memory{said}; try a smaller graph, or count in more parts (--parts auto picks "
              f"them){signals.already_written()}", file=sys.stderr)
    elif rank == 0:  # errors are collective: every rank raised it, rank 0 says it once
        print(f"tcdist: error: {e}{signals.already_written()}", file=sys.stderr)
    return 2


def _refuse_unread_input(args, comm) -> None:
    """A graph piped or redirected in, with no GRAPH named, would go unread while tcdist answers for
    another (the embedded graph, the environment): refuse, and say how to read it. Not under a
    launcher, which may give rank 0 a pipe for standard input whatever the job reads."""
    from tcdist.ranks.comm import is_serial

    if getattr(args, "graph", "") is not None or not is_serial(comm):
        return
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):  # no standard input at all
        return
    if stat.S_ISFIFO(mode) or stat.S_ISREG(mode):
        raise TcdistError(f"standard input is a pipe or a file, but no GRAPH was named: to read it, name it as - "
                          f"(tcdist {args.command} - ...)")


FAILED_WAIT_S = 5  # a failed rank's wait for the others at the end: those stuck elsewhere, its exit ends

COMMANDS = {"count": cmd_count, "partition": _on_rank_zero(cmd_partition), "info": _on_rank_zero(cmd_info),
            "convert": _on_rank_zero(cmd_convert), "generate": _on_rank_zero(cmd_generate),
            "kernels": _on_rank_zero(cmd_kernels), "list": _on_rank_zero(cmd_list),
            "warm-up": _on_rank_zero(cmd_warm_up)}


def main(argv=None):
    # Numba's coloured errors make colorama write a colour reset to stdout at exit whenever stdout
    # is a terminal, which it is for every rank under Open MPI's mpirun (a pty): that broke --json.
    os.environ.setdefault("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", "1")
    args = build_parser().parse_args(argv)
    from tcdist.ranks.comm import SerialComm, launch_rank, launched_by_mpi, world

    comm = SerialComm()
    rank = launch_rank()
    signals.install()
    stop = None
    with options_named(FLAGS):  # the library's errors name the options as this command line's flags
        try:
            comm = world()
            signals.reclaim()  # (MPI_Init may have taken some)
            rank = comm.rank
            stop = JobStop(comm) if comm.size > 1 else None  # a signal to one rank stops every rank
            with signals.on_signal(stop.stop if stop else signals.end_when_stuck):
                progress.enable(rank == 0 and not (args.json or args.quiet))
                _refuse_unread_input(args, comm)
                code = COMMANDS[args.command](args, comm)
                if stop is not None:
                    stop.end_together()
                else:
                    signals.check()
            return code
        except BaseException as e:  # how it ended, by kind; anything else goes on as a traceback
            code = _exit_status(e, args, rank, stop)
            if stop is not None and signals.received() is None:  # the ranks whose work went on wait for this one
                stop.end_together(within=FAILED_WAIT_S)
            if stop is not None and signals.received() is not None:
                stop.stop(signals.received())  # the other ranks are told, if the watching thread has not yet
                stop.finish()  # ends the process once every rank has removed its temporaries
            if signals.received() is not None and launched_by_mpi():  # stopped before the stop could tell the
                signals.remove_temporaries()  # others: end without MPI_Finalize, and the launcher ends them
                end_job(code)
            return code
        finally:
            if stop is not None:
                stop.close()
            comm.Free()
