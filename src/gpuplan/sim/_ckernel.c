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
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BIG ((int64_t)1 << 62)

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

/* Returns 0, or -1 when out of memory. */
static int run(const double *s, const double *d, const int64_t *u, int64_t n, int64_t nodes, int64_t node_cap,
               double wait_s, int best_effort, double *start, unsigned char *burst) {
    int rc = -1;
    int64_t size = 1, nsize = 1, total_need = 0;
    int64_t *need = NULL, *tree_a = NULL, *tree_b = NULL, *node_tree = NULL, *freev = NULL, *node_of = NULL;
    int64_t *mstart = NULL, *mbuf = NULL, *heap_j = NULL;
    double *heap_t = NULL;
    unsigned char *queued = NULL;

    need = calloc((size_t)(n > 0 ? n : 1), sizeof(int64_t));
    if (!need) goto done;
    for (int64_t j = 0; j < n; j++) {
        if (u[j] > node_cap) {
            need[j] = (u[j] + node_cap - 1) / node_cap;
            if (need[j] <= nodes) total_need += need[j];
        }
    }
    while (size < n && best_effort) size <<= 1; /* the queue trees serve only best-effort passes */
    while (nsize < nodes) nsize <<= 1;
    tree_a = malloc(sizeof(int64_t) * 2 * (size_t)size);
    tree_b = malloc(sizeof(int64_t) * 2 * (size_t)size);
    node_tree = malloc(sizeof(int64_t) * 2 * (size_t)nsize);
    freev = malloc(sizeof(int64_t) * (size_t)(nodes > 0 ? nodes : 1));
    node_of = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    mstart = calloc((size_t)(n > 0 ? n : 1), sizeof(int64_t));
    mbuf = malloc(sizeof(int64_t) * (size_t)(total_need > 0 ? total_need : 1));
    queued = calloc((size_t)(n > 0 ? n : 1), 1);
    heap_t = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    heap_j = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    if (!tree_a || !tree_b || !node_tree || !freev || !node_of || !mstart || !mbuf || !queued || !heap_t || !heap_j)
        goto done;
    for (int64_t k = 0; k < 2 * size; k++) tree_a[k] = tree_b[k] = BIG;
    for (int64_t k = 0; k < 2 * nsize; k++) node_tree[k] = -1;
    for (int64_t x = 0; x < nodes; x++) {
        freev[x] = node_cap;
        set_max(node_tree, nsize, x, node_cap);
    }
    for (int64_t j = 0; j < n; j++) node_of[j] = -1;

    int64_t n_empty = nodes, mtop = 0, hn = 0, i = 0, h = 0;
    const int finite_wait = wait_s < INFINITY;

    for (;;) {
        while (h < i && !queued[h]) h++;
        double t = INFINITY;
        if (i < n) t = s[i];
        if (hn > 0 && heap_t[0] < t) t = heap_t[0];
        if (finite_wait && h < i && s[h] + wait_s < t) t = s[h] + wait_s;
        if (t == INFINITY) break;
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
            if (need[j] == 0) {
                int64_t x = node_of[j];
                if (freev[x] == node_cap) n_empty--;
                freev[x] += u[j];
                if (freev[x] == node_cap) n_empty++;
                set_max(node_tree, nsize, x, freev[x]);
            } else {
                for (int64_t q = mstart[j]; q < mstart[j] + need[j]; q++) {
                    int64_t x = mbuf[q];
                    freev[x] = node_cap;
                    n_empty++;
                    set_max(node_tree, nsize, x, node_cap);
                }
            }
        }
        /* 2. arrivals */
        while (i < n && s[i] <= t) {
            if (need[i] > nodes) {
                start[i] = t;
                burst[i] = 1;
            } else {
                queued[i] = 1;
                if (best_effort) {
                    if (need[i] == 0)
                        set_min(tree_a, size, i, u[i]);
                    else
                        set_min(tree_b, size, i, need[i]);
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
                        if (need[h] == 0)
                            set_min(tree_a, size, h, BIG);
                        else
                            set_min(tree_b, size, h, BIG);
                    }
                    start[h] = t;
                    burst[h] = 1;
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
                        if (need[h] == 0) {
                            if (u[h] <= node_tree[1]) j = h;
                        } else if (need[h] <= n_empty) {
                            j = h;
                        }
                    }
                }
                if (j < 0) break;
                /* start j at t */
                queued[j] = 0;
                if (best_effort) {
                    if (need[j] == 0)
                        set_min(tree_a, size, j, BIG);
                    else
                        set_min(tree_b, size, j, BIG);
                }
                if (need[j] == 0) {
                    int64_t x = leftmost_ge(node_tree, nsize, u[j]);
                    if (freev[x] == node_cap) n_empty--;
                    freev[x] -= u[j];
                    if (freev[x] == node_cap) n_empty++;
                    set_max(node_tree, nsize, x, freev[x]);
                    node_of[j] = x;
                } else {
                    mstart[j] = mtop;
                    for (int64_t k = 0; k < need[j]; k++) {
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
    free(need);
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

static int check(Py_buffer *b, Py_ssize_t itemsize, Py_ssize_t n, const char *name) {
    if (b->len != n * itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd items of %zd bytes, got %zd bytes", name, n, itemsize,
                     b->len);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(replay_doc,
             "replay(submit, duration, units, nodes, node_cap, wait_s, best_effort, start, burst)\n\n"
             "Replay sorted jobs (float64 submit and duration seconds, int64 units) through `nodes` nodes of\n"
             "`node_cap` units; writes each job's start (float64) and burst flag (bool) in place.");

static PyObject *py_replay(PyObject *self, PyObject *args) {
    Py_buffer bs, bd, bu, bstart, bburst;
    long long nodes, node_cap;
    double wait_s;
    int best_effort;
    if (!PyArg_ParseTuple(args, "y*y*y*LLdpw*w*", &bs, &bd, &bu, &nodes, &node_cap, &wait_s, &best_effort,
                          &bstart, &bburst))
        return NULL;
    PyObject *out = NULL;
    Py_ssize_t n = bs.len / (Py_ssize_t)sizeof(double);
    if (check(&bs, sizeof(double), n, "submit") || check(&bd, sizeof(double), n, "duration") ||
        check(&bu, sizeof(int64_t), n, "units") || check(&bstart, sizeof(double), n, "start") ||
        check(&bburst, 1, n, "burst"))
        goto done;
    if (nodes < 1 || node_cap < 1) {
        PyErr_SetString(PyExc_ValueError, "nodes and node_cap must be >= 1");
        goto done;
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = run((const double *)bs.buf, (const double *)bd.buf, (const int64_t *)bu.buf, (int64_t)n, (int64_t)nodes,
             (int64_t)node_cap, wait_s, best_effort, (double *)bstart.buf, (unsigned char *)bburst.buf);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        PyErr_NoMemory();
        goto done;
    }
    out = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&bs);
    PyBuffer_Release(&bd);
    PyBuffer_Release(&bu);
    PyBuffer_Release(&bstart);
    PyBuffer_Release(&bburst);
    return out;
}

static PyMethodDef methods[] = {
    {"replay", py_replay, METH_VARARGS, replay_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_ckernel", "The compiled replay loop (C). Semantics: gpuplan.sim.replay.", -1, methods,
};

PyMODINIT_FUNC PyInit__ckernel(void) { return PyModule_Create(&module); }
