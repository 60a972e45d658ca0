"""The compiled replay loop (numba, cached on disk). Semantics: see `gpuplan.sim.replay`.

Data structures, all flat arrays:
- a binary heap of running jobs keyed by end time;
- the queue as flags over jobs in trace order (jobs are queued in arrival order, so queue order is
  trace order) with a head pointer that only moves forward;
- two min-segment trees over jobs: queued single-node jobs by GPU units, queued multi-node jobs by
  nodes needed; the leftmost leaf <= a bound is the next queued job that fits;
- a max-segment tree over nodes by free units: first-fit is the leftmost node with free >= need.
Packing `gpu` is one node that holds the whole pool.
"""

from __future__ import annotations

import numpy as np
from numba import njit

BIG = np.int64(1) << np.int64(62)


@njit(cache=True)
def _set_min(tree, size, pos, value):  # type: ignore[no-untyped-def]
    p = pos + size
    tree[p] = value
    p >>= 1
    while p >= 1:
        a = tree[2 * p]
        b = tree[2 * p + 1]
        tree[p] = a if a < b else b
        p >>= 1


@njit(cache=True)
def _leftmost_le(tree, size, bound):  # type: ignore[no-untyped-def]
    if tree[1] > bound:
        return -1
    p = 1
    while p < size:
        p = 2 * p if tree[2 * p] <= bound else 2 * p + 1
    return p - size


@njit(cache=True)
def _set_max(tree, size, pos, value):  # type: ignore[no-untyped-def]
    p = pos + size
    tree[p] = value
    p >>= 1
    while p >= 1:
        a = tree[2 * p]
        b = tree[2 * p + 1]
        tree[p] = a if a > b else b
        p >>= 1


@njit(cache=True)
def _leftmost_ge(tree, size, bound):  # type: ignore[no-untyped-def]
    if tree[1] < bound:
        return -1
    p = 1
    while p < size:
        p = 2 * p if tree[2 * p] >= bound else 2 * p + 1
    return p - size


