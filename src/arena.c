/* arena: one bump allocator per model run. */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct arena_block {
    arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

enum { ARENA_BLOCK_BYTES = 256 * 1024 };

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
        size_t cap = bytes > ARENA_BLOCK_BYTES ? bytes : ARENA_BLOCK_BYTES;
        if (cap == ARENA_BLOCK_BYTES && a->spare) {
            b = a->spare;
            a->spare = b->next;
        } else {
            b = malloc(sizeof *b + cap);
            if (!b)
                return NULL;
        }
        b->cap = cap;
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
        if (a->head->cap == ARENA_BLOCK_BYTES) {
            a->head->next = a->spare;
            a->spare = a->head;
        } else {
            free(a->head);
        }
        a->head = n;
    }
    if (a->head)
        a->head->used = pos.used;
}

void arena_free(arena *a)
{
    arena_block *lists[2] = {a->head, a->spare};
    for (int k = 0; k < 2; k++)
        for (arena_block *b = lists[k]; b;) {
            arena_block *n = b->next;
            free(b);
            b = n;
        }
    a->head = a->spare = NULL;
}
