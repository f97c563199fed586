/* csvstat: per-column statistics of a CSV file. */
#include <stdio.h>
#include <string.h>

#include "csv.h"
#include "stats.h"

int main(int argc, char **argv)
{
    struct csv_reader reader;
    struct record rec = {0};
    struct table table;
    const char *err = NULL;
    enum csv_status st;
    long recno = 0;
    int rc = 0;
    FILE *in = stdin;

    if (argc > 2) {
        fputs("usage: csvstat [FILE]\n", stderr);
        return 2;
    }
    if (argc == 2 && strcmp(argv[1], "-") != 0) {
        in = fopen(argv[1], "rb");
        if (!in) {
            perror(argv[1]);
            return 2;
        }
    }
    csv_init(&reader, in);
    table_init(&table);
    st = csv_next(&reader, &rec, &err);
    if (st == CSV_EOF) {
        fputs("csvstat: no header\n", stderr);
        rc = 1;
        goto out;
    }
    if (st == CSV_OK) {
        recno = 1;
        for (size_t i = 0; i < rec.nfields; i++) {
            if (table_add_column(&table, rec.fields[i], rec.lens[i])) {
                fputs("csvstat: out of memory\n", stderr);
                rc = 1;
                goto out;
            }
        }
        while ((st = csv_next(&reader, &rec, &err)) == CSV_OK) {
            recno++;
            if (rec.nfields > table.ncols) {
                fprintf(stderr, "csvstat: record %ld has %zu fields, header has %zu\n", recno,
                        rec.nfields, table.ncols);
                rc = 1;
                goto out;
            }
            for (size_t i = 0; i < table.ncols; i++)
                column_add(&table.cols[i], rec.fields[i], rec.lens[i]);
        }
    }
    if (st == CSV_ERROR) {
        fprintf(stderr, "csvstat: line %ld: %s\n", reader.line, err);
        rc = 1;
        goto out;
    }
    table_print(&table, stdout);
out:
    record_free(&rec);
    table_free(&table);
    csv_free(&reader);
    if (in != stdin)
        fclose(in);
    return rc;
}
