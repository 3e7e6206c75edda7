// The edge-line grammar of tcdist/io/grammar.py on the GPU, line for line: a thread parses the
// lines that start in its range of a block. WRITE false counts each range's edges and lines and
// finds its first bad line; WRITE true writes the edges from each range's offset (an exclusive
// sum of the counts).

#define LF 10
#define CR 13

__device__ __forceinline__ bool separates(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == ',';
}

__device__ __forceinline__ bool ends_token(unsigned char c) {
    return separates(c) || c == LF || c == CR || c == '#' || c == '%';
}

// The first line start in [p, hi), else hi: after an LF, or after a CR not followed by LF (not
// looked for past hi: a thread inside a long line stops at its own range's end).
__device__ i64 first_line_start(const unsigned char* buf, i64 p, i64 hi) {
    if (p == 0) return 0;
    for (; p < hi; ++p) {
        const unsigned char c = buf[p - 1];
        if (c == LF || (c == CR && buf[p] != LF)) return p;
    }
    return hi;
}

// 0: no field, 1: an edge (a, b), 2: a bad line; p moves to the next line's start.
__device__ int parse_line(const unsigned char* buf, i64& p, i64 end, i64& a, i64& b) {
    const i64 last_tenth = 922337203685477580LL;  // (2^63 - 1) / 10
    int fields = 0, commas = 0;
    bool bad = false, comment = false;
    while (p < end) {
        const unsigned char c = buf[p];
        if (c == LF || c == CR) {
            p += (c == CR && p + 1 < end && buf[p + 1] == LF) ? 2 : 1;
            break;
        }
        if (comment) { ++p; continue; }
        if (separates(c)) { commas += c == ','; ++p; continue; }
        if (c == '#' || c == '%') { comment = true; ++p; continue; }
        if (fields >= 2) {  // a field past the ids: skipped whatever it holds
            while (p < end && !ends_token(buf[p])) ++p;
            continue;
        }
        if (commas > (fields ? 1 : 0)) bad = true;  // an empty field before this one: a missing id ('1,,2', ',1,2')
        commas = 0;
        const bool negative = c == '-';
        if (negative) ++p;
        i64 value = 0;
        int digits = 0;
        bool ok = true;
        for (; p < end && !ends_token(buf[p]); ++p, ++digits) {
            const int d = (int)buf[p] - '0';
            if (d < 0 || d > 9) ok = false;
            else if (value > last_tenth || (value == last_tenth && d > 7)) ok = false;  // past 2^63-1
            else if (ok) value = value * 10 + d;
        }
        if (!ok || digits == 0 || (negative && value != 0)) bad = true;
        if (fields == 0) a = value; else b = value;
        ++fields;
    }
    if (fields == 0) return commas ? 2 : 0;  // (commas alone: two missing ids, a row of blank cells)
    return (bad || fields == 1) ? 2 : 1;
}

template <bool WRITE>
__global__ void parse_ranges(const unsigned char* buf, i64 end, i64 range_bytes, i64 ranges, i64* edges,
                             i64* lines, i64* bad, i64* bad_index, i64* src, i64* dst) {
    const i64 r = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= ranges) return;
    const i64 lo = r * range_bytes;
    const i64 hi = min(end, lo + range_bytes);
    i64 p = first_line_start(buf, lo, hi);
    i64 found = 0, counted = 0, at = WRITE ? edges[r] : 0;
    while (p < hi) {
        const i64 start = p;
        i64 a = 0, b = 0;
        const int kind = parse_line(buf, p, end, a, b);
        if (kind == 1) {
            if (WRITE) { src[at + found] = a; dst[at + found] = b; }
            ++found;
        } else if (kind == 2) {
            if (!WRITE) { bad[r] = start; bad_index[r] = counted; }
            break;
        }
        ++counted;
    }
    if (!WRITE) { edges[r] = found; lines[r] = counted; }
}
