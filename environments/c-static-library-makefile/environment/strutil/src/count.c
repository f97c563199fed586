#include <string.h>

#include "strutil.h"

size_t su_count(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    size_t found = 0;

    if (n == 0)
        return 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + n, needle))
        found++;
    return found;
}
