/* The compiled replay loop, a C extension built by `pip install` (setup.py). Semantics: the module
 * docstring of gpuplan/sim/replay.py; `replay_reference` there is the oracle this must agree with
 * exactly (tests/unit/test_sim_replay.py).
 *
 * Data structures, all flat arrays:
 * - a binary heap of running jobs keyed by end time;
 * - the queue as flags over jobs in trace order (jobs are queued in arrival order, so queue order is
 *   trace order) with a head pointer that only moves forward;
 * - two min-segment trees over jobs: queued single-node jobs by GPU units, queued multi-node jobs by
 *   nodes needed; the leftmost leaf <= a bound is the next queued job that fits;
 * - a max-segment tree over nodes by free units: first-fit is the leftmost node with free >= need.
 * Packing `gpu` is one node that holds the whole pool.
 *
 * Arguments are buffers (numpy arrays or anything with the buffer protocol), so building needs only
 * Python's headers, not numpy's.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <ctype.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif

#define BIG ((int64_t)1 << 62)

/* Asks for transparent huge pages over the 2 MiB-aligned inside of a fresh buffer (Linux leaves
 * them to madvise on most systems): one page fault per 2 MiB where there were 512, and a fault costs
 * about 2 us here (a VM), so filling the 33 MB of columns of a 620,000-job trace faulted for 18 ms
 * of CPU. Only a hint: the kernel may still give 4 KiB pages, with the same bytes. */
static void want_huge_pages(void *p, size_t n) {
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), b = ((uintptr_t)p + n) & ~(huge - 1);
    if (b > a) madvise((void *)a, b - a, MADV_HUGEPAGE);
#else
    (void)p;
    (void)n;
#endif
}

static void set_min(int64_t *tree, int64_t size, int64_t pos, int64_t value) {
    int64_t p = pos + size;
    tree[p] = value;
    p >>= 1;
    while (p >= 1) {
        int64_t a = tree[2 * p], b = tree[2 * p + 1];
        tree[p] = a < b ? a : b;
        p >>= 1;
    }
}

static int64_t leftmost_le(const int64_t *tree, int64_t size, int64_t bound) {
    if (tree[1] > bound) return -1;
    int64_t p = 1;
    while (p < size) p = tree[2 * p] <= bound ? 2 * p : 2 * p + 1;
    return p - size;
}

static void set_max(int64_t *tree, int64_t size, int64_t pos, int64_t value) {
    int64_t p = pos + size;
    tree[p] = value;
    p >>= 1;
    while (p >= 1) {
        int64_t a = tree[2 * p], b = tree[2 * p + 1];
        tree[p] = a > b ? a : b;
        p >>= 1;
    }
}

static int64_t leftmost_ge(const int64_t *tree, int64_t size, int64_t bound) {
    if (tree[1] < bound) return -1;
    int64_t p = 1;
    while (p < size) p = tree[2 * p] >= bound ? 2 * p : 2 * p + 1;
    return p - size;
}

/* ---------------------------------------------------------------- the spot tier (gpuplan/sim/spot.py)
 *
 * Where a job would burst it goes to spot when it fits the free spot units, else on demand. Spot runs
 * end or are reclaimed at events kept in a heap ordered by (time, job), as the reference's heapq. */
typedef struct {
    int64_t free;          /* spot units free */
    const double *delay;   /* n x attempts: running seconds before the k-th spot run is reclaimed */
    int64_t attempts;
    double checkpoint_s, restart_s, slowdown, od_slowdown;
    int requeue;
    /* per job, written for the caller */
    unsigned char *tier;   /* 0 reserved, 1 finished on spot, 2 on demand */
    double *spot_s, *rem, *end;
    int64_t *reclaims;
    /* per job, work */
    int64_t *tries;
    double *runx, *runpre;
    /* the events */
    double *ht;
    int64_t *hj, hn;
} spot_t;

static int ev_less(const spot_t *S, int64_t a, int64_t b) { /* heap slots a < b by (time, job) */
    return S->ht[a] < S->ht[b] || (S->ht[a] == S->ht[b] && S->hj[a] < S->hj[b]);
}

static void ev_swap(spot_t *S, int64_t a, int64_t b) {
    double t = S->ht[a];
    int64_t j = S->hj[a];
    S->ht[a] = S->ht[b];
    S->hj[a] = S->hj[b];
    S->ht[b] = t;
    S->hj[b] = j;
}

static void ev_push(spot_t *S, double t, int64_t j) {
    int64_t p = S->hn++;
    S->ht[p] = t;
    S->hj[p] = j;
    while (p > 0) {
        int64_t par = (p - 1) >> 1;
        if (!ev_less(S, p, par)) break;
        ev_swap(S, p, par);
        p = par;
    }
}

static void ev_pop(spot_t *S, double *t, int64_t *j) {
    *t = S->ht[0];
    *j = S->hj[0];
    S->hn--;
    if (S->hn > 0) {
        S->ht[0] = S->ht[S->hn];
        S->hj[0] = S->hj[S->hn];
        int64_t p = 0;
        for (;;) {
            int64_t c = 2 * p + 1;
            if (c >= S->hn) break;
            if (c + 1 < S->hn && ev_less(S, c + 1, c)) c++;
            if (!ev_less(S, c, p)) break;
            ev_swap(S, c, p);
            p = c;
        }
    }
}

static void spot_on_demand(spot_t *S, int64_t j, double t, double prefix) {
    S->tier[j] = 2;
    S->end[j] = t + (prefix + S->rem[j] * S->od_slowdown);
}

static void spot_attempt(spot_t *S, const int64_t *u, int64_t j, double t, double prefix) {
    if (S->tries[j] >= S->attempts || u[j] > S->free) {
        spot_on_demand(S, j, t, prefix);
        return;
    }
    double x = S->delay[j * S->attempts + S->tries[j]];
    S->tries[j]++;
    S->free -= u[j];
    double length = prefix + S->rem[j] * S->slowdown;
    S->runpre[j] = prefix;
    if (x < length) {
        S->runx[j] = x;
        S->spot_s[j] += x;
        ev_push(S, t + x, j);
    } else {
        S->runx[j] = INFINITY;
        S->spot_s[j] += length;
        ev_push(S, t + length, j);
    }
}

static void spot_event(spot_t *S, const int64_t *u, double t, int64_t j) {
    S->free += u[j];
    double x = S->runx[j];
    if (x == INFINITY) {
        S->tier[j] = 1;
        S->rem[j] = 0.0;
        S->end[j] = t;
        return;
    }
    S->reclaims[j]++;
    double progress = x - S->runpre[j];
    if (progress > 0 && S->checkpoint_s < INFINITY) {
        double kept = floor(progress / S->checkpoint_s) * S->checkpoint_s;
        S->rem[j] -= kept / S->slowdown;
        if (S->rem[j] < 0) S->rem[j] = 0.0;
    }
    if (S->requeue)
        spot_attempt(S, u, j, t, S->restart_s);
    else
        spot_on_demand(S, j, t, S->restart_s);
}

/* A job leaves the reserved pool's queue (or never joins it) at t: on demand, or spot first. */
static void to_elastic(spot_t *S, const int64_t *u, int64_t j, double t, double *start, unsigned char *burst) {
    start[j] = t;
    burst[j] = 1;
    if (S) spot_attempt(S, u, j, t, 0.0);
}

