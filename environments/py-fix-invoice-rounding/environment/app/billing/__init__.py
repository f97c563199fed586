"""Invoice arithmetic for the billing service."""

from billing.invoice import InvoiceError, Line, Totals, compute_totals, load_invoice
from billing.money import format_money, to_money

__all__ = ["InvoiceError", "Line", "Totals", "compute_totals", "format_money", "load_invoice",
           "to_money"]
