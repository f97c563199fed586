"""Build /app/rpn-calc: ~28 commits of a small C RPN calculator with one regression."""
import os
import subprocess

REPO = "/app/rpn-calc"
files = {}
clock = [1717236000]


def git(*args, env=None):
    subprocess.run(["git", *args], cwd=REPO, check=True, env=env)


def commit(message, author=("Ines Albrecht", "ines@rpn.example")):
    for path, text in files.items():
        full = os.path.join(REPO, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    clock[0] += 4 * 3600 + 17 * 60
    env = dict(os.environ, GIT_AUTHOR_NAME=author[0], GIT_AUTHOR_EMAIL=author[1],
               GIT_COMMITTER_NAME=author[0], GIT_COMMITTER_EMAIL=author[1],
               GIT_AUTHOR_DATE=f"@{clock[0]} +0200", GIT_COMMITTER_DATE=f"@{clock[0]} +0200")
    git("add", "-A", env=env)
    git("commit", "-q", "-m", message, env=env)


def edit(path, old, new, count=1):
    text = files[path]
    if text.count(old) != count:
        raise SystemExit(f"{path}: expected {count} of {old!r}")
    files[path] = text.replace(old, new)


TOM = ("Tomasz Wrona", "tomasz@rpn.example")
os.makedirs(REPO)
git("init", "-q", "-b", "main")

files[".gitignore"] = "rpn\n*.o\n"
files["Makefile"] = """CC ?= cc
CFLAGS ?= -O2 -Wall

rpn: rpn.c
\t$(CC) $(CFLAGS) -o rpn rpn.c -lm

clean:
\trm -f rpn *.o
"""
files["rpn.c"] = r"""#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX 64
static double stack[MAX];
static int sp = 0;

static void die(const char *msg)
{
    fprintf(stderr, "rpn: %s\n", msg);
    exit(2);
}

static void push(double v)
{
    if (sp >= MAX)
        die("stack overflow");
    stack[sp++] = v;
}

static double pop(void)
{
    if (sp <= 0)
        die("stack underflow");
    return stack[--sp];
}

static int is_number(const char *tok)
{
    char *end;
    strtod(tok, &end);
    return end != tok && *end == '\0';
}

static void apply(const char *tok)
{
    double a, b;
    if (strcmp(tok, "+") == 0) { b = pop(); a = pop(); push(a + b); }
    else if (strcmp(tok, "-") == 0) { b = pop(); a = pop(); push(a - b); }
    else if (strcmp(tok, "*") == 0) { b = pop(); a = pop(); push(a * b); }
    else if (strcmp(tok, "/") == 0) { b = pop(); a = pop(); push(a / b); }
    else die("unknown token");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: rpn EXPR\n");
        return 2;
    }
    char *expr = strdup(argv[1]);
    for (char *tok = strtok(expr, " \t"); tok; tok = strtok(NULL, " \t")) {
        if (is_number(tok))
            push(strtod(tok, NULL));
        else
            apply(tok);
    }
    if (sp != 1)
        die("expected exactly one result");
    printf("%.10g\n", pop());
    return 0;
}
"""
commit("Initial RPN calculator")

files["tests/run.sh"] = """#!/bin/sh
# Each line of tests/cases.txt is: EXPRESSION<TAB>EXPECTED OUTPUT
fail=0
while IFS='\t' read -r expr want; do
    got=$(./rpn "$expr" 2>&1)
    if [ "$got" != "$want" ]; then
        echo "FAIL: $expr: got '$got', want '$want'"
        fail=1
    fi
done < tests/cases.txt
[ $fail -eq 0 ] && echo "all tests passed"
exit $fail
"""
files["tests/cases.txt"] = "1 2 +\t3\n5 3 -\t2\n4 2.5 *\t10\n7 2 /\t3.5\n"
edit("Makefile", "clean:", "test: rpn\n\tsh tests/run.sh\n\nclean:")
commit("Add regression tests", TOM)

edit("rpn.c", "push(a / b); }", "if (b == 0) die(\"division by zero\"); push(a / b); }")
files["tests/cases.txt"] += "1 0 /\trpn: division by zero\n"
commit("Report division by zero")

edit("rpn.c", "#include <string.h>\n", "#include <string.h>\n#include <math.h>\n")
edit("rpn.c", "    else die(\"unknown token\");", "    else if (strcmp(tok, \"^\") == 0) { b = pop(); a = pop(); push(pow(a, b)); }\n    else die(\"unknown token\");")
files["tests/cases.txt"] += "2 10 ^\t1024\n"
commit("Add power operator", TOM)

edit("rpn.c", "    else die(\"unknown token\");", "    else if (strcmp(tok, \"dup\") == 0) { a = pop(); push(a); push(a); }\n    else die(\"unknown token\");")
files["tests/cases.txt"] += "3 dup *\t9\n"
commit("Add dup")

files["README.md"] = "# rpn\n\nA reverse Polish notation calculator: `rpn '3 4 + 2 *'` prints `14`.\n"
commit("Add README", TOM)

edit("rpn.c", 'printf("%.10g\\n", pop());', 'printf("%f\\n", pop());')
commit("Print results with fixed precision")

edit("rpn.c", "#define MAX 64", "#define MAX 256")
commit("Allow deeper stacks", TOM)

files["README.md"] += "\nOperators: `+ - * / ^ dup`.\n"
commit("Document operators")

edit("rpn.c", 'printf("%f\\n", pop());', 'printf("%.10g\\n", pop());')
commit("Restore shortest number output", TOM)

edit("rpn.c", "    else die(\"unknown token\");", "    else if (strcmp(tok, \"swap\") == 0) { b = pop(); a = pop(); push(b); push(a); }\n    else die(\"unknown token\");")
files["tests/cases.txt"] += "1 2 swap -\t1\n"
commit("Add swap")

edit("rpn.c", "    if (argc != 2) {", "    if (argc == 2 && strcmp(argv[1], \"--version\") == 0) {\n        puts(\"rpn 0.4\");\n        return 0;\n    }\n    if (argc != 2) {")
files["tests/cases.txt"] += "--version\trpn 0.4\n"
commit("Add --version", TOM)

edit("rpn.c", "die(\"unknown token\");", "die(\"unknown token\"); /* TODO: name the token */")
commit("Note unknown-token TODO")

# ---- the regression: a hand-written lexer that always treats '-' as an operator ----
files["lexer.h"] = """#ifndef LEXER_H
#define LEXER_H

enum kind { TOK_NUM, TOK_WORD };

struct token {
    enum kind kind;
    double value;
    char word[16];
};

/* Read the next token from *p; return 0 at the end of the input. */
int next_token(const char **p, struct token *t);

#endif
"""
files["lexer.c"] = r"""#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "lexer.h"

int next_token(const char **p, struct token *t)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s == '\0')
        return 0;
    if (isdigit((unsigned char)*s) || *s == '.') {
        char *end;
        t->kind = TOK_NUM;
        t->value = strtod(s, &end);
        s = end;
    } else if (strchr("+-*/^", *s)) {
        t->kind = TOK_WORD;
        t->word[0] = *s++;
        t->word[1] = '\0';
    } else {
        size_t n = 0;
        while (s[n] && s[n] != ' ' && s[n] != '\t' && n < sizeof t->word - 1)
            n++;
        t->kind = TOK_WORD;
        memcpy(t->word, s, n);
        t->word[n] = '\0';
        s += n;
    }
    *p = s;
    return 1;
}
"""
edit("rpn.c", """static int is_number(const char *tok)
{
    char *end;
    strtod(tok, &end);
    return end != tok && *end == '\\0';
}

""", "")
edit("rpn.c", '#include <math.h>\n', '#include <math.h>\n#include "lexer.h"\n')
edit("rpn.c", """    char *expr = strdup(argv[1]);
    for (char *tok = strtok(expr, " \\t"); tok; tok = strtok(NULL, " \\t")) {
        if (is_number(tok))
            push(strtod(tok, NULL));
        else
            apply(tok);
    }""", """    const char *cursor = argv[1];
    struct token tok;
    while (next_token(&cursor, &tok)) {
        if (tok.kind == TOK_NUM)
            push(tok.value);
        else
            apply(tok.word);
    }""")
edit("Makefile", "rpn: rpn.c\n\t$(CC) $(CFLAGS) -o rpn rpn.c -lm", "rpn: rpn.c lexer.c lexer.h\n\t$(CC) $(CFLAGS) -o rpn rpn.c lexer.c -lm")
commit("Split tokenizer into lexer.c", TOM)

edit("rpn.c", "    else die(\"unknown token\");", "    else if (strcmp(tok, \"sqrt\") == 0) { a = pop(); if (a < 0) die(\"domain error\"); push(sqrt(a)); }\n    else die(\"unknown token\");")
files["tests/cases.txt"] += "16 sqrt\t4\n"
commit("Add sqrt")

files["version.h"] = '#define RPN_VERSION "0.5"\n'
edit("rpn.c", '#include "lexer.h"\n', '#include "lexer.h"\n#include "version.h"\n')
edit("rpn.c", 'puts("rpn 0.4");', 'puts("rpn " RPN_VERSION);')
edit("Makefile", "rpn: rpn.c lexer.c lexer.h", "rpn: rpn.c lexer.c lexer.h version.h")
files["tests/cases.txt"] = files["tests/cases.txt"].replace("rpn 0.4", "rpn 0.5")
commit("Move version into version.h", TOM)

# ---- three commits that do not build ----
edit("rpn.c", "static void push(double v)", "static void stack_push(double v)")
commit("Rename stack helpers (part 1)")
edit("rpn.c", "static double pop(void)", "static double stack_pop(void)")
commit("Rename stack helpers (part 2)")
files["README.md"] += "\nBuild with `make`, test with `make test`.\n"
commit("Mention make test in README", TOM)
rpn = files["rpn.c"]
head, sep, rest = rpn.partition("static void apply")
rest = rest.replace("push(", "stack_push(").replace("pop()", "stack_pop()")
files["rpn.c"] = head + sep + rest
commit("Rename stack helpers (part 3)")

edit("rpn.c", "    else die(\"unknown token\");", "    else if (strcmp(tok, \"abs\") == 0) { a = stack_pop(); stack_push(fabs(a)); }\n    else die(\"unknown token\");")
files["tests/cases.txt"] += "7 abs\t7\n"
commit("Add abs", TOM)

edit("rpn.c", "    else die(\"unknown token\");", "    else if (strcmp(tok, \"drop\") == 0) { stack_pop(); }\n    else die(\"unknown token\");")
files["tests/cases.txt"] += "1 2 drop\t1\n"
commit("Add drop")

edit("rpn.c", 'fprintf(stderr, "usage: rpn EXPR\\n");', 'fprintf(stderr, "usage: rpn EXPR | rpn --version\\n");')
commit("Improve usage message", TOM)

files["README.md"] += "\nMore operators: `swap sqrt abs drop`.\n"
commit("Document new operators")

edit("Makefile", "CFLAGS ?= -O2 -Wall", "CFLAGS ?= -O2 -Wall -Wextra")
commit("Build with -Wextra", TOM)

files["tests/cases.txt"] += "2 3 4 * +\t14\n2 0.5 ^\t1.414213562\n"
commit("More test cases")

edit("version.h", '"0.5"', '"0.6"')
files["tests/cases.txt"] = files["tests/cases.txt"].replace("rpn 0.5", "rpn 0.6")
commit("Release 0.6", TOM)
