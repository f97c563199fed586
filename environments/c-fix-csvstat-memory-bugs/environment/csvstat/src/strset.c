#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strset.h"

static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ULL;   /* FNV-1a */

    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

void strset_init(struct strset *s)
{
    memset(s, 0, sizeof *s);
}

static int grow(struct strset *s)
{
    size_t ncap = s->cap ? s->cap * 2 : 8;
    char **slots = calloc(ncap, sizeof *slots);
    size_t *lens = calloc(ncap, sizeof *lens);

    if (!slots || !lens) {
        free(slots);
        free(lens);
        return -1;
    }
    for (size_t i = 0; i < s->cap; i++) {
        if (s->slots[i]) {
            size_t j = hash_bytes(s->slots[i], s->lens[i]) & (s->cap - 1);

            while (slots[j])
                j = (j + 1) & (ncap - 1);
            slots[j] = s->slots[i];
            lens[j] = s->lens[i];
        }
    }
    free(s->slots);
    free(s->lens);
    s->slots = slots;
    s->lens = lens;
    s->cap = ncap;
    return 0;
}

int strset_add(struct strset *s, const char *str, size_t len)
{
    size_t j;
    char *copy;

    if ((s->count + 1) * 4 > s->cap * 3 && grow(s))
        return -1;
    j = hash_bytes(str, len) & (s->cap - 1);
    while (s->slots[j]) {
        if (s->lens[j] == len && memcmp(s->slots[j], str, len) == 0)
            return 0;
        j = (j + 1) & (s->cap - 1);
    }
    copy = (char *)str;   /* the caller keeps the string alive */
    s->slots[j] = copy;
    s->lens[j] = len;
    s->count++;
    return 1;
}

void strset_free(struct strset *s)
{
    free(s->slots);
    free(s->lens);
    memset(s, 0, sizeof *s);
}
