#ifndef REPORT_H
#define REPORT_H

#include <stdio.h>

#include "item.h"

struct report {
    long lines;
    long units;
    long value_cents;
    struct item largest;
};

void report_init(struct report *r);
void report_add(struct report *r, const struct item *it);
void report_print(const struct report *r, FILE *out);

#endif
