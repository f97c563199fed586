#!/usr/bin/env bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path


def edit(path, old, new):
    p = Path(path)
    s = p.read_text()
    assert s.count(old) == 1, (path, old)
    p.write_text(s.replace(old, new))


# Exact half-up rounding instead of float round() (binary + banker's rounding).
edit("billing/money.py", "from decimal import Decimal, InvalidOperation",
     "from decimal import ROUND_HALF_UP, Decimal, InvalidOperation")
edit("billing/money.py", "    return Decimal(str(round(float(amount), 2))).quantize(CENT)",
     "    return amount.quantize(CENT, rounding=ROUND_HALF_UP)")
# Keep the sign of negative amounts.
edit("billing/money.py", '''    amount = to_money(amount)
    return f"{abs(amount):,.2f} {currency}"''', '''    amount = to_money(amount)
    sign = "-" if amount < 0 else ""
    return f"{sign}{abs(amount):,.2f} {currency}"''')
# Tax on the discounted amount; no division by zero for empty invoices.
edit("billing/invoice.py", '''    tax = to_money(subtotal * tax_rate)
    average = to_money(subtotal / len(lines))
    return Totals(subtotal=to_money(subtotal), discount=discount, tax=tax,
                  total=to_money(subtotal - discount + tax), average_line=average)''', '''    taxable = subtotal - discount
    tax = to_money(taxable * tax_rate)
    average = to_money(subtotal / len(lines)) if lines else to_money(0)
    return Totals(subtotal=to_money(subtotal), discount=discount, tax=tax,
                  total=to_money(taxable + tax), average_line=average)''')
# qty: a real int, at least 1.
edit("billing/invoice.py", "    if not isinstance(qty, int) or qty < 0:",
     "    if isinstance(qty, bool) or not isinstance(qty, int) or qty < 1:")
# A missing file is a usage error (exit 2).
edit("billing/__main__.py", '''        print(f"error: no such file: {argv[0]}", file=sys.stderr)
        return 1''', '''        print(f"error: no such file: {argv[0]}", file=sys.stderr)
        return 2''')
PY
