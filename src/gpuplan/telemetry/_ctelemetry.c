/* The audit's two hot loops in C (`gpuplan.telemetry._ctelemetry`, built by `pip install`; optional).

The one compiled back-end of the audit. Each loop has a plain reference (gpuplan/telemetry/_loops.py),
the oracle its tests compare against and the fallback where this extension could not be built:

- parse_block: a strict parser for ordinary nvidia-smi CSV lines. It accepts only lines that the
  careful (polars) reader of nvsmi.py reads to exactly the same values (time in ms, GPU index,
  utilisation as float32 ratio), and stops (returns a negative number) at the first line that is in
  any way unusual; the caller hands that line to the careful reader, which classifies and counts it.
  Its reference is that careful reader (tests/unit/test_telemetry_ckernel.py).
- accumulate: one pass over a block of samples in input order folding per-GPU state (reference:
  _loops.accumulate_reference, line for line; bit for bit: IEEE double arithmetic in the same order,
  no contraction into fused multiply-adds, Python's floor division where a value can be negative).

Arrays are passed through the buffer protocol (numpy arrays, C-contiguous); sizes are checked. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define NO_TIME (-(INT64_C(1) << 62))
#define SPACE 32
#define TAB 9
#define COMMA 44
#define NEWLINE 10
#define DOT 46
#define PERCENT 37

/* Per-GPU integer state columns (si) and float state columns (sf): as in _loops.py. */
enum { I_HAS, I_LAST_T, I_COUNT, I_FIRST_T, I_DT, I_DTN, I_HOUR, I_REC, N_SI };
enum { F_LAST_U, F_OBS, F_WU, F_IDLE, F_BUSY, F_FED, F_HWU, F_HWB, F_REC_W, F_HWO, N_SF };

static inline int64_t floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
}

static inline int is_ws(uint8_t c) { return c == SPACE || c == TAB; }

static int64_t digits(const uint8_t *buf, Py_ssize_t s, Py_ssize_t n) {
    int64_t v = 0;
    for (Py_ssize_t i = s; i < s + n; i++) {
        int d = (int)buf[i] - 48;
        if (d < 0 || d > 9) return -1;
        v = v * 10 + d;
    }
    return v;
}

static int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
    y -= m <= 2;
    int64_t era = floordiv(y >= 0 ? y : y - 399, 400);
    int64_t yoe = y - era * 400;
    int64_t mp = (m + 9) % 12; /* m in 1..12: never negative */
    int64_t doy = floordiv(153 * mp + 2, 5) + d - 1;
    int64_t doe = yoe * 365 + floordiv(yoe, 4) - floordiv(yoe, 100) + doy;
    return era * 146097 + doe - 719468;
}

/* The date and hour of the last time accepted (`YYYY/MM/DD HH`, 13 bytes) and its start in ms: a log's
   lines share them for an hour, so only minutes, seconds and milliseconds are read again. */
typedef struct {
    uint8_t prefix[13];
    int sep;
    int valid;
    int64_t hour_ms;
} TimeCache;

/* `YYYY/MM/DD HH:MM:SS.fff` (sep '/', blank between) or `YYYY-MM-DD[ T]HH:MM:SS.fff` (sep '-'). */
static int64_t time_ms(const uint8_t *buf, Py_ssize_t s, Py_ssize_t e, int sep, TimeCache *tc) {
    while (s < e && is_ws(buf[s])) s++;
    while (e > s && is_ws(buf[e - 1])) e--;
    if (e - s != 23) return NO_TIME;
    if (tc->valid && tc->sep == sep && memcmp(buf + s, tc->prefix, 13) == 0) {
        /* the same checks as below on the rest; the prefix's passed when it was cached */
        if (buf[s + 13] != 58 || buf[s + 16] != 58 || buf[s + 19] != DOT) return NO_TIME;
        int64_t mi = digits(buf, s + 14, 2), ss = digits(buf, s + 17, 2), ms = digits(buf, s + 20, 3);
        if (mi < 0 || mi > 59 || ss < 0 || ss > 59 || ms < 0) return NO_TIME;
        return tc->hour_ms + mi * 60000 + ss * 1000 + ms;
    }
    if (buf[s + 4] != sep || buf[s + 7] != sep || buf[s + 13] != 58 || buf[s + 16] != 58) return NO_TIME;
    uint8_t mid = buf[s + 10];
    if (!(mid == SPACE || (sep == 45 && mid == 84))) return NO_TIME;
    if (buf[s + 19] != DOT) return NO_TIME;
    int64_t y = digits(buf, s, 4), mo = digits(buf, s + 5, 2), d = digits(buf, s + 8, 2);
    int64_t hh = digits(buf, s + 11, 2), mi = digits(buf, s + 14, 2), ss = digits(buf, s + 17, 2);
    int64_t ms = digits(buf, s + 20, 3);
    if (y < 0 || mo < 1 || mo > 12 || d < 1 || hh < 0 || hh > 23 || mi < 0 || mi > 59 || ss < 0 || ss > 59)
        return NO_TIME;
    if (ms < 0) return NO_TIME;
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    int64_t dim = 31;
    if (mo == 2)
        dim = leap ? 29 : 28;
    else if (mo == 4 || mo == 6 || mo == 9 || mo == 11)
        dim = 30;
    if (d > dim) return NO_TIME;
    int64_t days = days_from_civil(y, mo, d);
    memcpy(tc->prefix, buf + s, 13);
    tc->sep = sep;
    tc->valid = 1;
    tc->hour_ms = (days * 24 + hh) * 3600000;
    return ((days * 24 + hh) * 60 + mi) * 60000 + ss * 1000 + ms;
}

