#include <ctype.h>
#include <string.h>

#include "strutil.h"

char *su_trim(char *s)
{
    size_t len = strlen(s);
    size_t start = 0;

    while (len > 0 && isspace((unsigned char)s[len - 1]))
        len--;
    while (start < len && isspace((unsigned char)s[start]))
        start++;
    memmove(s, s + start, len - start);
    s[len - start] = '\0';
    return s;
}