/* Returns 0, or -1 when out of memory. `S`: the spot tier, or NULL. */
static int run(const double *s, const double *d, const int64_t *u, int64_t n, int64_t nodes, int64_t node_cap,
               double wait_s, int best_effort, double *start, unsigned char *burst, spot_t *S) {
    int rc = -1;
    int64_t size = 1, nsize = 1, total_need = 0;
    int64_t *tree_a = NULL, *tree_b = NULL, *node_tree = NULL, *freev = NULL, *node_of = NULL;
    int64_t *mstart = NULL, *mbuf = NULL, *heap_j = NULL;
    double *heap_t = NULL;
    unsigned char *queued = NULL;

/* Whole nodes job j needs: 0 for a job within one node; with no reserved pool (a spot tier only) 1,
 * more than the pool has, so every job leaves on arrival. Computed where used (no array of n). */
#define NEED(j) (nodes == 0 ? 1 : u[j] > node_cap ? (u[j] + node_cap - 1) / node_cap : 0)
    for (int64_t j = 0; j < n; j++) {
        int64_t k = NEED(j);
        if (k > 0 && nodes > 0 && k <= nodes) total_need += k;
    }
    while (size < n && best_effort) size <<= 1; /* the queue trees serve only best-effort passes */
    while (nsize < nodes) nsize <<= 1;
    tree_a = malloc(sizeof(int64_t) * 2 * (size_t)size);
    tree_b = malloc(sizeof(int64_t) * 2 * (size_t)size);
    node_tree = malloc(sizeof(int64_t) * 2 * (size_t)nsize);
    freev = malloc(sizeof(int64_t) * (size_t)(nodes > 0 ? nodes : 1));
    node_of = nodes > 1 ? malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1)) : NULL; /* one node: always 0 */
    mstart = calloc((size_t)(n > 0 ? n : 1), sizeof(int64_t));
    mbuf = malloc(sizeof(int64_t) * (size_t)(total_need > 0 ? total_need : 1));
    queued = calloc((size_t)(n > 0 ? n : 1), 1);
    heap_t = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    heap_j = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    if (!tree_a || !tree_b || !node_tree || !freev || (nodes > 1 && !node_of) || !mstart || !mbuf || !queued ||
        !heap_t || !heap_j)
        goto done;
    for (int64_t k = 0; k < 2 * size; k++) tree_a[k] = tree_b[k] = BIG;
    for (int64_t k = 0; k < 2 * nsize; k++) node_tree[k] = -1;
    for (int64_t x = 0; x < nodes; x++) {
        freev[x] = node_cap;
        set_max(node_tree, nsize, x, node_cap);
    }

    int64_t n_empty = nodes, mtop = 0, hn = 0, i = 0, h = 0;
    const int finite_wait = wait_s < INFINITY;

    for (;;) {
        while (h < i && !queued[h]) h++;
        /* Strict FIFO, the queue not empty: its head did not fit at the last start pass, and nothing
         * frees room before the next completion. Until then, what the steps below would do one event
         * at a time is done here in a tighter loop, each at its own time: arrivals before the head's
         * deadline only join the queue (or burst, larger than the pool); at the deadline, before
         * any arrival, the heads due burst, unless the head after them fits (a start at that
         * instant: the steps below take it). */
        while (!best_effort && !S && h < i) {
            const double done_t = hn > 0 ? heap_t[0] : INFINITY, due = finite_wait ? s[h] + wait_s : INFINITY;
            const double until = due < done_t ? due : done_t;
            for (; i < n && s[i] < until; i++) {
                if (NEED(i) > nodes)
                    to_elastic(S, u, i, s[i], start, burst);
                else
                    queued[i] = 1;
            }
            if (!(due < done_t) || (i < n && s[i] <= due)) break;
            int64_t k = h; /* the head once the jobs due at `due` have burst */
            while (k < i && (!queued[k] || s[k] + wait_s <= due)) k++;
            if (k < i && (NEED(k) == 0 ? u[k] <= node_tree[1] : NEED(k) <= n_empty)) break;
            for (; h < k; h++)
                if (queued[h]) {
                    queued[h] = 0;
                    to_elastic(S, u, h, due, start, burst);
                }
        }
        double t = INFINITY;
        if (i < n) t = s[i];
        if (hn > 0 && heap_t[0] < t) t = heap_t[0];
        if (finite_wait && h < i && s[h] + wait_s < t) t = s[h] + wait_s;
        if (S && S->hn > 0 && S->ht[0] < t) t = S->ht[0];
        if (t == INFINITY) break;
        /* 0. the spot tier's ends and reclaims */
        while (S && S->hn > 0 && S->ht[0] <= t) {
            double te;
            int64_t j;
            ev_pop(S, &te, &j);
            spot_event(S, u, te, j);
        }
        /* 1. completions */
        while (hn > 0 && heap_t[0] <= t) {
            int64_t j = heap_j[0];
            hn--;
            if (hn > 0) { /* sift the last element down from the root */
                double lt = heap_t[hn];
                int64_t lj = heap_j[hn], p = 0;
                for (;;) {
                    int64_t c = 2 * p + 1;
                    if (c >= hn) break;
                    if (c + 1 < hn && heap_t[c + 1] < heap_t[c]) c++;
                    if (heap_t[c] < lt) {
                        heap_t[p] = heap_t[c];
                        heap_j[p] = heap_j[c];
                        p = c;
                    } else {
                        break;
                    }
                }
                heap_t[p] = lt;
                heap_j[p] = lj;
            }
            if (NEED(j) == 0) {
                int64_t x = node_of ? node_of[j] : 0;
                if (freev[x] == node_cap) n_empty--;
                freev[x] += u[j];
                if (freev[x] == node_cap) n_empty++;
                set_max(node_tree, nsize, x, freev[x]);
            } else {
                for (int64_t q = mstart[j], qe = mstart[j] + NEED(j); q < qe; q++) {
                    int64_t x = mbuf[q];
                    freev[x] = node_cap;
                    n_empty++;
                    set_max(node_tree, nsize, x, node_cap);
                }
            }
        }
        /* 2. arrivals */
        while (i < n && s[i] <= t) {
            if (NEED(i) > nodes) {
                to_elastic(S, u, i, t, start, burst);
            } else {
                queued[i] = 1;
                if (best_effort) {
                    if (NEED(i) == 0)
                        set_min(tree_a, size, i, u[i]);
                    else
                        set_min(tree_b, size, i, NEED(i));
                }
            }
            i++;
        }
        /* 3. - 5. start pass, deadlines, start pass */
        for (int phase = 0; phase < 3; phase++) {
            if (phase == 1) {
                if (!finite_wait) break;
                int any_burst = 0;
                for (;;) {
                    while (h < i && !queued[h]) h++;
                    if (h >= i || s[h] + wait_s > t) break;
                    queued[h] = 0;
                    if (best_effort) {
                        if (NEED(h) == 0)
                            set_min(tree_a, size, h, BIG);
                        else
                            set_min(tree_b, size, h, BIG);
                    }
                    to_elastic(S, u, h, t, start, burst);
                    any_burst = 1;
                }
                if (!any_burst) break; /* the second start pass would find nothing new */
                continue;
            }
            for (;;) {
                /* pick the next job to start, or stop */
                int64_t j = -1;
                if (best_effort) {
                    int64_t maxfree = node_tree[1];
                    int64_t ja = leftmost_le(tree_a, size, maxfree);
                    int64_t jb = leftmost_le(tree_b, size, n_empty);
                    if (ja >= 0 && (jb < 0 || ja < jb))
                        j = ja;
                    else if (jb >= 0)
                        j = jb;
                } else {
                    while (h < i && !queued[h]) h++;
                    if (h < i) {
                        if (NEED(h) == 0) {
                            if (u[h] <= node_tree[1]) j = h;
                        } else if (NEED(h) <= n_empty) {
                            j = h;
                        }
                    }
                }
                if (j < 0) break;
                /* start j at t */
                queued[j] = 0;
                if (best_effort) {
                    if (NEED(j) == 0)
                        set_min(tree_a, size, j, BIG);
                    else
                        set_min(tree_b, size, j, BIG);
                }
                if (NEED(j) == 0) {
                    int64_t x = leftmost_ge(node_tree, nsize, u[j]);
                    if (freev[x] == node_cap) n_empty--;
                    freev[x] -= u[j];
                    if (freev[x] == node_cap) n_empty++;
                    set_max(node_tree, nsize, x, freev[x]);
                    if (node_of) node_of[j] = x;
                } else {
                    mstart[j] = mtop;
                    for (int64_t k = 0, ke = NEED(j); k < ke; k++) {
                        int64_t x = leftmost_ge(node_tree, nsize, node_cap);
                        freev[x] = 0;
                        n_empty--;
                        set_max(node_tree, nsize, x, 0);
                        mbuf[mtop++] = x;
                    }
                }
                start[j] = t;
                /* push (t + d[j], j) on the heap */
                double et = t + d[j];
                int64_t p = hn++;
                while (p > 0) {
                    int64_t par = (p - 1) >> 1;
                    if (heap_t[par] > et) {
                        heap_t[p] = heap_t[par];
                        heap_j[p] = heap_j[par];
                        p = par;
                    } else {
                        break;
                    }
                }
                heap_t[p] = et;
                heap_j[p] = j;
            }
        }
    }
    rc = 0;
done:
    free(tree_a);
    free(tree_b);
    free(node_tree);
    free(freev);
    free(node_of);
    free(mstart);
    free(mbuf);
    free(queued);
    free(heap_t);
    free(heap_j);
    return rc;
}
#undef NEED

