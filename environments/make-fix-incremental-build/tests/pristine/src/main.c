/* inv: summarize an inventory file of "sku,qty,price_cents" lines. */
#include <stdio.h>
#include <string.h>

#include "parse.h"
#include "report.h"
#include "version.h"

int main(int argc, char **argv)
{
    char line[512];
    struct report rep;
    struct item it;
    long lineno = 0;
    int bad = 0;
    FILE *in;

    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("inv %s\n", INV_VERSION);
        return 0;
    }
    if (argc != 2) {
        fputs("usage: inv FILE | inv --version\n", stderr);
        return 2;
    }
    in = fopen(argv[1], "r");
    if (!in) {
        perror(argv[1]);
        return 2;
    }
    report_init(&rep);
    while (fgets(line, sizeof line, in)) {
        lineno++;
        if (line[0] == '#' || line[strspn(line, " \t\r\n")] == '\0')
            continue;
        if (parse_line(line, &it) != 0) {
            fprintf(stderr, "inv: line %ld: malformed\n", lineno);
            bad = 1;
            continue;
        }
        report_add(&rep, &it);
    }
    fclose(in);
    report_print(&rep, stdout);
    return bad ? 1 : 0;
}
