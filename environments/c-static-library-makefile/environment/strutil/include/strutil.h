/* strutil: small string helpers shared by our command-line tools. */
#ifndef STRUTIL_H
#define STRUTIL_H

#include <stddef.h>

/* Remove leading and trailing ASCII whitespace in place; returns s. */
char *su_trim(char *s);

/* Upper-/lower-case ASCII letters in place; return s. */
char *su_upper(char *s);
char *su_lower(char *s);

/* Reverse the bytes of s in place; returns s. */
char *su_reverse(char *s);

/* Number of non-overlapping occurrences of needle in hay (0 for an empty needle). */
size_t su_count(const char *hay, const char *needle);

/* Split s on sep into a NULL-terminated array of newly allocated strings.
 * *count receives the number of fields. Free the result with su_split_free. */
char **su_split(const char *s, char sep, size_t *count);
void su_split_free(char **fields);

#endif
