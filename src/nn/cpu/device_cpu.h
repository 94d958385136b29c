/* The CPU backend's device, as its sessions (session_cpu.c) see it: the thread count the nets run
 * with, the host memory a run may take, and the account of the sessions' workspaces. */
#ifndef PPOCR_NN_CPU_DEVICE_CPU_H
#define PPOCR_NN_CPU_DEVICE_CPU_H

#include <stdatomic.h>
#include <stdint.h>

#include "nn/backend.h"

struct cpu_device {
    struct nn_device base;
    int threads;                   /* as asked (0: OpenMP's default), what the nets are made with */
    int threads_used;              /* what that comes to */
    uint64_t memory_limit;         /* the most workspace one run takes */
    _Atomic uint64_t in_use, peak; /* the sessions' workspaces together (sessions on threads of their own) */
};

/* A session's workspace went from `from` to `to` bytes. */
void cpu_device_account(struct cpu_device *dev, uint64_t from, uint64_t to);

#endif
