#!/usr/bin/env bash
set -euo pipefail
cat > /app/ini2json/ini2json.c <<'CSRC'
/* ini2json: convert an INI file to compact JSON. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum kind { K_OBJ, K_STR, K_INT, K_BOOL };

struct node;

struct member {
    char *key;
    size_t klen;
    struct node *val;
};

struct node {
    enum kind kind;
    char *str;              /* K_STR: bytes (may contain anything but NUL) */
    size_t len;
    long long ival;         /* K_INT; K_BOOL: 0/1 */
    struct member *mem;     /* K_OBJ */
    size_t n, cap;
};

struct buf {
    char *p;
    size_t len, cap;
};

static long lineno;

static void die(int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("ini2json: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(code);
}

static void fail(const char *msg)
{
    die(1, "line %ld: %s", lineno, msg);
}

static void *xrealloc(void *p, size_t size)
{
    void *q = realloc(p, size ? size : 1);

    if (!q)
        die(3, "out of memory");
    return q;
}

static void buf_put(struct buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        while (b->len + n + 1 > b->cap)
            b->cap = b->cap ? b->cap * 2 : 64;
        b->p = xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void buf_putc(struct buf *b, char c)
{
    buf_put(b, &c, 1);
}

static struct node *node_new(enum kind k)
{
    struct node *n = xrealloc(NULL, sizeof *n);

    memset(n, 0, sizeof *n);
    n->kind = k;
    return n;
}

static void node_free(struct node *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->n; i++) {
        free(n->mem[i].key);
        node_free(n->mem[i].val);
    }
    free(n->mem);
    free(n->str);
    free(n);
}

static struct member *obj_find(struct node *obj, const char *key, size_t klen)
{
    for (size_t i = 0; i < obj->n; i++)
        if (obj->mem[i].klen == klen && memcmp(obj->mem[i].key, key, klen) == 0)
            return &obj->mem[i];
    return NULL;
}

static struct member *obj_add(struct node *obj, const char *key, size_t klen, struct node *val)
{
    struct member *m;

    if (obj->n == obj->cap) {
        obj->cap = obj->cap ? obj->cap * 2 : 8;
        obj->mem = xrealloc(obj->mem, obj->cap * sizeof *obj->mem);
    }
    m = &obj->mem[obj->n++];
    m->key = xrealloc(NULL, klen + 1);
    memcpy(m->key, key, klen);
    m->key[klen] = '\0';
    m->klen = klen;
    m->val = val;
    return m;
}

static int is_ws(char c)
{
    return c == ' ' || c == '\t';
}

/* Trim [*s, *s + *n) of spaces and tabs. */
static void trim(const char **s, size_t *n)
{
    while (*n && is_ws((*s)[0])) {
        (*s)++;
        (*n)--;
    }
    while (*n && is_ws((*s)[*n - 1]))
        (*n)--;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static void put_utf8(struct buf *b, unsigned cp)
{
    if (cp < 0x80) {
        buf_putc(b, (char)cp);
    } else if (cp < 0x800) {
        buf_putc(b, (char)(0xC0 | (cp >> 6)));
        buf_putc(b, (char)(0x80 | (cp & 0x3F)));
    } else {
        buf_putc(b, (char)(0xE0 | (cp >> 12)));
        buf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        buf_putc(b, (char)(0x80 | (cp & 0x3F)));
    }
}

static struct node *parse_quoted(const char *v, size_t n)
{
    struct buf b = {0};
    struct node *node;
    size_t i = 1;

    buf_put(&b, "", 0);
    for (;;) {
        if (i >= n)
            fail("unterminated string");
        if (v[i] == '"') {
            if (i != n - 1)
                fail("text after closing quote");
            break;
        }
        if (v[i] == '\\') {
            char e = i + 1 < n ? v[i + 1] : '\0';

            switch (e) {
            case '"': buf_putc(&b, '"'); i += 2; continue;
            case '\\': buf_putc(&b, '\\'); i += 2; continue;
            case 'n': buf_putc(&b, '\n'); i += 2; continue;
            case 't': buf_putc(&b, '\t'); i += 2; continue;
            case 'r': buf_putc(&b, '\r'); i += 2; continue;
            case 'u': {
                unsigned cp = 0;

                if (i + 6 > n)
                    fail("bad \\u escape");
                for (size_t k = i + 2; k < i + 6; k++) {
                    int h = hexval(v[k]);

                    if (h < 0)
                        fail("bad \\u escape");
                    cp = cp * 16 + (unsigned)h;
                }
                if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
                    fail("bad \\u escape");
                put_utf8(&b, cp);
                i += 6;
                continue;
            }
            default:
                fail("bad escape");
            }
        }
        buf_putc(&b, v[i]);
        i++;
    }
    node = node_new(K_STR);
    node->str = b.p;
    node->len = b.len;
    return node;
}

/* -?(0|[1-9][0-9]*) within int64, "-0" excluded. */
static int parse_int(const char *v, size_t n, long long *out)
{
    size_t i = 0;
    char tmp[32];
    char *end;

    if (n && v[0] == '-')
        i = 1;
    if (i == n || n >= sizeof tmp)
        return 0;
    if (v[i] == '0' && n - i > 1)
        return 0;
    for (size_t k = i; k < n; k++)
        if (v[k] < '0' || v[k] > '9')
            return 0;
    if (n == 2 && v[0] == '-' && v[1] == '0')
        return 0;
    memcpy(tmp, v, n);
    tmp[n] = '\0';
    errno = 0;
    *out = strtoll(tmp, &end, 10);
    return errno == 0 && *end == '\0';
}

static struct node *typed_value(const char *v, size_t n)
{
    struct node *node;
    long long iv;

    if (n && v[0] == '"')
        return parse_quoted(v, n);
    if (n == 4 && memcmp(v, "true", 4) == 0) {
        node = node_new(K_BOOL);
        node->ival = 1;
        return node;
    }
    if (n == 5 && memcmp(v, "false", 5) == 0)
        return node_new(K_BOOL);
    if (parse_int(v, n, &iv)) {
        node = node_new(K_INT);
        node->ival = iv;
        return node;
    }
    node = node_new(K_STR);
    node->str = xrealloc(NULL, n + 1);
    memcpy(node->str, v, n);
    node->str[n] = '\0';
    node->len = n;
    return node;
}

static struct node *open_section(struct node *root, const char *name, size_t n)
{
    struct node *obj = root;
    size_t start = 0;

    for (size_t i = 0; i <= n; i++) {
        if (i == n || name[i] == '.') {
            const char *part = name + start;
            size_t plen = i - start;
            struct member *m;

            trim(&part, &plen);
            if (plen == 0)
                fail("empty section name");
            m = obj_find(obj, part, plen);
            if (m && m->val->kind != K_OBJ)
                fail("conflict");
            if (!m)
                m = obj_add(obj, part, plen, node_new(K_OBJ));
            obj = m->val;
            start = i + 1;
        }
    }
    return obj;
}

static void handle_line(struct node *root, struct node **current, const char *s, size_t n)
{
    const char *eq;
    const char *key, *val;
    size_t klen, vlen;
    struct member *m;

    trim(&s, &n);
    if (n == 0 || s[0] == ';' || s[0] == '#')
        return;
    if (s[0] == '[') {
        if (n < 2 || s[n - 1] != ']')
            fail("bad section header");
        *current = open_section(root, s + 1, n - 2);
        return;
    }
    eq = memchr(s, '=', n);
    if (!eq)
        fail("expected a section, key = value, or comment");
    key = s;
    klen = (size_t)(eq - s);
    val = eq + 1;
    vlen = n - klen - 1;
    trim(&key, &klen);
    trim(&val, &vlen);
    if (klen == 0)
        fail("empty key");
    m = obj_find(*current, key, klen);
    if (m && m->val->kind == K_OBJ)
        fail("conflict");
    if (m) {
        node_free(m->val);
        m->val = typed_value(val, vlen);
    } else {
        obj_add(*current, key, klen, typed_value(val, vlen));
    }
}

static void emit_string(struct buf *out, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";

    buf_putc(out, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];

        switch (c) {
        case '"': buf_put(out, "\\\"", 2); break;
        case '\\': buf_put(out, "\\\\", 2); break;
        case '\n': buf_put(out, "\\n", 2); break;
        case '\r': buf_put(out, "\\r", 2); break;
        case '\t': buf_put(out, "\\t", 2); break;
        case '\b': buf_put(out, "\\b", 2); break;
        case '\f': buf_put(out, "\\f", 2); break;
        default:
            if (c < 0x20) {
                char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};

                buf_put(out, esc, 6);
            } else {
                buf_putc(out, (char)c);
            }
        }
    }
    buf_putc(out, '"');
}

