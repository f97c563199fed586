#include <stdlib.h>
#include <string.h>

#include "parse.h"

static int parse_long(const char *s, const char *end, long *out)
{
    char *stop;
    long v;

    if (s == end)
        return -1;
    v = strtol(s, &stop, 10);
    if (stop != end || v < 0)
        return -1;
    *out = v;
    return 0;
}

int parse_line(const char *line, struct item *out)
{
    const char *c1 = strchr(line, ',');
    const char *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
    const char *end;
    size_t n;

    if (!c1 || !c2 || strchr(c2 + 1, ','))
        return -1;
    n = (size_t)(c1 - line);
    if (n == 0 || n >= SKU_MAX)
        return -1;
    memset(out, 0, sizeof *out);
    memcpy(out->sku, line, n);
    end = c2 + 1 + strcspn(c2 + 1, "\r\n");
    if (parse_long(c1 + 1, c2, &out->qty) || parse_long(c2 + 1, end, &out->price_cents))
        return -1;
    return 0;
}
