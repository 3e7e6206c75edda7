"""SNAP, KONECT and Graph Challenge edge lists: two integer ids per line, anything after ignored."""

from tcdist.graph.edges import EdgeList
from tcdist.io.text import NUMBER, data_lines, read_pairs, show, split_lines

_HEAD_BYTES = 1 << 16  # a header is looked for in the file's first 64 KiB


def _leading_lines(head):
    """(start, index, tokens) of the first lines of a block's head (its last line too when the file
    ends without a line end; not when the head is cut short of the block)."""
    lines = split_lines(head[:_HEAD_BYTES])
    if len(head) > _HEAD_BYTES and lines:
        lines.pop()  # may be cut
    for i, (start, raw, _) in enumerate(lines):
        yield start, i, next((t for _, t in data_lines(raw)), [])


def _may_be_data(tokens):
    """An edge or a damaged one ('1.0 2.0', '1 x', '+3 4'; the parser names what is wrong): two or
    more fields, one of them a number. A lone field cannot be an edge (a vertex count, say)."""
    return len(tokens) >= 2 and any(NUMBER.fullmatch(t) for t in tokens)


def _header(path, warnings):
    """Lines before the first edge whose fields are all words (a header without '#', as some SNAP
    files have) are skipped with one warning naming them; a line with a number among several fields
    is data, so a bad one is an error, as it is after the first edge."""
    def header(head):
        data = []  # lines with fields, up to the first that may be data
        for line in _leading_lines(head):
            if line[2]:
                data.append(line)
                if _may_be_data(line[2]):
                    break
        if not data:
            return 0, 0
        first = len(data) - 1 if _may_be_data(data[-1][2]) else 0
        start, i, _ = data[first]
        if first:
            skipped = data[:first]
            where = f"{skipped[0][1] + 1}" + (f"-{skipped[-1][1] + 1}" if first > 1 else "")
            shown = ", ".join(f"'{show(b' '.join(line[2]))}'" for line in skipped[:3]) + (", ..." if first > 3 else "")
            warnings.append(f"{path}:{where}: skipped {'a header line' if first == 1 else f'{first} header lines'} "
                            f"before the first edge ({shown})")
        return start, i

    return header


def read_edge_list(path, stream=None, gpu_room=None):
    """Read an edge list (plain or gzip; parsed on the GPU given gpu_room); the name and line of a bad
    line are in the error."""
    warnings = []
    src, dst = read_pairs(path, _header(path, warnings), stream=stream, gpu_room=gpu_room)
    return EdgeList(src, dst, str(path), warnings)
