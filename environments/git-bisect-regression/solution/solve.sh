#!/usr/bin/env bash
set -euo pipefail
cat > /app/bisect-check.sh <<'CHECK'
#!/usr/bin/env bash
# git bisect run helper: 0 = good, 1 = bad, 125 = cannot build.
rm -f rpn ./*.o
make -s rpn >/dev/null 2>&1 || exit 125
[ -x ./rpn ] || exit 125
./rpn '3 -2 *' >/dev/null 2>&1
case $? in
  0) exit 0 ;;
  2) exit 1 ;;
  *) exit 125 ;;
esac
CHECK
chmod +x /app/bisect-check.sh

cd /app/rpn-calc
git config user.name >/dev/null || git config user.name "Bisector"
git config user.email >/dev/null || git config user.email "bisector@example.com"
git checkout -q main
first=$(git rev-list --max-parents=0 main)
git bisect start main "$first" >/dev/null
git bisect run /app/bisect-check.sh > /tmp/bisect.log 2>&1
bad=$(sed -n 's/^\([0-9a-f]\{40\}\) is the first bad commit$/\1/p' /tmp/bisect.log)
git bisect reset >/dev/null 2>&1
[ -n "$bad" ]
echo "$bad" > /app/first-bad-commit.txt

python3 - <<'PY'
p = "lexer.c"
s = open(p).read()
old = """    if (isdigit((unsigned char)*s) || *s == '.') {
        char *end;
        t->kind = TOK_NUM;
        t->value = strtod(s, &end);
        s = end;
    } else if"""
new = """    int negative = *s == '-' && (isdigit((unsigned char)s[1]) || s[1] == '.');
    char *end = NULL;
    if (isdigit((unsigned char)*s) || *s == '.' || negative)
        strtod(s, &end);
    if (end != NULL && end != s) {
        t->kind = TOK_NUM;
        t->value = strtod(s, &end);
        s = end;
    } else if"""
assert s.count(old) == 1
open(p, "w").write(s.replace(old, new))
PY
printf '3 -2 *\t-6\n-2.5 2 *\t-5\n' >> tests/cases.txt
make -s clean >/dev/null
make -s test
make -s clean >/dev/null
git commit -q -am "Lex negative number literals again"
git status --short