static int check(Py_buffer *b, Py_ssize_t itemsize, Py_ssize_t n, const char *name) {
    if (b->len != n * itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd items of %zd bytes, got %zd bytes", name, n, itemsize,
                     b->len);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(replay_doc,
             "replay(submit, duration, units, nodes, node_cap, wait_s, best_effort, start, burst, spot=None)\n\n"
             "Replay sorted jobs (float64 submit and duration seconds, int64 units) through `nodes` nodes of\n"
             "`node_cap` units; writes each job's start (float64) and burst flag (bool) in place.\n"
             "`spot`: the spot tier (gpuplan/sim/spot.py), a tuple (spot_units, delay float64[n x attempts],\n"
             "attempts, checkpoint_s, restart_s, slowdown, od_slowdown, requeue, tier uint8[n] out,\n"
             "spot_s float64[n] out, left_s float64[n] in/out (the durations on entry), end float64[n] out,\n"
             "reclaims int64[n] out). nodes may be 0 with a spot tier (no reserved pool).");

static PyObject *py_replay(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer bs, bd, bu, bstart, bburst;
    long long nodes, node_cap;
    double wait_s;
    int best_effort;
    PyObject *spot_obj = Py_None;
    if (!PyArg_ParseTuple(args, "y*y*y*LLdpw*w*|O", &bs, &bd, &bu, &nodes, &node_cap, &wait_s, &best_effort,
                          &bstart, &bburst, &spot_obj))
        return NULL;
    PyObject *out = NULL;
    spot_t S, *Sp = NULL;
    memset(&S, 0, sizeof(S));
    Py_buffer bdelay = {0}, btier = {0}, bspot = {0}, bleft = {0}, bend = {0}, brec = {0};
    int have_spot = 0;
    Py_ssize_t n = bs.len / (Py_ssize_t)sizeof(double);
    if (check(&bs, sizeof(double), n, "submit") || check(&bd, sizeof(double), n, "duration") ||
        check(&bu, sizeof(int64_t), n, "units") || check(&bstart, sizeof(double), n, "start") ||
        check(&bburst, 1, n, "burst"))
        goto done;
    if (spot_obj != Py_None) {
        long long spot_units, attempts;
        if (!PyTuple_Check(spot_obj)) {
            PyErr_SetString(PyExc_TypeError, "spot: a tuple");
            goto done;
        }
        if (!PyArg_ParseTuple(spot_obj, "Ly*Lddddpw*w*w*w*w*", &spot_units, &bdelay, &attempts, &S.checkpoint_s,
                              &S.restart_s, &S.slowdown, &S.od_slowdown, &S.requeue, &btier, &bspot, &bleft, &bend,
                              &brec))
            goto done;
        have_spot = 1;
        if (attempts < 1 || spot_units < 0 || !(S.slowdown > 0) || !(S.checkpoint_s > 0)) {
            PyErr_SetString(PyExc_ValueError, "spot: attempts >= 1, units >= 0, slowdown and checkpoint > 0");
            goto done;
        }
        if (check(&bdelay, sizeof(double), n * (Py_ssize_t)attempts, "delay") || check(&btier, 1, n, "tier") ||
            check(&bspot, sizeof(double), n, "spot_s") || check(&bleft, sizeof(double), n, "left_s") ||
            check(&bend, sizeof(double), n, "end") || check(&brec, sizeof(int64_t), n, "reclaims"))
            goto done;
        S.free = spot_units;
        S.attempts = attempts;
        S.delay = (const double *)bdelay.buf;
        S.tier = (unsigned char *)btier.buf;
        S.spot_s = (double *)bspot.buf;
        S.rem = (double *)bleft.buf;
        S.end = (double *)bend.buf;
        S.reclaims = (int64_t *)brec.buf;
        size_t m = (size_t)(n > 0 ? n : 1);
        S.tries = calloc(m, sizeof(int64_t));
        S.runx = calloc(m, sizeof(double));
        S.runpre = calloc(m, sizeof(double));
        S.ht = malloc(m * sizeof(double));
        S.hj = malloc(m * sizeof(int64_t));
        if (!S.tries || !S.runx || !S.runpre || !S.ht || !S.hj) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t j = 0; j < n; j++) {
            S.tier[j] = 0;
            S.spot_s[j] = 0.0;
            S.end[j] = NAN;
            S.reclaims[j] = 0;
        }
        Sp = &S;
    }
    if (nodes < (Sp ? 0 : 1) || node_cap < 1) {
        PyErr_SetString(PyExc_ValueError, "nodes (>= 1 without a spot tier) and node_cap must be >= 1");
        goto done;
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = run((const double *)bs.buf, (const double *)bd.buf, (const int64_t *)bu.buf, (int64_t)n, (int64_t)nodes,
             (int64_t)node_cap, wait_s, best_effort, (double *)bstart.buf, (unsigned char *)bburst.buf, Sp);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        PyErr_NoMemory();
        goto done;
    }
    out = Py_NewRef(Py_None);
done:
    free(S.tries);
    free(S.runx);
    free(S.runpre);
    free(S.ht);
    free(S.hj);
    if (have_spot) {
        PyBuffer_Release(&bdelay);
        PyBuffer_Release(&btier);
        PyBuffer_Release(&bspot);
        PyBuffer_Release(&bleft);
        PyBuffer_Release(&bend);
        PyBuffer_Release(&brec);
    }
    PyBuffer_Release(&bs);
    PyBuffer_Release(&bd);
    PyBuffer_Release(&bu);
    PyBuffer_Release(&bstart);
    PyBuffer_Release(&bburst);
    return out;
}


/* ---------------------------------------------------------------- a strict reader of numeric CSV columns
 *
 * read_columns(path, names, max_rows, window) -> (rows, [memoryview of float64 per name]), (rows, None) past
 * max_rows, or None.
 * Reads only the named columns of a plain CSV file (a header line, comma-separated, no quotes), as
 * float64, NaN where a field is empty. Anything else -- a missing column, a quote, a line with another
 * number of fields, a blank line, text that is not a plain decimal number -- gives None,
 * and the caller reads the file the general way (which names the line and field of what is wrong).
 */

#define MAX_WANTED 16

static int parse_number(const char *a, const char *b, double *out) {
    while (a < b && (*a == ' ' || *a == '\t')) a++;
    while (b > a && (b[-1] == ' ' || b[-1] == '\t')) b--;
    if (a == b) {
        *out = NAN;
        return 0;
    }
    const char *p = a;
    int neg = 0;
    if (*p == '-' || *p == '+') {
        neg = *p == '-';
        p++;
    }
    if (p < b && b - p <= 15) { /* plain integers: exact in a double */
        int64_t v = 0;
        const char *q = p;
        while (q < b && *q >= '0' && *q <= '9') v = v * 10 + (*q++ - '0');
        if (q == b) {
            *out = neg ? -(double)v : (double)v;
            return 0;
        }
    }
    char buf[64];
    if (b - a >= (ptrdiff_t)sizeof(buf)) return -1;
    for (const char *q = a; q < b; q++) {
        char c = *q;
        if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+')) return -1;
    }
    memcpy(buf, a, (size_t)(b - a));
    buf[b - a] = 0;
    char *end;
    double v = strtod(buf, &end);
    if (end != buf + (b - a)) return -1;
    *out = v;
    return 0;
}

/* The header's column names, normalised as gpuplan.sim.traces does: stripped, unquoted, lower case. */
static int header_index(const char *a, const char *b, int ncols_max, char names[][64], int *ncols) {
    int k = 0;
    const char *f = a;
    for (const char *q = a;; q++) {
        if (q == b || *q == ',') {
            const char *x = f, *y = q;
            while (x < y && isspace((unsigned char)*x)) x++;
            while (y > x && isspace((unsigned char)y[-1])) y--;
            while (x < y && *x == '"') x++;
            while (y > x && y[-1] == '"') y--;
            if (k >= ncols_max || y - x >= 63) return -1;
            int L = 0;
            for (; x < y; x++) names[k][L++] = (char)tolower((unsigned char)*x);
            names[k][L] = 0;
            k++;
            f = q + 1;
            if (q == b) break;
        }
    }
    *ncols = k;
    return 0;
}

typedef struct {
    int ncols;
    int nwanted;
    int col_of[MAX_WANTED]; /* column index of each wanted name */
    double *out[MAX_WANTED];
} csv_job;

