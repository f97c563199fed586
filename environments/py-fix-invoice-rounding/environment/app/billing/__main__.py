"""python3 -m billing INVOICE.json: print an invoice summary."""

import json
import sys

from billing.invoice import InvoiceError, load_invoice
from billing.money import format_money


def main(argv):
    if len(argv) != 1:
        print("usage: python3 -m billing INVOICE.json", file=sys.stderr)
        return 2
    try:
        currency, lines, totals = load_invoice(argv[0])
    except FileNotFoundError:
        print(f"error: no such file: {argv[0]}", file=sys.stderr)
        return 1
    except (InvoiceError, json.JSONDecodeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for line in lines:
        print(f"{line.sku}: {line.qty} x {line.unit_price} = {format_money(line.total, currency)}")
    print(f"subtotal: {format_money(totals.subtotal, currency)}")
    print(f"discount: {format_money(totals.discount, currency)}")
    print(f"tax: {format_money(totals.tax, currency)}")
    print(f"total: {format_money(totals.total, currency)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
