#ifndef STATS_H
#define STATS_H

#include <stddef.h>
#include <stdio.h>

#include "strset.h"

struct column {
    char name[32];
    size_t count;       /* non-empty values */
    size_t empty;       /* empty values */
    int numeric;        /* every non-empty value so far is a number */
    double min, max, sum;
    size_t longest;
    struct strset distinct;
};

struct table {
    struct column *cols;
    size_t ncols;
    size_t cap;
};

void table_init(struct table *t);
int table_add_column(struct table *t, const char *name, size_t len);
void column_add(struct column *c, const char *value, size_t len);
void table_print(const struct table *t, FILE *out);
void table_free(struct table *t);
int is_number(const char *s, size_t len);

#endif