/* The first ',' in [q, le), else le: eight bytes at a time (a zero byte of x ^ ",,,,,,,," is a comma;
 * the lowest flagged byte is exact), the tail byte by byte. Skips the columns not wanted. */
static inline const char *find_comma(const char *q, const char *le) {
    while (le - q >= 8) {
        uint64_t x;
        memcpy(&x, q, 8);
        x ^= 0x2c2c2c2c2c2c2c2cULL;
        uint64_t t = (x - 0x0101010101010101ULL) & ~x & 0x8080808080808080ULL;
        if (t) return q + (__builtin_ctzll(t) >> 3);
        q += 8;
    }
    while (q < le && *q != ',') q++;
    return q;
}

#if defined(__SSE2__) && defined(__x86_64__)
/* ---- the block reader: the same rules as the line loop of parse_rows, on x86-64 (SSE2 is part of
 * it). Stage 1 lists the offsets of every separator (',' and '\n') of a block with vector compares;
 * stage 2 takes each line from the list: the field count is one comparison (the line's ncols-th
 * separator must be its newline), and only the wanted fields are looked at. Plain integers are read
 * eight digits at a time. */

#define BLOCK 16384 /* bytes per stage 1: the lists stay in the first-level cache */

/* Bit i set where p[i] == ch, for the 64 bytes at p. */
static inline uint64_t match64(const char *p, __m128i ch) {
    uint64_t m0 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)p), ch));
    uint64_t m1 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 16)), ch));
    uint64_t m2 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 32)), ch));
    uint64_t m3 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 48)), ch));
    return m0 | m1 << 16 | m2 << 32 | m3 << 48;
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* How many of the eight bytes of w (first byte lowest) lead as ASCII digits: a byte is a digit when
 * its high nibble is 3 and stays 3 after adding 6 (a carry of that sum only reaches bytes after a
 * non-digit, which do not count). */
static inline int digit_run(uint64_t w) {
    uint64_t nd = ((w & (0xF0 * ONES)) ^ (0x30 * ONES)) | (((w + 6 * ONES) & (0xF0 * ONES)) ^ (0x30 * ONES));
    uint64_t flag = (((nd & ~HIGHS) + ~HIGHS) | nd) & HIGHS; /* the high bit of every non-digit byte */
    return flag ? __builtin_ctzll(flag) >> 3 : 8;
}

/* The value of eight ASCII digits, the first in the lowest byte (leading zero bytes count as 0). */
static inline int64_t eight_digits(uint64_t w) {
    w = (w & (0x0F * ONES)) * 2561 >> 8;
    w = (w & 0x00FF00FF00FF00FFULL) * 6553601 >> 16;
    return (int64_t)((w & 0x0000FFFF0000FFFFULL) * 42949672960001ULL >> 32);
}

static const int64_t POW10[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};

/* The field [f, fe) as the line loop's plain integer (a sign, then 1 to 15 digits, nothing else): 1
 * and *out; 0 for anything else (parse_number decides). Reads 16 bytes from the digits: `lim` is the
 * end of readable memory. */
static inline int plain_integer(const char *f, const char *fe, const char *lim, double *out) {
    const char *x = f;
    int neg = 0;
    if (x < fe && (*x == '-' || *x == '+')) neg = *x++ == '-';
    int64_t len = fe - x, v;
    if (len < 1 || len > 15 || lim - x < 16) return 0;
    uint64_t w;
    memcpy(&w, x, 8);
    if (len <= 8) {
        if (digit_run(w) < len) return 0;
        v = eight_digits(w << (8 * (8 - len)));
    } else {
        uint64_t w2;
        memcpy(&w2, x + 8, 8);
        if (digit_run(w) < 8 || digit_run(w2) < len - 8) return 0;
        v = eight_digits(w) * POW10[len - 8] + eight_digits(w2 << (8 * (16 - len)));
    }
    *out = neg ? -(double)v : (double)v;
    return 1;
}

/* Parses whole lines from *pp while a block of them fits before `end` (16 bytes kept readable after
 * every field); *pp moves past them. The rows parsed, or -1 as parse_rows. */
static int64_t parse_blocks(const csv_job *J, const char **pp, const char *end, int64_t r0, int64_t cap) {
    uint32_t sep[BLOCK], nls[BLOCK];
    const char *p = *pp;
    const int ncols = J->ncols;
    const __m128i comma = _mm_set1_epi8(','), newline = _mm_set1_epi8('\n');
    int64_t r = 0;
    while (end - p >= 64 + 16) {
        size_t span = (size_t)(end - p) - 16;
        if (span > BLOCK) span = BLOCK;
        span -= span % 64;
        size_t ns = 0, nn = 0; /* stage 1 */
        for (size_t off = 0; off < span; off += 64) {
            uint64_t nl = match64(p + off, newline), m = match64(p + off, comma) | nl;
            for (; m; m &= m - 1) sep[ns++] = (uint32_t)(off + (size_t)__builtin_ctzll(m));
            for (; nl; nl &= nl - 1) nls[nn++] = (uint32_t)(off + (size_t)__builtin_ctzll(nl));
        }
        if (nn == 0) break; /* a line longer than a block: the line loop */
        size_t k = 0; /* stage 2: sep[k] is the first separator of the line at p + row */
        uint32_t row = 0;
        for (size_t i = 0; i < nn; i++) {
            uint32_t e = nls[i];
            if (k + (size_t)ncols > ns || sep[k + (size_t)ncols - 1] != e) return -1; /* another field count */
            if (e == row || (e == row + 1 && p[row] == '\r')) return -1;               /* a blank line */
            if (r >= cap) return -1;
            for (int w = 0; w < J->nwanted; w++) {
                int c = J->col_of[w];
                const char *f = p + (c == 0 ? row : sep[k + (size_t)c - 1] + 1), *fe = p + sep[k + (size_t)c];
                if (c == ncols - 1 && fe > f && fe[-1] == '\r') fe--;
                double *o = &J->out[w][r0 + r];
                if (!plain_integer(f, fe, end, o) && parse_number(f, fe, o)) return -1;
            }
            r++;
            k += (size_t)ncols;
            row = e + 1;
        }
        p += row;
    }
    *pp = p;
    return r;
}
#endif

/* Parses the lines of [p, end) into rows r0, r0 + 1, ... (at most `cap`); the rows parsed, or -1 when
 * the text is not plain (the caller falls back). The block reader takes the lines it can; this loop
 * the rest (a last line without its newline, lines longer than a block, another architecture). */
static int64_t parse_rows(const csv_job *J, const char *p, const char *end, int64_t r0, int64_t cap) {
    int want_at[256];
    if (J->ncols > 256) return -1;
    for (int c = 0; c < J->ncols; c++) want_at[c] = -1;
    for (int w = 0; w < J->nwanted; w++) want_at[J->col_of[w]] = w;
    int last = 0; /* the last column wanted: the rest of a line is only counted */
    for (int w = 0; w < J->nwanted; w++)
        if (J->col_of[w] > last) last = J->col_of[w];
    int64_t r = 0;
#if defined(__SSE2__) && defined(__x86_64__)
    r = parse_blocks(J, &p, end, r0, cap);
    if (r < 0) return -1;
#endif
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *le = eol ? eol : end;
        const char *next = eol ? eol + 1 : end;
        if (le > p && le[-1] == '\r') le--;
        if (le == p) return -1; /* a blank line: the general reader decides what it means */
        if (r >= cap) return -1;
        int c = 0;
        const char *f = p;
        for (;;) {
            if (c >= J->ncols) return -1;
            int w = want_at[c];
            const char *q = f;
            if (w >= 0) {
                /* a plain integer (at most 15 digits, the common case) is read as it is scanned */
                const char *x = f;
                int neg = 0;
                if (x < le && (*x == '-' || *x == '+')) neg = *x++ == '-';
                const char *digits = x;
                int64_t v = 0;
                while (x < le && (unsigned)(*x - '0') < 10 && x - digits < 16) v = v * 10 + (*x++ - '0');
                if (x > digits && x - digits <= 15 && (x == le || *x == ',')) {
                    J->out[w][r0 + r] = neg ? -(double)v : (double)v; /* as parse_number reads it */
                    q = x;
                } else {
                    while (q < le && *q != ',') q++;
                    if (parse_number(f, q, &J->out[w][r0 + r])) return -1;
                }
            } else {
                q = find_comma(f, le);
            }
            c++;
            if (q == le) break;
            f = q + 1;
            if (c > last) { /* count the remaining separators */
                for (const char *x = f; x < le; x++) c += *x == ',';
                c++;
                break;
            }
        }
        if (c != J->ncols) return -1;
        r++;
        p = next;
    }
    return r;
}

