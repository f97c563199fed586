#include "item.h"

long item_value(const struct item *it)
{
    return it->qty * it->price_cents;
}
