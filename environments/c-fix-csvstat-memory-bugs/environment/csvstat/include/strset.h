#ifndef STRSET_H
#define STRSET_H

#include <stddef.h>

/* A set of byte strings (open addressing, linear probing). */
struct strset {
    char **slots;
    size_t *lens;
    size_t cap;     /* always a power of two */
    size_t count;
};

void strset_init(struct strset *s);
/* Add s[0..len) if absent. Returns 1 if added, 0 if present, -1 on OOM. */
int strset_add(struct strset *s, const char *str, size_t len);
void strset_free(struct strset *s);

#endif
