"""SNAP, KONECT and Graph Challenge edge lists: two integer ids per line, anything after ignored."""

from tcdist.graph.edges import EdgeList
from tcdist.io.text import NUMBER, data_lines, edge_problem, is_csv, read_pairs, show, split_lines

HEAD_BYTES = 1 << 16  # a header is looked for in the file's first 64 KiB


def _leading_lines(head):
    """(start, end, index, tokens) of the first lines of a block's head (its last line too when the
    file ends without a line end; not when the head is cut short of the block)."""
    lines = split_lines(head[:HEAD_BYTES])
    if len(head) > HEAD_BYTES and lines:
        lines.pop()  # may be cut
    for i, (start, raw, end) in enumerate(lines):
        yield start, end, i, next((t for _, t in data_lines(raw)), [])


def _starts_data(tokens):
    """An edge, or one written wrong as two numbers ('1.5 2', '-1 3', '1e3 7', '1,,3': the parser
    names what is wrong). Any other line before the first edge is a header ('source target', a lone
    vertex count, SNAP's '-1 (<FromNodeId> is a customer of <ToNodeId>)')."""
    ids = tokens[:2]
    return edge_problem(tokens) is None or (len(ids) == 2 and any(ids) and
                                            all(not t or NUMBER.fullmatch(t) for t in ids))


def header_rule(path, warnings):
    """Lines before the first edge that are not edges are skipped with one warning naming them; a
    head without an edge is a header where it holds one line (a file of a header alone: an empty
    graph), else names as ids, refused at its first line by the parse. header(head, partial=True)
    looks at a head that may stop short of the first block (whole lines): None where no edge is in
    it yet. A .csv's first line, when not an edge, is its header row: skipped without a warning."""
    csv = is_csv(path)

    def header(head, partial=False):
        skipped, first = [], None
        for line in _leading_lines(head):
            if line[3]:
                if _starts_data(line[3]):
                    first = line
                    break
                skipped.append(line)
        if first is None and partial:
            return None
        if first is not None:
            start, index = first[0], first[2]
        elif len(skipped) == 1:
            start, index = skipped[0][1], skipped[0][2] + 1
        else:
            return 0, 0
        if csv and [line[2] for line in skipped] == [0]:
            skipped = []
        if skipped:
            count = len(skipped)
            where = f"{skipped[0][2] + 1}" + (f"-{skipped[-1][2] + 1}" if count > 1 else "")
            shown = ", ".join(f"'{show(b' '.join(line[3]))}'" for line in skipped[:3]) + (", ..." if count > 3 else "")
            warnings.append(f"{path}:{where}: skipped {'a header line' if count == 1 else f'{count} header lines'}"
                            f"{' before the first edge' if first is not None else ''} ({shown})")
        return start, index

    return header


def read_edge_list(path, stream=None, gpu_room=None):
    """Read an edge list (plain or gzip; parsed on the GPU given gpu_room); the name and line of a bad
    line are in the error."""
    warnings = []
    src, dst = read_pairs(path, header_rule(path, warnings), stream=stream, gpu_room=gpu_room)
    return EdgeList(src, dst, str(path), warnings)
