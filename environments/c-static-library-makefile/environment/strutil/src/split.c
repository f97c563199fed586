#include <stdlib.h>
#include <string.h>

#include "strutil.h"

static char *copy_range(const char *start, size_t len)
{
    char *out = malloc(len + 1);

    if (!out)
        return NULL;
    memcpy(out, start, len);
    out[len] = '\0';
    return out;
}

char **su_split(const char *s, char sep, size_t *count)
{
    size_t fields = 1;
    char **out;
    size_t i = 0;
    const char *start = s;

    for (const char *p = s; *p; p++)
        if (*p == sep)
            fields++;
    out = calloc(fields + 1, sizeof *out);
    if (!out)
        return NULL;
    for (const char *p = s;; p++) {
        if (*p == sep || *p == '\0') {
            out[i] = copy_range(start, (size_t)(p - start));
            if (!out[i]) {
                su_split_free(out);
                return NULL;
            }
            i++;
            start = p + 1;
            if (*p == '\0')
                break;
        }
    }
    *count = fields;
    return out;
}

void su_split_free(char **fields)
{
    if (!fields)
        return;
    for (char **f = fields; *f; f++)
        free(*f);
    free(fields);
}
