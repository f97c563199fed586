#include <string.h>

#include "money.h"
#include "report.h"

void report_init(struct report *r)
{
    memset(r, 0, sizeof *r);
}

void report_add(struct report *r, const struct item *it)
{
    long v = item_value(it);

    r->lines++;
    r->units += it->qty;
    r->value_cents += v;
    if (r->lines == 1 || v > item_value(&r->largest))
        r->largest = *it;
}

void report_print(const struct report *r, FILE *out)
{
    char total[32], top[32];

    format_money(r->value_cents, total, sizeof total);
    fprintf(out, "lines=%ld units=%ld value=%s\n", r->lines, r->units, total);
    if (r->lines) {
        format_money(item_value(&r->largest), top, sizeof top);
        fprintf(out, "largest=%s value=%s\n", r->largest.sku, top);
    }
}