@njit(cache=True)
def replay_kernel(s, d, u, nodes, node_cap, wait_s, best_effort, start, burst):  # type: ignore[no-untyped-def]
    n = s.shape[0]
    # nodes needed: 0 = fits on one node
    need = np.zeros(n, dtype=np.int64)
    total_need = 0
    for j in range(n):
        if u[j] > node_cap:
            need[j] = (u[j] + node_cap - 1) // node_cap
            if need[j] <= nodes:
                total_need += need[j]
    size = 1
    while size < n and best_effort:  # the queue trees serve only best-effort passes
        size <<= 1
    tree_a = np.full(2 * size, BIG, dtype=np.int64)  # queued single-node jobs: units
    tree_b = np.full(2 * size, BIG, dtype=np.int64)  # queued multi-node jobs: nodes needed
    nsize = 1
    while nsize < nodes:
        nsize <<= 1
    node_tree = np.full(2 * nsize, -1, dtype=np.int64)
    free = np.empty(nodes, dtype=np.int64)
    for x in range(nodes):
        free[x] = node_cap
        _set_max(node_tree, nsize, x, node_cap)
    n_empty = nodes
    node_of = np.full(n, -1, dtype=np.int64)
    mstart = np.zeros(n, dtype=np.int64)
    mbuf = np.empty(max(total_need, 1), dtype=np.int64)
    mtop = 0
    queued = np.zeros(n, dtype=np.bool_)
    heap_t = np.empty(n, dtype=np.float64)
    heap_j = np.empty(n, dtype=np.int64)
    hn = 0
    i = 0
    h = 0
    finite_wait = wait_s < np.inf

    while True:
        while h < i and not queued[h]:
            h += 1
        t = np.inf
        if i < n:
            t = s[i]
        if hn > 0 and heap_t[0] < t:
            t = heap_t[0]
        if finite_wait and h < i and s[h] + wait_s < t:
            t = s[h] + wait_s
        if t == np.inf:
            break
        # 1. completions
        while hn > 0 and heap_t[0] <= t:
            j = heap_j[0]
            hn -= 1
            if hn > 0:  # sift the last element down from the root
                lt = heap_t[hn]
                lj = heap_j[hn]
                p = 0
                while True:
                    c = 2 * p + 1
                    if c >= hn:
                        break
                    if c + 1 < hn and heap_t[c + 1] < heap_t[c]:
                        c += 1
                    if heap_t[c] < lt:
                        heap_t[p] = heap_t[c]
                        heap_j[p] = heap_j[c]
                        p = c
                    else:
                        break
                heap_t[p] = lt
                heap_j[p] = lj
            if need[j] == 0:
                x = node_of[j]
                if free[x] == node_cap:
                    n_empty -= 1
                free[x] += u[j]
                if free[x] == node_cap:
                    n_empty += 1
                _set_max(node_tree, nsize, x, free[x])
            else:
                for q in range(mstart[j], mstart[j] + need[j]):
                    x = mbuf[q]
                    free[x] = node_cap
                    n_empty += 1
                    _set_max(node_tree, nsize, x, node_cap)
        # 2. arrivals
        while i < n and s[i] <= t:
            if need[i] > nodes:
                start[i] = t
                burst[i] = True
            else:
                queued[i] = True
                if best_effort:
                    if need[i] == 0:
                        _set_min(tree_a, size, i, u[i])
                    else:
                        _set_min(tree_b, size, i, need[i])
            i += 1
        # 3. - 5. start pass, deadlines, start pass
        for phase in range(3):
            if phase == 1:
                if not finite_wait:
                    break
                any_burst = False
                while True:
                    while h < i and not queued[h]:
                        h += 1
                    if h >= i or s[h] + wait_s > t:
                        break
                    queued[h] = False
                    if best_effort:
                        if need[h] == 0:
                            _set_min(tree_a, size, h, BIG)
                        else:
                            _set_min(tree_b, size, h, BIG)
                    start[h] = t
                    burst[h] = True
                    any_burst = True
                if not any_burst:
                    break  # the second start pass would find nothing new
                continue
            while True:
                # pick the next job to start, or stop
                j = -1
                if best_effort:
                    maxfree = node_tree[1]
                    ja = _leftmost_le(tree_a, size, maxfree)
                    jb = _leftmost_le(tree_b, size, n_empty)
                    if ja >= 0 and (jb < 0 or ja < jb):
                        j = ja
                    elif jb >= 0:
                        j = jb
                else:
                    while h < i and not queued[h]:
                        h += 1
                    if h < i:
                        if need[h] == 0:
                            if u[h] <= node_tree[1]:
                                j = h
                        elif need[h] <= n_empty:
                            j = h
                if j < 0:
                    break
                # start j at t
                queued[j] = False
                if best_effort:
                    if need[j] == 0:
                        _set_min(tree_a, size, j, BIG)
                    else:
                        _set_min(tree_b, size, j, BIG)
                if need[j] == 0:
                    x = _leftmost_ge(node_tree, nsize, u[j])
                    if free[x] == node_cap:
                        n_empty -= 1
                    free[x] -= u[j]
                    if free[x] == node_cap:
                        n_empty += 1
                    _set_max(node_tree, nsize, x, free[x])
                    node_of[j] = x
                else:
                    mstart[j] = mtop
                    for _ in range(need[j]):
                        x = _leftmost_ge(node_tree, nsize, node_cap)
                        free[x] = 0
                        n_empty -= 1
                        _set_max(node_tree, nsize, x, 0)
                        mbuf[mtop] = x
                        mtop += 1
                start[j] = t
                # push (t + d[j], j) on the heap
                et = t + d[j]
                p = hn
                hn += 1
                while p > 0:
                    par = (p - 1) >> 1
                    if heap_t[par] > et:
                        heap_t[p] = heap_t[par]
                        heap_j[p] = heap_j[par]
                        p = par
                    else:
                        break
                heap_t[p] = et
                heap_j[p] = j
