#ifndef MONEY_H
#define MONEY_H

#include <stddef.h>

/* Write cents as "1234.05" (with a leading '-' when negative) into buf. */
void format_money(long cents, char *buf, size_t size);

#endif
