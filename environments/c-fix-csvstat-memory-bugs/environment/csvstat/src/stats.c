#include <stdlib.h>
#include <string.h>

#include "stats.h"

void table_init(struct table *t)
{
    memset(t, 0, sizeof *t);
}

int table_add_column(struct table *t, const char *name, size_t len)
{
    struct column *c;

    if (t->ncols == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 4;
        struct column *ncols = realloc(t->cols, ncap * sizeof *ncols);

        if (!ncols)
            return -1;
        t->cols = ncols;
        t->cap = ncap;
    }
    c = &t->cols[t->ncols];
    memset(c, 0, sizeof *c);
    (void)len;
    strcpy(c->name, name);
    c->numeric = 1;
    strset_init(&c->distinct);
    t->ncols++;
    return 0;
}

/* A value is numeric when strtod consumes all of it. */
int is_number(const char *s, size_t len)
{
    char *end;

    if (len == 0)
        return 0;
    strtod(s, &end);
    return end == s + len;
}

void column_add(struct column *c, const char *value, size_t len)
{
    if (len == 0) {
        c->empty++;
        return;
    }
    if (c->numeric && is_number(value, len)) {
        double v = strtod(value, NULL);

        if (c->count == 0 || v < c->min)
            c->min = v;
        if (c->count == 0 || v > c->max)
            c->max = v;
        c->sum += v;
    } else {
        c->numeric = 0;
    }
    c->count++;
    if (len > c->longest)
        c->longest = len;
    strset_add(&c->distinct, value, len);
}

void table_print(const struct table *t, FILE *out)
{
    for (size_t i = 0; i < t->ncols; i++) {
        const struct column *c = &t->cols[i];

        if (c->count == 0)
            fprintf(out, "%s: empty count=0 empty=%zu\n", c->name, c->empty);
        else if (c->numeric)
            fprintf(out, "%s: numeric count=%zu empty=%zu min=%.6g max=%.6g mean=%.6g\n", c->name,
                    c->count, c->empty, c->min, c->max, c->sum / (double)c->count);
        else
            fprintf(out, "%s: text count=%zu empty=%zu distinct=%zu longest=%zu\n", c->name,
                    c->count, c->empty, c->distinct.count, c->longest);
    }
}

void table_free(struct table *t)
{
    for (size_t i = 0; i < t->ncols; i++) {
        strset_free(&t->cols[i].distinct);
    }
    free(t->cols);
    memset(t, 0, sizeof *t);
}
