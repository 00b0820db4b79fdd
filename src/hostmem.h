// SPDX-License-Identifier: MIT
// Host memory for images. The first write to each page of fresh memory is a page fault,
// and giving large blocks back to the system unmaps them (a flush of every core's TLB);
// in a batch of many threads both stall the workers on one another, and the C library
// maps each large block afresh however it is tuned (a thread's heap holds no block of
// 64 MiB or more). So while a run lasts, the blocks its images give back are kept, made
// present, for the next images that fit in them, up to a limit of bytes the run sets.
#ifndef CLIMG_HOSTMEM_H
#define CLIMG_HOSTMEM_H

#include <stdbool.h>
#include <stddef.h>

// Memory for bytes, aligned to a page and whole pages (so a zero-copy device can use it in
// place); *fresh (where given) says whether it came from the system rather than from the
// kept blocks. NULL where there is none (err is not set).
void *hostmem_get(size_t bytes, bool *fresh);

// Gives back memory from hostmem_get, or any other block from malloc and its kin: kept for
// the next hostmem_get where the limit allows, else freed. NULL-safe.
void hostmem_put(void *p);

// How many bytes of given-back blocks may be kept: 0 (the start) keeps none and frees those
// kept. A run raises it to the most bytes its images have held at once (run.c's byte
// budget), a run of one image as well, and sets 0 at its end.
void hostmem_keep(size_t limit);

#endif
