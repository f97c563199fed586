#include <stdlib.h>
#include <string.h>

#include "csv.h"

void csv_init(struct csv_reader *r, FILE *in)
{
    memset(r, 0, sizeof *r);
    r->in = in;
    r->line = 1;
}

void csv_free(struct csv_reader *r)
{
    free(r->buf);
    r->buf = NULL;
}

static int buf_push(struct csv_reader *r, char c)
{
    if (r->len + 1 > r->cap) {
        size_t ncap = r->cap ? r->cap * 2 : 16;
        char *nbuf = realloc(r->buf, ncap);

        if (!nbuf)
            return -1;
        r->buf = nbuf;
        r->cap = ncap;
    }
    r->buf[r->len++] = c;
    r->buf[r->len] = '\0';
    return 0;
}

static int record_push(struct record *rec, const char *s, size_t len)
{
    char *copy;

    if (rec->nfields == rec->cap) {
        size_t ncap = rec->cap ? rec->cap * 2 : 8;
        char **nf = realloc(rec->fields, ncap * sizeof *nf);
        size_t *nl;

        if (!nf)
            return -1;
        rec->fields = nf;
        nl = realloc(rec->lens, ncap * sizeof *nl);
        if (!nl)
            return -1;
        rec->lens = nl;
        rec->cap = ncap;
    }
    copy = malloc(len + 1);
    if (!copy)
        return -1;
    memcpy(copy, s, len);
    copy[len] = '\0';
    rec->fields[rec->nfields] = copy;
    rec->lens[rec->nfields] = len;
    rec->nfields++;
    return 0;
}

static void record_clear(struct record *rec)
{
    for (size_t i = 0; i < rec->nfields; i++)
        free(rec->fields[i]);
    rec->nfields = 0;
}

void record_free(struct record *rec)
{
    record_clear(rec);
    free(rec->fields);
    free(rec->lens);
    memset(rec, 0, sizeof *rec);
}

static int end_field(struct csv_reader *r, struct record *rec)
{
    int rc = record_push(rec, r->buf ? r->buf : "", r->len);

    r->len = 0;
    return rc;
}

enum csv_status csv_next(struct csv_reader *r, struct record *rec, const char **errmsg)
{
    int c;

    record_clear(rec);
    for (;;) {
        r->len = 0;
        /* one field */
        c = getc(r->in);
        if (c == EOF && rec->nfields == 0)
            return CSV_EOF;
        if (rec->nfields == 0 && c == '\n') {
            r->line++;
            continue;   /* blank line */
        }
        if (c == '"') {
            for (;;) {
                c = getc(r->in);
                if (c == EOF) {
                    *errmsg = "unterminated quoted field";
                    return CSV_ERROR;
                }
                if (c == '"') {
                    c = getc(r->in);
                    if (c != '"')
                        break;
                }
                if (c == '\n')
                    r->line++;
                if (buf_push(r, (char)c)) {
                    *errmsg = "out of memory";
                    return CSV_ERROR;
                }
            }
        }
        /* unquoted part (or text after a closing quote) */
        while (c != EOF && c != ',' && c != '\n') {
            if (buf_push(r, (char)c)) {
                *errmsg = "out of memory";
                return CSV_ERROR;
            }
            c = getc(r->in);
        }
        if (end_field(r, rec)) {
            *errmsg = "out of memory";
            return CSV_ERROR;
        }
        if (c == ',')
            continue;
        if (c == '\n')
            r->line++;
        return CSV_OK;
    }
}