/* A GPU index written canonically (`0`, `7`, `12`; no sign, no leading zero), else -1. */
static int64_t gpu_index(const uint8_t *buf, Py_ssize_t s, Py_ssize_t e) {
    while (s < e && is_ws(buf[s])) s++;
    while (e > s && is_ws(buf[e - 1])) e--;
    Py_ssize_t n = e - s;
    if (n < 1 || n > 9 || (n > 1 && buf[s] == 48)) return -1;
    return digits(buf, s, n);
}

static const double POW10[7] = {1.0, 10.0, 100.0, 1000.0, 10000.0, 100000.0, 1000000.0};

/* `98`, `98 %`, `98.5 %` -> percent as double (exactly as a decimal parse gives it); -1 if unusual or
   outside 0..100. */
static double util_pct(const uint8_t *buf, Py_ssize_t s, Py_ssize_t e) {
    while (s < e && is_ws(buf[s])) s++;
    while (e > s && is_ws(buf[e - 1])) e--;
    while (e > s && (buf[e - 1] == SPACE || buf[e - 1] == PERCENT)) e--; /* strip_chars_end(" %") */
    int64_t mant = 0;
    int nd = 0, frac = 0;
    Py_ssize_t i = s;
    while (i < e && buf[i] >= 48 && buf[i] <= 57) {
        mant = mant * 10 + (buf[i] - 48);
        nd++;
        i++;
    }
    if (nd == 0 || nd > 9) return -1.0;
    if (i < e) {
        if (buf[i] != DOT) return -1.0;
        i++;
        while (i < e && buf[i] >= 48 && buf[i] <= 57) {
            mant = mant * 10 + (buf[i] - 48);
            frac++;
            i++;
        }
        if (frac == 0 || frac > 6 || i != e) return -1.0;
    }
    double v = frac ? (double)mant / POW10[frac] : (double)mant;
    if (v > 100.0) return -1.0;
    return v;
}

/* The bytes the field scan stops at: NUL, the careful path's sentinel, newline, CR, quote, comma. */
static const uint8_t SPECIAL[256] = {[0] = 1, [1] = 1, [NEWLINE] = 1, [13] = 1, [34] = 1, [COMMA] = 1};

