/* arena: one bump allocator per model run, released with a single arena_free. */
#ifndef KT_ARENA_H
#define KT_ARENA_H
#include <stddef.h>

typedef struct arena_block arena_block;
/** An arena; zero-initialise it (arena a = {0}) before use. */
typedef struct arena {
    arena_block *head;
    arena_block *spare; /* standard-size blocks released by arena_release, reused first */
    arena_block *spare_big; /* larger blocks (one allocation each) released, reused best-fit */
    size_t nblocks;     /* blocks allocated so far: an arena that keeps growing gets huge ones */
} arena;

/** Zeroed, 16-byte aligned memory that lives until arena_free; NULL on out-of-memory or
 *  when n*size overflows. */
void *arena_calloc(arena *a, size_t n, size_t size);
/** The same without zeroing (hot paths that write every byte they read): 16-byte aligned,
 *  contents undefined. */
void *arena_alloc(arena *a, size_t n, size_t size);
/** Copy of a NUL-terminated string (NULL in, NULL out). */
char *arena_strdup(arena *a, const char *s);
/** A position in an arena (arena_mark), to free what was allocated after it (arena_release). */
typedef struct arena_pos {
    arena_block *block;
    size_t used;
} arena_pos;
/** The current position. */
arena_pos arena_mark(const arena *a);
/** Free everything allocated since `pos` (a position of this arena, not already released):
 *  scratch memory of one step of a long loop. Blocks are kept for the next steps (no
 *  malloc/free churn, no page faults on memory the C library gave back); arena_free returns
 *  them. */
void arena_release(arena *a, arena_pos pos);
/** Let an arena that will hold megabytes (a command's results) take huge blocks (2 MiB,
 *  transparent huge pages where the kernel allows) from its first allocation: one page fault
 *  per block instead of 512. Call on an empty arena. */
void arena_use_huge(arena *a);
/** Free every block. The arena may be reused afterwards. */
void arena_free(arena *a);

#endif