static void emit(struct buf *out, const struct node *n)
{
    char num[32];

    switch (n->kind) {
    case K_OBJ:
        buf_putc(out, '{');
        for (size_t i = 0; i < n->n; i++) {
            if (i)
                buf_putc(out, ',');
            emit_string(out, n->mem[i].key, n->mem[i].klen);
            buf_putc(out, ':');
            emit(out, n->mem[i].val);
        }
        buf_putc(out, '}');
        break;
    case K_STR:
        emit_string(out, n->str, n->len);
        break;
    case K_INT:
        snprintf(num, sizeof num, "%lld", n->ival);
        buf_put(out, num, strlen(num));
        break;
    case K_BOOL:
        buf_put(out, n->ival ? "true" : "false", n->ival ? 4 : 5);
        break;
    }
}

int main(int argc, char **argv)
{
    FILE *in = stdin;
    struct node *root = node_new(K_OBJ), *current = root;
    struct buf line = {0}, out = {0};
    int c;

    if (argc > 2)
        die(2, "usage: ini2json [FILE]");
    if (argc == 2 && strcmp(argv[1], "-") != 0) {
        in = fopen(argv[1], "rb");
        if (!in)
            die(2, "%s: %s", argv[1], strerror(errno));
    }
    buf_put(&line, "", 0);
    lineno = 0;
    do {
        c = getc(in);
        if (c == '\n' || (c == EOF && line.len > 0)) {
            lineno++;
            if (line.len && line.p[line.len - 1] == '\r')
                line.len--;
            handle_line(root, &current, line.p, line.len);
            line.len = 0;
        } else if (c != EOF) {
            buf_putc(&line, (char)c);
        }
    } while (c != EOF);
    if (in != stdin)
        fclose(in);
    emit(&out, root);
    buf_putc(&out, '\n');
    fwrite(out.p, 1, out.len, stdout);
    free(out.p);
    free(line.p);
    node_free(root);
    return 0;
}
CSRC
cat > /app/ini2json/Makefile <<'MAKE'
CC = gcc
CFLAGS = -std=c11 -Wall -Wextra -Werror -O2

ini2json: ini2json.c
	$(CC) $(CFLAGS) ini2json.c -o $@

clean:
	rm -f ini2json

.PHONY: clean
MAKE
make -C /app/ini2json
