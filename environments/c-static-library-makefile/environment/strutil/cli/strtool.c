/* strtool: apply a strutil operation to every line of standard input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"

static void usage(void)
{
    fputs("usage: strtool upper|lower|trim|reverse|count NEEDLE|split SEP\n", stderr);
}

int main(int argc, char **argv)
{
    char line[4096];
    const char *op;

    if (argc < 2) {
        usage();
        return 2;
    }
    op = argv[1];
    if ((strcmp(op, "count") == 0 || strcmp(op, "split") == 0) ? argc != 3 : argc != 2) {
        usage();
        return 2;
    }
    if (strcmp(op, "split") == 0 && strlen(argv[2]) != 1) {
        fputs("strtool: SEP must be one character\n", stderr);
        return 2;
    }
    if (strcmp(op, "upper") && strcmp(op, "lower") && strcmp(op, "trim") &&
        strcmp(op, "reverse") && strcmp(op, "count") && strcmp(op, "split")) {
        usage();
        return 2;
    }
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = '\0';
        if (strcmp(op, "upper") == 0) {
            puts(su_upper(line));
        } else if (strcmp(op, "lower") == 0) {
            puts(su_lower(line));
        } else if (strcmp(op, "trim") == 0) {
            puts(su_trim(line));
        } else if (strcmp(op, "reverse") == 0) {
            puts(su_reverse(line));
        } else if (strcmp(op, "count") == 0) {
            printf("%zu\n", su_count(line, argv[2]));
        } else {
            size_t n = 0;
            char **fields = su_split(line, argv[2][0], &n);

            if (!fields) {
                perror("strtool");
                return 1;
            }
            for (size_t i = 0; i < n; i++)
                printf("%s%s", i ? "|" : "", fields[i]);
            putchar('\n');
            su_split_free(fields);
        }
    }
    return 0;
}
