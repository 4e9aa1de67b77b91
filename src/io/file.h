/* file: whole files read into memory, with errors that name the file. */
#ifndef KT_FILE_H
#define KT_FILE_H
#include <stddef.h>

#include "../err.h"

/** Read all of `path` into a NUL-terminated malloc'd buffer (caller frees); *len gets its size.
 *  NULL with e set when it cannot be opened or read, when it exceeds max_bytes, or when memory
 *  runs out. */
char *io_read_file(const char *path, size_t max_bytes, size_t *len, kt_err *e);

#endif