#define MAX_THREADS 4

typedef struct {
    const csv_job *J;
    const char *begin, *end;
    int last_chunk;
    int64_t r0, lines, rows;
    int fail;
} chunk_t;

static void *count_chunk(void *arg) {
    chunk_t *c = (chunk_t *)arg;
    int64_t n = 0; /* newlines */
    int quoted = 0; /* a quote anywhere: the general reader */
    const char *q = c->begin, *e = c->end;
#if defined(__SSE2__) && defined(__x86_64__)
    /* one read of the text for both: each byte lane counts its newlines (a compare gives -1): at most
     * 4 a step, 252 in 63 steps; then the lanes are summed (psadbw); quotes are or-ed */
    const __m128i newline = _mm_set1_epi8('\n'), quote = _mm_set1_epi8('"'), zero = _mm_setzero_si128();
    __m128i quotes = zero;
    while (e - q >= 64) {
        __m128i lanes = zero;
        for (int k = 0; k < 63 && e - q >= 64; k++, q += 64) {
            const __m128i *v = (const __m128i *)q;
            for (int i = 0; i < 4; i++) {
                const __m128i x = _mm_loadu_si128(v + i);
                lanes = _mm_sub_epi8(lanes, _mm_cmpeq_epi8(x, newline));
                quotes = _mm_or_si128(quotes, _mm_cmpeq_epi8(x, quote));
            }
        }
        __m128i sums = _mm_sad_epu8(lanes, zero);
        n += _mm_cvtsi128_si64(sums) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums));
    }
    quoted = _mm_movemask_epi8(quotes) != 0;
#endif
    for (; q < e; q++) {
        n += *q == '\n';
        quoted |= *q == '"';
    }
    if (quoted) {
        c->fail = 1;
        return NULL;
    }
    if (c->last_chunk && c->end > c->begin && c->end[-1] != '\n') n++;
    c->lines = n;
    return NULL;
}

static void *parse_chunk(void *arg) {
    chunk_t *c = (chunk_t *)arg;
    c->rows = parse_rows(c->J, c->begin, c->end, c->r0, c->lines);
    if (c->rows != c->lines) c->fail = 1;
    return NULL;
}

/* Runs `fn` over the chunks, one thread each (the first in this thread). */
static void run_chunks(void *(*fn)(void *), chunk_t *chunks, int n) {
    pthread_t tids[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    pthread_attr_t attr; /* the block reader keeps 128 KiB of lists on its stack: more than musl's default */
    int have_attr = pthread_attr_init(&attr) == 0 && pthread_attr_setstacksize(&attr, (size_t)1 << 20) == 0;
    for (int i = 1; i < n; i++) started[i] = pthread_create(&tids[i], have_attr ? &attr : NULL, fn, &chunks[i]) == 0;
    if (have_attr) pthread_attr_destroy(&attr);
    fn(&chunks[0]);
    for (int i = 1; i < n; i++) {
        if (started[i])
            pthread_join(tids[i], NULL);
        else
            fn(&chunks[i]);
    }
}

/* The file is read through windows of WINDOW bytes mapped one at a time (each cut after its last
 * newline) and unmapped before the next, so that memory holds the columns and one window, never the
 * whole file. */
#define WINDOW ((size_t)64 << 20)

/* Maps whole lines of the file from byte `pos`: [*begin, *end) ends just after the last newline
 * within `pos + window` (the window grows for a longer line), or at the end of the file. Returns the
 * mapping (length *maplen, for munmap) or MAP_FAILED. */
static void *map_lines(int fd, size_t size, size_t pos, size_t window, const char **begin, const char **end,
                       size_t *maplen) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t base = pos - pos % page;
    for (size_t want = window;; want *= 2) {
        size_t stop = size - pos > want ? pos + want : size;
        size_t len = stop - base;
        void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, (off_t)base);
        if (m == MAP_FAILED) return m;
#ifdef MADV_SEQUENTIAL
        madvise(m, len, MADV_SEQUENTIAL);
#endif
        const char *b = (const char *)m + (pos - base), *e = (const char *)m + len;
        if (stop < size) {
            const char *nl = e;
            while (nl > b && nl[-1] != '\n') nl--;
            if (nl == b) { /* no whole line yet: a longer window */
                munmap(m, len);
                continue;
            }
            e = nl;
        }
        *begin = b;
        *end = e;
        *maplen = len;
        return m;
    }
}

/* The lines of the window at `pos`: inside the whole file's one mapping when `whole_b` is given, else
 * mapped now (*map, for munmap). 0, or -1 when the mapping failed. */
static int window_at(int fd, size_t size, size_t pos, size_t window, const char *whole_b, const char **b,
                     const char **e, void **map, size_t *maplen) {
    if (whole_b != NULL) {
        *b = whole_b + pos;
        *e = whole_b + size;
        return 0;
    }
    *map = map_lines(fd, size, pos, window, b, e, maplen);
    return *map == MAP_FAILED ? -1 : 0;
}

/* Cuts [b, e) after newlines into one chunk per thread; `at_end`: e is the end of the file. */
static int split_chunks(const csv_job *J, const char *b, const char *e, int at_end, chunk_t *chunks) {
    int nthreads = 1;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (e - b > (1 << 22) && ncpu > 1) nthreads = ncpu < MAX_THREADS ? (int)ncpu : MAX_THREADS;
    memset(chunks, 0, sizeof(chunk_t) * MAX_THREADS);
    const char *cut = b;
    for (int i = 0; i < nthreads; i++) {
        const char *stop = i == nthreads - 1 ? e : b + (e - b) / nthreads * (i + 1);
        if (stop < cut) stop = cut;
        if (stop < e) {
            const char *nl = memchr(stop, '\n', (size_t)(e - stop));
            stop = nl ? nl + 1 : e;
        }
        chunks[i].J = J;
        chunks[i].begin = cut;
        chunks[i].end = stop;
        chunks[i].last_chunk = at_end && stop == e;
        cut = stop;
    }
    return nthreads;
}

/* A memoryview of bytes [start, start + len) of `obj` (its buffer, not a copy; in bytes whatever the
 * buffer's own format). */
static PyObject *slice_of(PyObject *obj, Py_ssize_t start, Py_ssize_t len) {
    PyObject *mv = PyMemoryView_FromObject(obj);
    if (!mv) return NULL;
    PyObject *bytes = PyObject_CallMethod(mv, "cast", "s", "B");
    Py_DECREF(mv);
    if (!bytes) return NULL;
    PyObject *part = PySequence_GetSlice(bytes, start, start + len);
    Py_DECREF(bytes);
    return part;
}

