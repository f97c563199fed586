#ifndef CSV_H
#define CSV_H

#include <stddef.h>
#include <stdio.h>

/* One parsed record: nfields NUL-terminated fields. Reused between calls. */
struct record {
    char **fields;
    size_t *lens;
    size_t nfields;
    size_t cap;
};

struct csv_reader {
    FILE *in;
    long line;          /* current physical line, 1-based */
    char *buf;          /* field being built */
    size_t len, cap;
};

enum csv_status { CSV_OK, CSV_EOF, CSV_ERROR };

void csv_init(struct csv_reader *r, FILE *in);
void csv_free(struct csv_reader *r);
/* Read the next non-blank record into rec. On CSV_ERROR, *errmsg says why. */
enum csv_status csv_next(struct csv_reader *r, struct record *rec, const char **errmsg);
void record_free(struct record *rec);

#endif
