#include <stdio.h>

#include "money.h"

void format_money(long cents, char *buf, size_t size)
{
    unsigned long a = cents < 0 ? 0UL - (unsigned long)cents : (unsigned long)cents;

    snprintf(buf, size, "%s%lu.%02lu", cents < 0 ? "-" : "", a / 100, a % 100);
}