static PyObject *py_read_columns(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *path_obj, *names;
    long long max_rows = -1; /* more rows than this: (rows, None) before any column is allocated */
    long long window_arg = 0; /* bytes per mapped window; 0: WINDOW (tests give small ones) */
    if (!PyArg_ParseTuple(args, "O&O!|LL", PyUnicode_FSConverter, &path_obj, &PyTuple_Type, &names, &max_rows,
                          &window_arg))
        return NULL;
    const size_t window = window_arg > 0 ? (size_t)window_arg : WINDOW;
    PyObject *result = NULL, *arrays = NULL, *owner = NULL;
    const char *path = PyBytes_AS_STRING(path_obj);
    Py_ssize_t nw = PyTuple_GET_SIZE(names);
    void *map = MAP_FAILED;
    size_t maplen = 0, size = 0;
    void *whole = MAP_FAILED; /* a file within one window: mapped once, for both passes */
    size_t whole_len = 0;
    const char *whole_b = NULL;
    int64_t *counts = NULL; /* lines per chunk of every window, from the first pass */
    size_t ncounts = 0, capcounts = 0;
    int fd = -1;
    if (nw < 1 || nw > MAX_WANTED) {
        PyErr_SetString(PyExc_ValueError, "between 1 and 16 column names");
        goto done;
    }
    fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    size = (size_t)st.st_size;
    const char *b, *e;
    map = map_lines(fd, size, 0, window, &b, &e, &maplen);
    if (map == MAP_FAILED) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    const char *data = b;
    if (e - data >= 3 && (unsigned char)data[0] == 0xEF && (unsigned char)data[1] == 0xBB &&
        (unsigned char)data[2] == 0xBF) {
        data += 3;
    }
    const char *hl = memchr(data, '\n', (size_t)(e - data));
    const char *he = hl ? hl : e;
    if (he > data && he[-1] == '\r') he--;
    static char hnames[256][64];
    csv_job J;
    memset(&J, 0, sizeof(J));
    if (memchr(data, '"', (size_t)(he - data)) || header_index(data, he, 256, hnames, &J.ncols) != 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    J.nwanted = (int)nw;
    for (Py_ssize_t w = 0; w < nw; w++) {
        const char *want = PyUnicode_AsUTF8(PyTuple_GET_ITEM(names, w));
        if (!want) goto done;
        J.col_of[w] = -1;
        for (int c = 0; c < J.ncols; c++)
            if (strcmp(hnames[c], want) == 0) {
                J.col_of[w] = c;
                break;
            }
        if (J.col_of[w] < 0) {
            result = Py_NewRef(Py_None);
            goto done;
        }
    }
    const size_t body = hl ? (size_t)(hl + 1 - (const char *)b) : size;
    if ((size_t)(e - b) == size) { /* the first window holds the whole file: both passes read it */
        whole = map;
        whole_len = maplen;
        whole_b = b;
    } else {
        munmap(map, maplen);
    }
    map = MAP_FAILED;
    chunk_t chunks[MAX_THREADS];
    int64_t lines = 0;
    /* pass 1: count the lines (and refuse quotes), window by window */
    for (size_t pos = body; pos < size;) {
        if (window_at(fd, size, pos, window, whole_b, &b, &e, &map, &maplen) < 0) {
            result = Py_NewRef(Py_None);
            goto done;
        }
        int n = split_chunks(&J, b, e, pos + (size_t)(e - b) == size, chunks);
        Py_BEGIN_ALLOW_THREADS
        run_chunks(count_chunk, chunks, n);
        Py_END_ALLOW_THREADS
        for (int i = 0; i < n; i++) {
            if (chunks[i].fail) {
                result = Py_NewRef(Py_None);
                goto done;
            }
            if (ncounts == capcounts) {
                capcounts = capcounts ? 2 * capcounts : 64;
                int64_t *grown = realloc(counts, capcounts * sizeof(int64_t));
                if (!grown) {
                    PyErr_NoMemory();
                    goto done;
                }
                counts = grown;
            }
            counts[ncounts++] = chunks[i].lines;
            lines += chunks[i].lines;
        }
        pos += (size_t)(e - b);
        if (map != MAP_FAILED) munmap(map, maplen);
        map = MAP_FAILED;
    }
    if (max_rows >= 0 && lines > max_rows) { /* past the limit: the count, and no columns */
        result = Py_BuildValue("(LO)", (long long)lines, Py_None);
        goto done;
    }
    /* the columns: slices of one bytearray whose data starts on a 2 MiB boundary (when they are big
     * enough to be worth it), all of it on huge pages */
    const size_t col = (size_t)lines * sizeof(double), huge = (size_t)2 << 20, pad = col * (size_t)nw >= 2 * huge ? huge : 0;
    owner = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(col * (size_t)nw + pad));
    if (!owner) goto done;
    char *base = PyByteArray_AS_STRING(owner);
    const size_t off = pad ? (huge - (uintptr_t)base % huge) % huge : 0;
    want_huge_pages(base + off, col * (size_t)nw);
    arrays = PyList_New(nw);
    if (!arrays) goto done;
    for (Py_ssize_t w = 0; w < nw; w++) {
        PyObject *mv = slice_of(owner, (Py_ssize_t)(off + col * (size_t)w), (Py_ssize_t)col);
        if (!mv) goto done;
        PyList_SET_ITEM(arrays, w, mv);
        J.out[w] = (double *)(base + off + col * (size_t)w);
    }
    /* pass 2: parse, the same windows and chunks */
    int64_t r0 = 0;
    size_t k = 0;
    for (size_t pos = body; pos < size;) {
        if (window_at(fd, size, pos, window, whole_b, &b, &e, &map, &maplen) < 0) {
            result = Py_NewRef(Py_None);
            goto done;
        }
        int n = split_chunks(&J, b, e, pos + (size_t)(e - b) == size, chunks);
        for (int i = 0; i < n; i++) {
            if (k >= ncounts) { /* the file changed between the passes */
                result = Py_NewRef(Py_None);
                goto done;
            }
            chunks[i].lines = counts[k++];
            chunks[i].r0 = r0;
            r0 += chunks[i].lines;
        }
        if (r0 > lines) {
            result = Py_NewRef(Py_None);
            goto done;
        }
        Py_BEGIN_ALLOW_THREADS
        run_chunks(parse_chunk, chunks, n);
        Py_END_ALLOW_THREADS
        for (int i = 0; i < n; i++) {
            if (chunks[i].fail) {
                result = Py_NewRef(Py_None);
                goto done;
            }
        }
        pos += (size_t)(e - b);
        if (map != MAP_FAILED) munmap(map, maplen);
        map = MAP_FAILED;
    }
    if (r0 != lines) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    result = Py_BuildValue("(LO)", (long long)lines, arrays);
done:
    Py_XDECREF(arrays);
    Py_XDECREF(owner);
    free(counts);
    if (map != MAP_FAILED) munmap(map, maplen);
    if (whole != MAP_FAILED) munmap(whole, whole_len);
    if (fd >= 0) close(fd);
    Py_DECREF(path_obj);
    return result;
}

/* ---------------------------------------------------------------- numpy's sums, order statistics
 *
 * The summary below must print the very numbers the plain reference (numpy) prints, so its sums are
 * numpy's: `np.add.reduce` of a contiguous float64 array is 0.0 + a pairwise sum (numpy's
 * `pairwise_sum` in loops_utils.h: under 8 values one by one; up to 128 in 8 lanes added
 * ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), then the rest; above, the two halves, the first
 * a multiple of 8 long). Order statistics are exact whatever the method (a quickselect). */

/* The pairwise sum, written once for any source of values taken in order: `NEXT(src)` gives the
 * next one (an array's, or values made as they are needed: the summary's GPU-hours). */
#define PAIRWISE_SUM(name, src_t, NEXT)                                                    \
    static double name(src_t *src, int64_t n) {                                            \
        if (n < 8) {                                                                       \
            double res = 0.;                                                               \
            for (int64_t i = 0; i < n; i++) res += NEXT(src);                              \
            return res;                                                                    \
        }                                                                                  \
        if (n <= 128) {                                                                    \
            double r[8];                                                                   \
            for (int k = 0; k < 8; k++) r[k] = NEXT(src);                                  \
            int64_t i;                                                                     \
            for (i = 8; i < n - (n % 8); i += 8)                                           \
                for (int k = 0; k < 8; k++) r[k] += NEXT(src);                             \
            double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7])); \
            for (; i < n; i++) res += NEXT(src);                                           \
            return res;                                                                    \
        }                                                                                  \
        int64_t n2 = n / 2;                                                                \
        n2 -= n2 % 8;                                                                      \
        double first = name(src, n2);                                                      \
        return first + name(src, n - n2);                                                  \
    }

typedef struct {
    const double *a;
} array_src;

static inline double array_next(array_src *src) { return *src->a++; }

PAIRWISE_SUM(pairwise_sum, array_src, array_next)

static double np_sum(const double *a, int64_t n) {
    array_src src = {a};
    return 0.0 + pairwise_sum(&src, n);
}

/* The k-th smallest of a[0..n) (0 <= k < n), moving values so that a[..k] <= a[k] <= a[k..]. */
static double select_kth(double *a, int64_t n, int64_t k) {
    int64_t lo = 0, hi = n - 1;
    while (hi > lo) {
        int64_t mid = lo + (hi - lo) / 2;
        double x = a[lo], y = a[mid], z = a[hi];
        double pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot) i++;
            while (a[j] > pivot) j--;
            if (i <= j) {
                double t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return a[k];
    }
    return a[k];
}

/* np.percentile(a, q) with the default (linear) method, for 0 <= q <= 100 and a without NaN: the
 * virtual index (n - 1) * (q / 100), its floor and the next (the last value past the end), and numpy's
 * `_lerp`. The floor's value is selected, the next is the least above it. `*known_k`: the index
 * selected last (-1: none); a[..known_k] are at most a[known_k], so a later selection above it looks
 * only above it. */
