#ifndef ITEM_H
#define ITEM_H

#define SKU_MAX 16

struct item {
    char sku[SKU_MAX];
    long qty;
    long price_cents;
};

/* Stock value of one line: qty * price_cents. */
long item_value(const struct item *it);

#endif
