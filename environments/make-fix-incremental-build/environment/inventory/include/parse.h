#ifndef PARSE_H
#define PARSE_H

#include "item.h"

/* Parse "sku,qty,price_cents". Returns 0 on success, -1 on a malformed line. */
int parse_line(const char *line, struct item *out);

#endif
