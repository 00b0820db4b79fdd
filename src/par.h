// SPDX-License-Identifier: MIT
// Running independent tasks on several threads. The thread count never changes a
// result: callers split their work into pieces that depend only on the data, and each
// task's output depends only on its piece.
#ifndef CLIMG_PAR_H
#define CLIMG_PAR_H

// How many threads to use: CLIMG_THREADS when set (1..PAR_MAX_THREADS; anything else is
// ignored with one warning), otherwise the number of CPUs this process may run on, at
// most PAR_DEFAULT_MAX.
#define PAR_MAX_THREADS 256
#define PAR_DEFAULT_MAX 64
int par_threads(void);

// Limits par_threads() on the calling thread to n (0: no limit), for a thread that shares
// the cores with others working at once (a batch's images).
void par_set_share(int n);

// Runs fn(ctx, task, worker) for every task in 0 .. ntasks-1 on at most nworkers threads,
// the calling thread included (it is worker 0); worker is in 0 .. nworkers-1, and two
// tasks running at once never share a worker number, so per-worker scratch state needs no
// lock. Tasks are handed out in increasing order. Returns when all have run. Tasks must
// not call err_set() (its message would stay with the worker's thread): they report
// failure through ctx. When a thread cannot be started, the remaining workers run its
// share.
void par_run(int nworkers, int ntasks, void (*fn)(void *ctx, int task, int worker), void *ctx);

#endif
