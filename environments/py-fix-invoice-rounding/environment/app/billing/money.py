"""Money helpers: exact decimal amounts rounded to cents."""

from decimal import Decimal, InvalidOperation

CENT = Decimal("0.01")


def to_money(value):
    """Round a Decimal (or a decimal string / int) to cents, halves away from zero."""
    if isinstance(value, float):
        raise TypeError("use Decimal or str for money, not float")
    try:
        amount = Decimal(value)
    except (InvalidOperation, TypeError) as exc:
        raise ValueError(f"not a decimal amount: {value!r}") from exc
    if not amount.is_finite():
        raise ValueError(f"not a finite amount: {value!r}")
    return Decimal(str(round(float(amount), 2))).quantize(CENT)


def format_money(amount, currency):
    """'-1,234.50 EUR': sign, thousands separators, two decimals, currency code."""
    amount = to_money(amount)
    return f"{abs(amount):,.2f} {currency}"
