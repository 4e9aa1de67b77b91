/* arena: one bump allocator per model run. */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct arena_block {
    arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

/* The first ARENA_SMALL_BLOCKS blocks of an arena are 256 KiB each (a small run touches
 * little memory); an arena that outgrows them takes 2 MiB blocks aligned to 2 MiB and advised
 * as transparent huge pages (madvise mode, Debian's default): one page fault per block instead
 * of 512. Page faults were 40% of a `compare --workload all` process on the 2-core VM (2,207
 * faults, 35 of 85 ms in the kernel); issue 18. */
enum {
    ARENA_BLOCK_BYTES = 256 * 1024,
    ARENA_SMALL_BLOCKS = 4,
    ARENA_HUGE_BYTES = 2 * 1024 * 1024
};

/* A block whose whole span (header and data) is `span` bytes: huge ones aligned and advised. */
static arena_block *block_new(size_t span, int huge)
{
    arena_block *b = huge ? aligned_alloc(ARENA_HUGE_BYTES, span) : malloc(span);
    if (!b)
        return NULL;
#ifdef MADV_HUGEPAGE
    if (huge)
        (void)madvise(b, span, MADV_HUGEPAGE); /* a hint: without THP it changes nothing */
#endif
    b->cap = span - sizeof *b;
    return b;
}

/* A block kept on the spare list (reused by arena_alloc), not freed, when released. */
static int standard(const arena_block *b)
{
    return b->cap == ARENA_BLOCK_BYTES || b->cap == ARENA_HUGE_BYTES - sizeof *b;
}

void *arena_calloc(arena *a, size_t n, size_t size)
{
    void *p = arena_alloc(a, n, size);
    if (p) {
        size_t bytes = (n * size + 15u) & ~(size_t)15u; /* no overflow: arena_alloc checked */
        memset(p, 0, bytes ? bytes : 16);
    }
    return p;
}

void *arena_alloc(arena *a, size_t n, size_t size)
{
    size_t bytes;
    arena_block *b;
    if (size && n > SIZE_MAX / size)
        return NULL;
    bytes = (n * size + 15u) & ~(size_t)15u;
    if (bytes == 0)
        bytes = 16;
    b = a->head;
    if (!b || b->cap - b->used < bytes) {
        arena_block **sp = &a->spare; /* the first spare block that fits */
        while (*sp && (*sp)->cap < bytes)
            sp = &(*sp)->next;
        if (!*sp && bytes > ARENA_HUGE_BYTES - sizeof *b) {
            /* an allocation of its own: the smallest released one that holds it (a 100,000-op
             * graph's per-op arrays: freed to the C library and faulted in again otherwise) */
            arena_block **best = NULL;
            for (arena_block **q = &a->spare_big; *q; q = &(*q)->next)
                if ((*q)->cap >= bytes && (!best || (*q)->cap < (*best)->cap))
                    best = q;
            if (best)
                sp = best;
        }
        if (*sp) {
            b = *sp;
            *sp = b->next;
        } else if (a->nblocks >= ARENA_SMALL_BLOCKS && bytes <= ARENA_HUGE_BYTES - sizeof *b) {
            if (!(b = block_new(ARENA_HUGE_BYTES, 1)))
                return NULL;
            a->nblocks++;
        } else {
            size_t cap = bytes > ARENA_BLOCK_BYTES ? bytes : ARENA_BLOCK_BYTES;
            if (cap > SIZE_MAX - sizeof *b || !(b = block_new(sizeof *b + cap, 0)))
                return NULL;
            a->nblocks++;
        }
        b->used = 0;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += bytes;
    return p;
}

char *arena_strdup(arena *a, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *p = arena_calloc(a, n, 1);
    if (p)
        memcpy(p, s, n);
    return p;
}

arena_pos arena_mark(const arena *a)
{
    arena_pos p = {a->head, a->head ? a->head->used : 0};
    return p;
}

void arena_release(arena *a, arena_pos pos)
{
    while (a->head && a->head != pos.block) {
        arena_block *n = a->head->next;
        arena_block **list = standard(a->head) ? &a->spare : &a->spare_big;
        a->head->next = *list;
        *list = a->head;
        a->head = n;
    }
    if (a->head)
        a->head->used = pos.used;
}

void arena_use_huge(arena *a)
{
    if (a->nblocks < ARENA_SMALL_BLOCKS)
        a->nblocks = ARENA_SMALL_BLOCKS;
}

void arena_free(arena *a)
{
    arena_block *lists[3] = {a->head, a->spare, a->spare_big};
    for (int k = 0; k < 3; k++)
        for (arena_block *b = lists[k]; b;) {
            arena_block *n = b->next;
            free(b);
            b = n;
        }
    a->head = a->spare = a->spare_big = NULL;
    a->nblocks = 0;
}