static double percentile(double *a, int64_t n, double q, int64_t *known_k) {
    double vi = (double)(n - 1) * (q / 100.0);
    double prev_f = floor(vi);
    int64_t prev = (int64_t)prev_f, next = prev + 1;
    if (vi >= (double)(n - 1)) {
        prev = next = n - 1;
        prev_f = -1.0; /* numpy's index -1: gamma = vi - (-1) */
    }
    double gamma = vi - prev_f;
    double lo;
    if (prev == *known_k) {
        lo = a[prev];
    } else {
        int64_t base = prev > *known_k ? *known_k + 1 : 0;
        lo = select_kth(a + base, n - base, prev - base);
        *known_k = prev;
    }
    double hi = lo;
    if (next != prev) { /* the (prev + 1)-th order statistic: the least of a[prev + 1..] */
        hi = a[prev + 1];
        for (int64_t j = prev + 2; j < n; j++)
            if (a[j] < hi) hi = a[j];
    }
    double diff = hi - lo;
    double r = lo + diff * gamma;
    if (gamma >= 0.5) r = hi - diff * (1 - gamma);
    return r;
}

/* ---------------------------------------------------------------- jobs for a replay, from columns
 *
 * prepare_jobs(kind, columns) -> (skipped counts, gpu_hours, submit, duration, gpus, units) or None.
 * The compiled form of the readers' rules for the plain numeric formats (gpuplan/sim/traces.py:
 * `_read_generic`, `_read_tiresias`, `_read_openb`, `_build`) and of `Jobs.from_trace` (replay.py),
 * over the columns `read_columns` gave, reused in place:
 * - kind 0 (generic, tiresias): columns submit, duration, gpus; skipped: no_gpu (gpus <= 0), then
 *   non_positive_duration (duration <= 0);
 * - kind 1 (alibaba-2023): columns num_gpu, gpu_milli, creation_time, deletion_time, scheduled_time;
 *   GPUs = gpu_milli / 1000 where num_gpu == 1 and gpu_milli is given, else num_gpu; duration =
 *   deletion_time - scheduled_time; skipped: no_gpu (num_gpu == 0 or GPUs <= 0), never_ran (no
 *   scheduled_time), missing_time (no deletion_time), non_positive_duration (not duration > 0).
 * Kept records move to the front (file order); gpu_hours = numpy's sum of GPUs x duration over them,
 * / 3600; then the jobs are sorted by (submit, position) (a stable merge sort, only when out of order)
 * and units = max(rint(GPUs x 1000), 1). The four are returned as memoryviews of n float64 (units: int64).
 * None where the Python readers would raise (an empty required value, a negative count or duration, an
 * infinite value, no usable job): they then run and name the line and field. */

static void merge_sort_idx(const double *key, int64_t *idx, int64_t *tmp, int64_t n) {
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) tmp[k++] = key[idx[j]] < key[idx[i]] ? idx[j++] : idx[i++];
            while (i < mid) tmp[k++] = idx[i++];
            while (j < hi) tmp[k++] = idx[j++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof(int64_t));
    }
}

static PyObject *py_prepare_jobs(PyObject *Py_UNUSED(self), PyObject *args) {
    int kind;
    PyObject *cols;
    if (!PyArg_ParseTuple(args, "iO!", &kind, &PyList_Type, &cols)) return NULL;
    Py_ssize_t want = kind == 0 ? 3 : kind == 1 ? 5 : -1;
    if (want < 0 || PyList_GET_SIZE(cols) != want) {
        PyErr_SetString(PyExc_ValueError, "kind 0 takes 3 columns, kind 1 takes 5");
        return NULL;
    }
    double *c[5];
    Py_buffer views[5];
    Py_ssize_t len = -1, held = 0;
    PyObject *result = NULL, *o_units = NULL;
    int64_t n = 0, *idx = NULL, *tmp = NULL;
    for (Py_ssize_t w = 0; w < want; w++) {
        if (PyObject_GetBuffer(PyList_GET_ITEM(cols, w), &views[w], PyBUF_WRITABLE) != 0) goto done;
        held++;
        if ((len >= 0 && views[w].len != len) || views[w].len % (Py_ssize_t)sizeof(double)) {
            PyErr_SetString(PyExc_ValueError, "columns: writable buffers of float64, all of one length");
            goto done;
        }
        len = views[w].len;
        c[w] = (double *)views[w].buf;
    }
    int64_t rows = (int64_t)(len / (Py_ssize_t)sizeof(double));
    /* where the kept jobs go: submit, duration, gpus (columns reused in place), units (new or reused);
     * each is returned as a view of its first n values */
    PyObject *o_submit, *o_duration, *o_gpus;
    double *sub, *dur, *gpu, *scratch;
    if (kind == 0) {
        o_submit = PyList_GET_ITEM(cols, 0);
        o_duration = PyList_GET_ITEM(cols, 1);
        o_gpus = PyList_GET_ITEM(cols, 2);
        o_units = PyByteArray_FromStringAndSize(NULL, len);
        if (!o_units) goto done;
        scratch = (double *)PyByteArray_AS_STRING(o_units);
        want_huge_pages(scratch, (size_t)len);
        sub = c[0], dur = c[1], gpu = c[2];
    } else {
        o_gpus = PyList_GET_ITEM(cols, 1);
        o_submit = PyList_GET_ITEM(cols, 2);
        o_duration = PyList_GET_ITEM(cols, 3);
        o_units = Py_NewRef(PyList_GET_ITEM(cols, 4));
        gpu = c[1], sub = c[2], dur = c[3], scratch = c[4];
    }
    long long skipped[4] = {0, 0, 0, 0};
    int bad = 0;
    /* one pass: check as the readers do, compute GPUs and duration, move the kept rows to the front */
    for (int64_t r = 0; r < rows && !bad; r++) {
        double s, d, g;
        int reason = -1;
        if (kind == 0) {
            s = c[0][r];
            d = c[1][r];
            g = c[2][r];
            if (isnan(s) || isnan(d) || isnan(g) || d < 0 || g < 0 || isinf(s) || isinf(d) || isinf(g)) {
                bad = 1;
                break;
            }
            if (g <= 0)
                reason = 0;
            else if (d <= 0)
                reason = 1;
        } else {
            double num = c[0][r], milli = c[1][r], del = c[3][r], sch = c[4][r];
            s = c[2][r];
            if (isnan(num) || isnan(s) || num < 0 || (!isnan(milli) && milli < 0)) {
                bad = 1;
                break;
            }
            g = num == 1 && !isnan(milli) ? milli / 1000.0 : num;
            d = del - sch;
            if (isinf(s) || isinf(d) || isinf(g)) {
                bad = 1;
                break;
            }
            if (num == 0 || g <= 0)
                reason = 0;
            else if (isnan(sch))
                reason = 1;
            else if (isnan(del))
                reason = 2;
            else if (!(d > 0))
                reason = 3;
        }
        if (reason >= 0) {
            skipped[reason]++;
            continue;
        }
        sub[n] = s;
        dur[n] = d;
        gpu[n] = g;
        n++;
    }
    if (bad || n == 0) { /* the readers raise, naming the line and field */
        result = Py_NewRef(Py_None);
        goto done;
    }
    for (int64_t j = 0; j < n; j++) scratch[j] = gpu[j] * dur[j];
    double gpu_hours = np_sum(scratch, n) / 3600.0;
    int sorted = 1;
    for (int64_t j = 1; j < n && sorted; j++) sorted = sub[j] >= sub[j - 1];
    if (!sorted) {
        idx = malloc((size_t)n * sizeof(int64_t));
        tmp = malloc((size_t)n * sizeof(int64_t));
        if (!idx || !tmp) {
            PyErr_NoMemory();
            goto done;
        }
        for (int64_t j = 0; j < n; j++) idx[j] = j;
        merge_sort_idx(sub, idx, tmp, n);
        double *arrays[3] = {sub, dur, gpu};
        for (int a = 0; a < 3; a++) {
            for (int64_t j = 0; j < n; j++) scratch[j] = arrays[a][idx[j]];
            memcpy(arrays[a], scratch, (size_t)n * sizeof(double));
        }
    }
    int64_t *units = (int64_t *)scratch;
    for (int64_t j = 0; j < n; j++) {
        double v = rint(gpu[j] * 1000.0);
        units[j] = (int64_t)(v < 1 ? 1 : v);
    }
    Py_ssize_t bytes = (Py_ssize_t)(n * (int64_t)sizeof(double));
    PyObject *v[4] = {slice_of(o_submit, 0, bytes), slice_of(o_duration, 0, bytes), slice_of(o_gpus, 0, bytes),
                      slice_of(o_units, 0, bytes)};
    if (v[0] && v[1] && v[2] && v[3])
        result = Py_BuildValue("((LLLL)dOOOO)", skipped[0], skipped[1], skipped[2], skipped[3], gpu_hours, v[0],
                               v[1], v[2], v[3]);
    for (int a = 0; a < 4; a++) Py_XDECREF(v[a]);
done:
    free(idx);
    free(tmp);
    Py_XDECREF(o_units);
    for (Py_ssize_t w = 0; w < held; w++) PyBuffer_Release(&views[w]);
    return result;
}

