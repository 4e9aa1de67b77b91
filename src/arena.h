/* arena: one bump allocator per model run, released with a single arena_free. */
#ifndef KT_ARENA_H
#define KT_ARENA_H
#include <stddef.h>

typedef struct arena_block arena_block;
/** An arena; zero-initialise it (arena a = {0}) before use. */
typedef struct arena {
    arena_block *head;
} arena;

/** Zeroed, 16-byte aligned memory that lives until arena_free; NULL on out-of-memory or
 *  when n*size overflows. */
void *arena_calloc(arena *a, size_t n, size_t size);
/** Copy of a NUL-terminated string (NULL in, NULL out). */
char *arena_strdup(arena *a, const char *s);
/** Free every block. The arena may be reused afterwards. */
void arena_free(arena *a);

#endif
