#!/usr/bin/env bash
# Reference fix: rewrite the buggy pieces with correct versions.
set -euo pipefail
cd /app/csvstat
python3 - <<'PY'
from pathlib import Path


def edit(path, old, new):
    p = Path(path)
    s = p.read_text()
    assert s.count(old) == 1, (path, old)
    p.write_text(s.replace(old, new))


# Field buffer: keep room for the terminator.
edit("src/csv.c", "if (r->len + 1 > r->cap) {", "if (r->len + 2 > r->cap) {")
# CRLF: a blank CRLF line is skipped, a CR before LF ends the record.
edit("src/csv.c", """        if (rec->nfields == 0 && c == '\\n') {""", """        if (rec->nfields == 0 && c == '\\r') {
            int d = getc(r->in);

            if (d == '\\n')
                c = d;
            else
                ungetc(d, r->in);
        }
        if (rec->nfields == 0 && c == '\\n') {""")
edit("src/csv.c", """        while (c != EOF && c != ',' && c != '\\n') {
""", """        while (c != EOF && c != ',' && c != '\\n') {
            if (c == '\\r') {
                int d = getc(r->in);

                if (d == '\\n') {
                    c = d;
                    break;
                }
                ungetc(d, r->in);
            }
""")
# The set owns copies of its strings, and rehashes with the new mask.
edit("src/strset.c", """    copy = (char *)str;   /* the caller keeps the string alive */
    s->slots[j] = copy;""", """    copy = malloc(len + 1);
    if (!copy)
        return -1;
    memcpy(copy, str, len);
    copy[len] = '\\0';
    s->slots[j] = copy;""")
edit("src/strset.c", """void strset_free(struct strset *s)
{
    free(s->slots);""", """void strset_free(struct strset *s)
{
    for (size_t i = 0; i < s->cap; i++)
        free(s->slots[i]);
    free(s->slots);""")
edit("src/strset.c", "& (s->cap - 1);\n\n            while (slots[j])", "& (ncap - 1);\n\n            while (slots[j])")
# Column names of any length.
edit("include/stats.h", "    char name[32];\n", "    char *name;\n")
edit("src/stats.c", """    (void)len;
    strcpy(c->name, name);
""", """    c->name = malloc(len + 1);
    if (!c->name)
        return -1;
    memcpy(c->name, name, len);
    c->name[len] = '\\0';
""")
edit("src/stats.c", """        strset_free(&t->cols[i].distinct);""", """        free(t->cols[i].name);
        strset_free(&t->cols[i].distinct);""")
# Numbers follow the grammar, not whatever strtod accepts.
s = Path("src/stats.c").read_text()
a = s.index("/* A value is numeric when strtod")
b = s.index("void column_add")
s = s[:a] + '''/* [+-]? (DIGITS [. DIGITS?]? | . DIGITS) ([eE] [+-]? DIGITS)? and nothing else. */
int is_number(const char *s, size_t len)
{
    size_t i = 0, digits = 0;

    if (i < len && (s[i] == '+' || s[i] == '-'))
        i++;
    while (i < len && isdigit((unsigned char)s[i])) {
        i++;
        digits++;
    }
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && isdigit((unsigned char)s[i])) {
            i++;
            digits++;
        }
    }
    if (digits == 0)
        return 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        size_t exp = 0;

        i++;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            i++;
        while (i < len && isdigit((unsigned char)s[i])) {
            i++;
            exp++;
        }
        if (exp == 0)
            return 0;
    }
    return i == len;
}

''' + s[b:]
Path("src/stats.c").write_text("#include <ctype.h>\n" + s)
# Short records: missing trailing fields are empty values.
edit("src/main.c", """            for (size_t i = 0; i < table.ncols; i++)
                column_add(&table.cols[i], rec.fields[i], rec.lens[i]);""", """            for (size_t i = 0; i < table.ncols; i++) {
                if (i < rec.nfields)
                    column_add(&table.cols[i], rec.fields[i], rec.lens[i]);
                else
                    column_add(&table.cols[i], "", 0);
            }""")
PY
make -B