/* ---------------------------------------------------------------- the summary of one replay
 *
 * summary(submit, duration, gpus, start, burst, slowdown) -> (total_h, reserved_h, burst_h, wait mean,
 * p50, p95, max, span_h, calendar_h, burst_jobs): `gpuplan.sim.replay.summarize`'s numbers without a spot
 * tier, each computed as its numpy expression computes it (the sums by np_sum above). */
/* The GPU-hours gh = gpus x duration / 3600 of the jobs whose burst flag is `want` (0 or 1), or of
 * all of them (want -1: a burst one's times `slowdown`), in job order, made one at a time. */
typedef struct {
    const double *g, *d;
    const unsigned char *b;
    int want;
    double slowdown;
    int64_t j, n;
} gh_stream;

static inline double gh_next(gh_stream *c) {
    if (c->want >= 0) /* bounded: the flags are counted first, but they are a caller's buffer */
        while (c->j < c->n - 1 && (c->b[c->j] != 0) != c->want) c->j++;
    int64_t j = c->j < c->n ? c->j++ : c->n - 1;
    double gh = c->g[j] * c->d[j] / 3600.0;
    return c->want < 0 && c->b[j] && c->slowdown != 1.0 ? gh * c->slowdown : gh;
}

PAIRWISE_SUM(pairwise_stream, gh_stream, gh_next) /* the same additions as over an array of the values */

/* The summary's GPU-hours: numpy's sums of gh[~burst], gh[burst] (x slowdown) and gh with the burst
 * ones x slowdown; run beside the waits' order statistics (its own thread on a big replay). */
typedef struct {
    const double *g, *d;
    const unsigned char *b;
    int64_t n;
    double slowdown;
    double reserved_h, burst_h, total_h;
    long long bursts;
} gh_sums;

static void *sum_gpu_hours(void *arg) {
    gh_sums *a = (gh_sums *)arg;
    long long k = 0;
    for (int64_t j = 0; j < a->n; j++) k += a->b[j] != 0;
    a->bursts = k;
    gh_stream c = {a->g, a->d, a->b, 0, a->slowdown, 0, a->n};
    a->reserved_h = 0.0 + pairwise_stream(&c, a->n - k);
    c.want = 1, c.j = 0;
    a->burst_h = (0.0 + pairwise_stream(&c, k)) * a->slowdown;
    c.want = -1, c.j = 0;
    a->total_h = 0.0 + pairwise_stream(&c, a->n);
    return NULL;
}

static PyObject *py_summary(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer bs, bd, bg, bst, bb;
    double slowdown;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*d", &bs, &bd, &bg, &bst, &bb, &slowdown)) return NULL;
    PyObject *out = NULL;
    double *tmp = NULL;
    Py_ssize_t n = bs.len / (Py_ssize_t)sizeof(double);
    if (check(&bs, sizeof(double), n, "submit") || check(&bd, sizeof(double), n, "duration") ||
        check(&bg, sizeof(double), n, "gpus") || check(&bst, sizeof(double), n, "start") ||
        check(&bb, 1, n, "burst"))
        goto done;
    const double *s = bs.buf, *d = bd.buf, *g = bg.buf, *st = bst.buf;
    const unsigned char *b = bb.buf;
    size_t m1 = (size_t)(n > 0 ? n : 1);
    tmp = malloc(sizeof(double) * m1);
    if (!tmp) {
        PyErr_NoMemory();
        goto done;
    }
    want_huge_pages(tmp, sizeof(double) * m1);
    double mean = 0, p50 = 0, p95 = 0, maxw = 0, span_h = 0, calendar_h = 0;
    gh_sums sums = {g, d, b, (int64_t)n, slowdown, 0, 0, 0, 0};
    Py_BEGIN_ALLOW_THREADS
    pthread_t tid;
    const int threaded = n >= 4096 && pthread_create(&tid, NULL, sum_gpu_hours, &sums) == 0; /* the shared trace's tests run it */
    if (!threaded) sum_gpu_hours(&sums);
    if (n > 0) {
        double lo = s[0], end_max = -INFINITY, cal_max = -INFINITY, wmax = -INFINITY;
        for (Py_ssize_t j = 0; j < n; j++) {
            double e = (b[j] ? d[j] * slowdown : d[j]) + st[j];
            double c = s[j] + d[j];
            double w = (st[j] - s[j]) / 3600.0;
            if (s[j] < lo) lo = s[j];
            if (e > end_max) end_max = e;
            if (c > cal_max) cal_max = c;
            if (w > wmax) wmax = w;
            tmp[j] = w;
        }
        span_h = (end_max - lo) / 3600.0;
        calendar_h = (cal_max - lo) / 3600.0;
        mean = np_sum(tmp, n) / (double)n;
        maxw = wmax;
        int64_t known = -1;
        p50 = percentile(tmp, n, 50.0, &known);
        p95 = percentile(tmp, n, 95.0, &known);
    }
    if (threaded) pthread_join(tid, NULL);
    Py_END_ALLOW_THREADS
    out = Py_BuildValue("(dddddddddL)", sums.total_h, sums.reserved_h, sums.burst_h, mean, p50, p95, maxw, span_h,
                        calendar_h, sums.bursts);
done:
    free(tmp);
    PyBuffer_Release(&bs);
    PyBuffer_Release(&bd);
    PyBuffer_Release(&bg);
    PyBuffer_Release(&bst);
    PyBuffer_Release(&bb);
    return out;
}

/* zeros(nbytes) -> bytearray: zeroed, on huge pages where the system gives them (want_huge_pages);
 * the replay's output buffers. */
static PyObject *py_zeros(PyObject *Py_UNUSED(self), PyObject *arg) {
    Py_ssize_t n = PyLong_AsSsize_t(arg);
    if (n < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "nbytes >= 0");
        return NULL;
    }
    PyObject *ba = PyByteArray_FromStringAndSize(NULL, n);
    if (!ba) return NULL;
    want_huge_pages(PyByteArray_AS_STRING(ba), (size_t)n);
    memset(PyByteArray_AS_STRING(ba), 0, (size_t)n);
    return ba;
}

static PyMethodDef methods[] = {
    {"replay", py_replay, METH_VARARGS, replay_doc},
    {"zeros", py_zeros, METH_O, "zeros(nbytes) -> bytearray of nbytes zeros (on huge pages where the system gives them)."},
    {"read_columns", py_read_columns, METH_VARARGS,
     "read_columns(path, names, max_rows=-1, window=0) -> (rows, [memoryview of float64 per name]), or None when\n"
     "the file is not plain, or (rows, None) when it has more than max_rows rows (counted in a first pass, before\n"
     "anything is allocated). The file is mapped `window` bytes at a time (0: 64 MiB), never whole."},
    {"prepare_jobs", py_prepare_jobs, METH_VARARGS,
     "prepare_jobs(kind, columns) -> ((skipped counts), gpu_hours, submit, duration, gpus, units) or None: the\n"
     "jobs of a replay from read_columns' columns (0: submit, duration, gpus; 1: the openb pod list's five),\n"
     "checked, skipped, sorted; None where the Python readers raise (they name the line and field)."},
    {"summary", py_summary, METH_VARARGS,
     "summary(submit, duration, gpus, start, burst, slowdown) -> (total_h, reserved_h, burst_h, wait mean, p50,\n"
     "p95, max, span_h, calendar_h, burst_jobs): gpuplan.sim.replay.summarize's numbers, as numpy computes them."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_ckernel", "The compiled replay loop (C). Semantics: gpuplan.sim.replay.", -1, methods,
};

PyMODINIT_FUNC PyInit__ckernel(void) { return PyModule_Create(&module); }