static int check(Py_buffer *b, Py_ssize_t itemsize, Py_ssize_t n, const char *name) {
    if (b->len < n * itemsize || (b->itemsize != itemsize && b->itemsize != 1)) {
        PyErr_Format(PyExc_ValueError, "%s: expected at least %zd items of %zd bytes", name, n, itemsize);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(parse_block_doc,
             "parse_block(buf, start, ncol, i_time, i_gpu, i_util, unit_start, unit_len, units, out_t, out_g,\n"
             "            out_u, out_ls) -> int\n\n"
             "Parse the lines of `buf` (uint8) from byte `start`. Returns the number of rows when all lines were\n"
             "accepted, else -1 - (rows accepted before the first line it does not accept); out_ls[row] is the\n"
             "byte offset where each line (and the refused one) starts.");

static PyObject *py_parse_block(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer bb, bus, bul, bun, bt, bg, bu, bls;
    Py_ssize_t start, ncol, i_time, i_gpu, i_util;
    if (!PyArg_ParseTuple(args, "y*nnnnny*y*y*w*w*w*w*", &bb, &start, &ncol, &i_time, &i_gpu, &i_util, &bus, &bul,
                          &bun, &bt, &bg, &bu, &bls))
        return NULL;
    PyObject *res = NULL;
    const uint8_t *buf = (const uint8_t *)bb.buf;
    const Py_ssize_t n_buf = bb.len;
    const int64_t *unit_start = (const int64_t *)bus.buf, *unit_len = (const int64_t *)bul.buf;
    const uint8_t *units = (const uint8_t *)bun.buf;
    /* at most one row per line: out arrays sized by the caller for the block's lines (+2) */
    Py_ssize_t cap = bt.len / 8;
    if (check(&bus, 8, ncol, "unit_start") || check(&bul, 8, ncol, "unit_len") || check(&bg, 8, cap, "out_g") ||
        check(&bu, 4, cap, "out_u") || check(&bls, 8, cap, "out_ls") || start < 0)
        goto done;
    int64_t *out_t = (int64_t *)bt.buf, *out_g = (int64_t *)bg.buf, *out_ls = (int64_t *)bls.buf;
    float *out_u = (float *)bu.buf;
    Py_ssize_t pos = start, row = 0;
    int64_t r;
    TimeCache tc = {{0}, 0, 0, 0};
    while (pos < n_buf) {
        if (row >= cap) {
            PyErr_SetString(PyExc_ValueError, "parse_block: output arrays too short for the block's lines");
            goto done;
        }
        Py_ssize_t ls = pos;
        out_ls[row] = ls;
        Py_ssize_t field = 0, fs = pos;
        int64_t t = NO_TIME, g = -1;
        double u = -1.0;
        int t_done = 0;
        for (;;) {
            if (field == i_time && pos == fs && pos + 23 < n_buf && buf[pos + 23] == COMMA &&
                (buf[pos + 4] == 47 || buf[pos + 4] == 45)) {
                /* A time field of exactly 23 bytes: a valid time holds no byte the scan stops at, so
                   the field ends at the comma and the general path below would read the same. */
                t = time_ms(buf, pos, pos + 23, buf[pos + 4], &tc);
                if (t != NO_TIME) {
                    t_done = 1;
                    pos += 23;
                }
            }
            while (pos < n_buf && !SPECIAL[buf[pos]]) pos++; /* ordinary bytes: nothing to do */
            uint8_t c = pos < n_buf ? buf[pos] : NEWLINE;
            if (c == 0 || c == 1 || c == 34) { r = -1 - row; goto out; } /* NUL, sentinel, quote */
            int crlf = 0;
            if (c == 13) {
                if (pos + 1 < n_buf && buf[pos + 1] == NEWLINE)
                    crlf = 1;
                else { r = -1 - row; goto out; }
            }
            if (c == COMMA || c == NEWLINE || crlf) {
                if (field >= ncol) { r = -1 - row; goto out; }
                if (field == i_time && t_done) {
                    /* read above */
                } else if (field == i_time) {
                    Py_ssize_t k = fs;
                    while (k < pos && is_ws(buf[k])) k++;
                    int sep = k + 4 < pos ? buf[k + 4] : 0;
                    if (sep != 47 && sep != 45) { r = -1 - row; goto out; }
                    t = time_ms(buf, fs, pos, sep, &tc);
                    if (t == NO_TIME) { r = -1 - row; goto out; }
                } else if (field == i_gpu) {
                    g = gpu_index(buf, fs, pos);
                    if (g < 0) { r = -1 - row; goto out; }
                } else if (field == i_util) {
                    u = util_pct(buf, fs, pos);
                    if (u < 0.0) { r = -1 - row; goto out; }
                }
                if (unit_len[field] > 0) {
                    int64_t ul = unit_len[field];
                    if (pos - fs < ul) { r = -1 - row; goto out; }
                    if (unit_start[field] + ul > bun.len) {
                        PyErr_SetString(PyExc_ValueError, "parse_block: units too short");
                        goto done;
                    }
                    if (memcmp(buf + pos - ul, units + unit_start[field], (size_t)ul) != 0) {
                        r = -1 - row;
                        goto out;
                    }
                }
                field++;
                fs = pos + 1;
                if (crlf) { pos += 2; break; }
                if (c == NEWLINE) { pos += 1; break; }
            }
            pos++;
        }
        if (field != ncol) { r = -1 - row; goto out; }
        out_t[row] = t;
        out_g[row] = g;
        out_u[row] = (float)(u / 100.0);
        row++;
    }
    r = row;
out:
    res = PyLong_FromLongLong(r);
done:
    PyBuffer_Release(&bb);
    PyBuffer_Release(&bus);
    PyBuffer_Release(&bul);
    PyBuffer_Release(&bun);
    PyBuffer_Release(&bt);
    PyBuffer_Release(&bg);
    PyBuffer_Release(&bu);
    PyBuffer_Release(&bls);
    return res;
}

PyDoc_STRVAR(accumulate_doc,
             "accumulate(key, t, u, si, sf, bad, o_dt, o_pend, o_pend_u, o_hour, o_hour_f, o_rec, o_rec_w,\n"
             "           max_sure_ms, idle_below, busy_from, near_idle_below) -> (n_dt, n_pend, n_hour, n_rec)\n\n"
             "Fold samples (key int64, t int64 ms, u float32; input order) into the per-GPU state si (int64,\n"
             "keys x 8) and sf (float64, keys x 10). Same as _loops.accumulate_reference.");

static PyObject *py_accumulate(PyObject *Py_UNUSED(self), PyObject *args) {
    enum { NB = 13 };
    Py_buffer b[NB];
    long long max_sure_ms;
    double idle_below, busy_from, near_idle_below;
    if (!PyArg_ParseTuple(args, "y*y*y*w*w*w*w*w*w*w*w*w*w*Lddd", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6],
                          &b[7], &b[8], &b[9], &b[10], &b[11], &b[12], &max_sure_ms, &idle_below, &busy_from,
                          &near_idle_below))
        return NULL;
    PyObject *res = NULL;
    const Py_ssize_t n = b[0].len / 8;
    const Py_ssize_t n_keys = b[3].len / (8 * N_SI);
    /* outputs: one row per sample at most (o_rec: two), as the caller allocates */
    if (check(&b[1], 8, n, "t") || check(&b[2], 4, n, "u") || check(&b[4], 8, n_keys * N_SF, "sf") ||
        check(&b[5], 1, n, "bad") || check(&b[6], 8, 3 * (n + 1), "o_dt") || check(&b[7], 8, 3 * (n + 1), "o_pend") ||
        check(&b[8], 8, n + 1, "o_pend_u") || check(&b[9], 8, 2 * (n + 1), "o_hour") ||
        check(&b[10], 8, 3 * (n + 1), "o_hour_f") || check(&b[11], 8, 4 * 2 * (n + 1), "o_rec") ||
        check(&b[12], 8, 2 * (n + 1), "o_rec_w"))
        goto done;
    const int64_t *key = (const int64_t *)b[0].buf, *tt = (const int64_t *)b[1].buf;
    const float *uu = (const float *)b[2].buf;
    int64_t(*si)[N_SI] = (int64_t(*)[N_SI])b[3].buf;
    double(*sf)[N_SF] = (double(*)[N_SF])b[4].buf;
    int8_t *bad = (int8_t *)b[5].buf;
    int64_t(*o_dt)[3] = (int64_t(*)[3])b[6].buf;
    int64_t(*o_pend)[3] = (int64_t(*)[3])b[7].buf;
    double *o_pend_u = (double *)b[8].buf;
    int64_t(*o_hour)[2] = (int64_t(*)[2])b[9].buf;
    double(*o_hour_f)[3] = (double(*)[3])b[10].buf;
    int64_t(*o_rec)[4] = (int64_t(*)[4])b[11].buf;
    double *o_rec_w = (double *)b[12].buf;
    Py_ssize_t n_dt = 0, n_pend = 0, n_hour = 0, n_rec = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t k = key[i];
        if (k < 0 || k >= n_keys) {
            PyErr_Format(PyExc_ValueError, "accumulate: key %lld outside the state's %zd rows", (long long)k, n_keys);
            goto done;
        }
        int64_t ti = tt[i];
        int64_t *s_i = si[k];
        double *s_f = sf[k];
        if (s_i[I_HAS] == 0) {
            s_i[I_HAS] = 1;
            s_i[I_FIRST_T] = ti;
            s_i[I_LAST_T] = ti;
            s_i[I_COUNT] = 1;
            s_f[F_LAST_U] = (double)uu[i];
            continue;
        }
        int64_t t0 = s_i[I_LAST_T];
        if (ti < t0) { bad[i] = 1; continue; }
        if (ti == t0) { bad[i] = 2; continue; }
        /* Close the previous sample of this GPU: it stands for the interval until this one. */
        double u0 = s_f[F_LAST_U];
        int64_t dt = ti - t0;
        s_i[I_LAST_T] = ti;
        s_i[I_COUNT] += 1;
        s_f[F_LAST_U] = (double)uu[i];
        if (s_i[I_DTN] > 0 && s_i[I_DT] == dt) {
            s_i[I_DTN] += 1;
        } else {
            if (s_i[I_DTN] > 0) {
                o_dt[n_dt][0] = k;
                o_dt[n_dt][1] = s_i[I_DT];
                o_dt[n_dt][2] = s_i[I_DTN];
                n_dt++;
            }
            s_i[I_DT] = dt;
            s_i[I_DTN] = 1;
        }
        int sure = dt <= max_sure_ms; /* never a gap, whatever the median turns out to be */
        double w = (double)dt / 1000.0;
        if (sure) {
            s_f[F_OBS] += w;
            s_f[F_WU] += w * u0;
            if (u0 < idle_below) s_f[F_IDLE] += w;
            if (u0 >= busy_from) {
                s_f[F_BUSY] += w;
                s_f[F_FED] += w * u0;
            }
            int64_t h = floordiv(t0, 3600000);
            if (s_i[I_HOUR] != h) {
                if (s_i[I_HOUR] != NO_TIME) {
                    o_hour[n_hour][0] = k;
                    o_hour[n_hour][1] = s_i[I_HOUR];
                    o_hour_f[n_hour][0] = s_f[F_HWU];
                    o_hour_f[n_hour][1] = s_f[F_HWB];
                    o_hour_f[n_hour][2] = s_f[F_HWO];
                    n_hour++;
                }
                s_i[I_HOUR] = h;
                s_f[F_HWU] = 0.0;
                s_f[F_HWB] = 0.0;
                s_f[F_HWO] = 0.0;
            }
            s_f[F_HWU] += w * u0;
            s_f[F_HWO] += w;
            if (u0 >= idle_below) s_f[F_HWB] += w;
        } else {
            o_pend[n_pend][0] = k;
            o_pend[n_pend][1] = t0;
            o_pend[n_pend][2] = dt;
            o_pend_u[n_pend] = u0;
            n_pend++;
        }
        /* Busy / near-idle stretches: records of (state, time known so far, pending interval). */
        int64_t s = u0 >= busy_from ? 1 : (u0 < near_idle_below ? 0 : 2);
        if (s != 2) {
            if (s_i[I_REC] == s) {
                if (sure) s_f[F_REC_W] += w;
            } else {
                if (s_i[I_REC] >= 0) {
                    o_rec[n_rec][0] = k;
                    o_rec[n_rec][1] = s_i[I_REC];
                    o_rec[n_rec][2] = 0;
                    o_rec[n_rec][3] = 0;
                    o_rec_w[n_rec] = s_f[F_REC_W];
                    n_rec++;
                }
                s_i[I_REC] = s;
                s_f[F_REC_W] = sure ? w : 0.0;
            }
            if (!sure) {
                o_rec[n_rec][0] = k;
                o_rec[n_rec][1] = s;
                o_rec[n_rec][2] = 1;
                o_rec[n_rec][3] = dt;
                o_rec_w[n_rec] = s_f[F_REC_W];
                n_rec++;
                s_i[I_REC] = -1;
                s_f[F_REC_W] = 0.0;
            }
        } else if (!sure) {
            if (s_i[I_REC] >= 0) {
                o_rec[n_rec][0] = k;
                o_rec[n_rec][1] = s_i[I_REC];
                o_rec[n_rec][2] = 0;
                o_rec[n_rec][3] = 0;
                o_rec_w[n_rec] = s_f[F_REC_W];
                n_rec++;
            }
            o_rec[n_rec][0] = k;
            o_rec[n_rec][1] = 2;
            o_rec[n_rec][2] = 1;
            o_rec[n_rec][3] = dt;
            o_rec_w[n_rec] = 0.0;
            n_rec++;
            s_i[I_REC] = -1;
            s_f[F_REC_W] = 0.0;
        }
    }
    res = Py_BuildValue("(nnnn)", n_dt, n_pend, n_hour, n_rec);
done:
    for (int j = 0; j < NB; j++) PyBuffer_Release(&b[j]);
    return res;
}

static PyMethodDef methods[] = {
    {"parse_block", py_parse_block, METH_VARARGS, parse_block_doc},
    {"accumulate", py_accumulate, METH_VARARGS, accumulate_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_ctelemetry",
    "The audit's compiled loops (C): parse_block and accumulate; see gpuplan.telemetry._loops.", -1, methods,
};

PyMODINIT_FUNC PyInit__ctelemetry(void) { return PyModule_Create(&module); }
