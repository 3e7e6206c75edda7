"""One process that tries many damaged inputs in a row (run by test_fuzz.py).

    python fuzz_child.py KIND ORIGINAL SEED CASES WORKDIR [BACKEND]

KIND is store, graph, text, mtx (a Matrix Market file's entries damaged, its banner and size line
kept) or gzip (ORIGINAL's compressed bytes damaged, read by the parallel inflater in even cases, by
the one-stream one in odd ones). Each case damages a copy of
ORIGINAL, runs `tcdist count` on it in this process and prints one JSON line: the case, the exit
status, the count and stderr.
BACKEND (cpu unless given) is the count's: on gpu, a graph file is moved to the GPU and checked
there, and text is parsed there. The parent judges them; a crash of this process shows as missing lines.
"""

import gzip
import io
import json
import random
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from tcdist import compiled
from tcdist.cli import main
from tcdist.io import grammar

SMALL_BLOCK_BYTES = grammar.SMALL_BLOCK_BYTES

ALPHABET = b"0123456789 \t,\n\r#%-+x.\x00\xff"
BOMS = {"utf-8": b"\xef\xbb\xbf", "utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff", "utf-32-le": b"\xff\xfe\x00\x00",
        "utf-32-be": b"\x00\x00\xfe\xff"}


def damage(kind, data, rng):
    data = bytearray(data)
    actions = {"text": ["flip", "flip", "truncate", "splice", "bom"], "mtx": ["flip", "flip", "truncate", "splice"]}
    action = rng.choice(actions.get(kind, ["flip", "flip", "truncate"]))
    if action == "bom":  # a mark before a line, the comment or an edge, of the text as it is or gzipped
        name = rng.choice(sorted(BOMS))
        starts = [0] + [k + 1 for k, byte in enumerate(data) if byte == 10]
        return BOMS[name] + bytes(data[rng.choice(starts):]), f"bom {name}" + (" gzip" if rng.random() < 0.5 else "")
    if action == "truncate":
        return bytes(data[: rng.randrange(len(data))]), action
    if action == "splice":
        at = rng.randrange(len(data) + 1)
        return bytes(data[:at] + bytes(rng.choice(ALPHABET) for _ in range(rng.randint(1, 6))) + data[at:]), action
    for _ in range(rng.randint(1, 3)):
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    return bytes(data), action


def main_loop(kind, original, seed, cases, workdir, backend="cpu"):
    rng = random.Random(seed)
    data = Path(original).read_bytes()
    suffix = {"store": ".h5", "graph": ".h5", "text": ".txt", "mtx": ".mtx", "gzip": ".txt.gz"}[kind]
    head = data[: data.index(b"\n", data.index(b"\n") + 1) + 1] if kind == "mtx" else b""  # banner, size line
    for case in range(cases):
        if kind == "mtx":
            damaged, action = damage(kind, data[len(head):], rng)
            damaged = head + damaged
        else:
            damaged, action = damage(kind, data, rng)
        if kind == "gzip":
            from tcdist.io import gzipped

            gzipped.PARALLEL_FROM = 1 if case % 2 == 0 else 1 << 20
            action += " every core" if case % 2 == 0 else " one stream"
        if kind in ("text", "mtx"):  # even cases read as before Numba loads (whole-array NumPy), odd ones compiled
            compiled.is_loaded = lambda: False
            grammar.SMALL_BLOCK_BYTES = SMALL_BLOCK_BYTES if case % 2 == 0 else -1
        path = Path(workdir) / f"case{suffix}"
        path.write_bytes(gzip.compress(damaged) if action.endswith("gzip") else damaged)
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = main(["count", str(path), "--backend", backend, "--json", "--threads", "1"])
        triangles = json.loads(out.getvalue())["triangles"] if code == 0 else None
        print(json.dumps({"case": case, "action": action, "code": code, "triangles": triangles,
                          "stderr": err.getvalue(), "input": damaged.hex() if kind in ("text", "mtx", "gzip") else None}),
              flush=True)


if __name__ == "__main__":
    main_loop(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], *sys.argv[6:])
