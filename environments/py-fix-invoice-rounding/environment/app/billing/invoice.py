"""Invoice totals: line totals, invoice discount, tax."""

import json
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from billing.money import to_money


class InvoiceError(ValueError):
    """An invoice that breaks the rules."""


@dataclass(frozen=True)
class Line:
    sku: str
    qty: int
    unit_price: Decimal

    @property
    def total(self):
        return to_money(self.unit_price * self.qty)


@dataclass(frozen=True)
class Totals:
    subtotal: Decimal
    discount: Decimal
    tax: Decimal
    total: Decimal
    average_line: Decimal


def _decimal(value, what):
    if isinstance(value, (bool, float)) or value is None:
        raise InvoiceError(f"{what} must be a decimal string or integer, got {value!r}")
    try:
        d = Decimal(str(value))
    except InvalidOperation as exc:
        raise InvoiceError(f"{what} is not a number: {value!r}") from exc
    if not d.is_finite():
        raise InvoiceError(f"{what} is not finite: {value!r}")
    return d


def make_line(raw):
    qty = raw.get("qty")
    if not isinstance(qty, int) or qty < 0:
        raise InvoiceError(f"qty must be a positive integer, got {qty!r}")
    price = _decimal(raw.get("unit_price"), "unit_price")
    if price < 0:
        raise InvoiceError(f"unit_price must not be negative, got {price}")
    return Line(sku=str(raw.get("sku", "")), qty=qty, unit_price=price)


def compute_totals(lines, discount_pct="0", tax_rate="0"):
    discount_pct = _decimal(discount_pct, "discount_pct")
    tax_rate = _decimal(tax_rate, "tax_rate")
    if not Decimal(0) <= discount_pct <= Decimal(100):
        raise InvoiceError(f"discount_pct must be between 0 and 100, got {discount_pct}")
    if tax_rate < 0:
        raise InvoiceError(f"tax_rate must not be negative, got {tax_rate}")
    subtotal = sum((line.total for line in lines), Decimal("0.00"))
    discount = to_money(subtotal * discount_pct / 100)
    tax = to_money(subtotal * tax_rate)
    average = to_money(subtotal / len(lines))
    return Totals(subtotal=to_money(subtotal), discount=discount, tax=tax,
                  total=to_money(subtotal - discount + tax), average_line=average)


def load_invoice(path):
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    lines = [make_line(raw) for raw in data.get("lines", [])]
    totals = compute_totals(lines, data.get("discount_pct", "0"), data.get("tax_rate", "0"))
    return data.get("currency", "EUR"), lines, totals
