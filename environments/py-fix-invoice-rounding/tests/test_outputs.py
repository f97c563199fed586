"""billing's tests. The package runs in a child process (app_bridge), never in pytest's."""

import json
import random
import subprocess
import sys
from decimal import ROUND_HALF_UP, Decimal

import pytest
from app_bridge import app_call, app_calls, app_calls_shared, raised


def D(s):
    return Decimal(s)


def ref_money(x):
    return Decimal(x).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def cli(*args):
    return subprocess.run([sys.executable, "-m", "billing", *args], capture_output=True, text=True,
                          cwd="/app", timeout=60)


def test_package_imports_from_app():
    assert app_call("package_file").startswith("/app/billing/")


# The cases of a parametrized test share one child process (app_calls_shared).
HALF_UP = [
    ("1.005", "1.01"), ("2.675", "2.68"), ("-0.125", "-0.13"), ("0.125", "0.13"), ("2", "2.00"),
    ("1.004999", "1.00"), ("-2.5", "-2.50"), ("12345678901234567.895", "12345678901234567.90"),
]


@pytest.mark.parametrize("raw, want", HALF_UP)
def test_to_money_half_up(raw, want):
    [got] = app_calls_shared(HALF_UP, (raw, want), lambda case: [("to_money", case[0])])
    assert isinstance(got, Decimal)
    assert str(got) == want


def test_to_money_accepts_decimal_and_int():
    a, b = app_calls(("to_money", D("0.015")), ("to_money", 7))
    assert str(a) == "0.02"
    assert str(b) == "7.00"


def test_to_money_rejects_bad_input():
    bads = ["abc", "NaN", "Infinity", ""]
    from_float, *results = app_calls(("to_money", 1.5), *[("to_money", bad) for bad in bads])
    assert raised(from_float, TypeError), from_float
    for bad, result in zip(bads, results, strict=True):
        assert raised(result, ValueError), (bad, result)


FORMATTED = [
    (D("-1234.5"), "-1,234.50 EUR"), (D("1234567.891"), "1,234,567.89 EUR"), (D("0"), "0.00 EUR"),
    (D("-0.001"), "0.00 EUR"), (D("-0.005"), "-0.01 EUR"), (D("999.995"), "1,000.00 EUR"),
]


@pytest.mark.parametrize("amount, want", FORMATTED)
def test_format_money(amount, want):
    [got] = app_calls_shared(FORMATTED, (amount, want), lambda case: [("format_money", case[0], "EUR")])
    assert got == want


def test_line_total_rounds_half_up():
    x, y, z = app_calls(("line_total", "x", 3, D("0.335")), ("line_total", "y", 1, D("1.005")),
                        ("line_total", "z", 7, D("0.105")))
    assert x == D("1.01")
    assert y == D("1.01")
    assert z == D("0.74")


def test_tax_on_discounted_amount():
    lines = [("a", 1, D("100.00"))]
    t = app_call("totals", lines, "10", "0.2")
    assert (t.subtotal, t.discount, t.tax, t.total) == (D("100.00"), D("10.00"), D("18.00"), D("108.00"))


def test_totals_are_two_place_decimals():
    t = app_call("totals", [("a", 3, D("0.333"))], "33.333", "0.07")
    for value in (t.subtotal, t.discount, t.tax, t.total, t.average_line):
        assert isinstance(value, Decimal)
        assert value.as_tuple().exponent == -2
    assert (t.subtotal, t.discount, t.tax, t.total) == (D("1.00"), D("0.33"), D("0.05"), D("0.72"))


def test_empty_invoice():
    t = app_call("totals", [], "50", "0.2")
    assert (t.subtotal, t.discount, t.tax, t.total, t.average_line) == (D("0.00"),) * 5


def test_average_line():
    lines = [("a", 1, D("10.00")), ("b", 1, D("0.01")), ("c", 2, D("0.01"))]
    assert app_call("totals", lines).average_line == D("3.34")


def test_discount_and_tax_bounds():
    lines = [("a", 1, D("80.00"))]
    bounds = [("100.01", "0"), ("-1", "0"), ("5", "-0.01")]
    none, full, invoice_error, *results = app_calls(
        ("totals", lines, "0", "0"), ("totals", lines, "100", "0.25"), ("InvoiceError",),
        *[("totals", lines, pct, rate) for pct, rate in bounds])
    assert none.total == D("80.00")
    assert full.total == D("0.00")
    for (pct, rate), result in zip(bounds, results, strict=True):
        assert raised(result, invoice_error), (pct, rate, result)


BAD_QTYS = [0, -1, True, False, 1.5, "2", None]


@pytest.mark.parametrize("qty", BAD_QTYS)
def test_make_line_rejects_bad_qty(qty):
    result, invoice_error = app_calls_shared(BAD_QTYS, qty, lambda qty: [
        ("make_line", {"sku": "x", "qty": qty, "unit_price": "1.00"}), ("InvoiceError",)])
    assert raised(result, invoice_error), result


def test_make_line_rules():
    prices = ["-0.01", 1.25, "free"]
    line, integer_price, invoice_error, *results = app_calls(
        ("make_line", {"sku": "ok", "qty": 2, "unit_price": "3.10"}),
        ("make_line", {"sku": "i", "qty": 1, "unit_price": 5}), ("InvoiceError",),
        *[("make_line", {"sku": "x", "qty": 1, "unit_price": price}) for price in prices])
    assert line.total == D("6.20")
    assert integer_price.total == D("5.00")
    for price, result in zip(prices, results, strict=True):
        assert raised(result, invoice_error), (price, result)


def test_exact_for_large_amounts():
    lines = [("big", 3, D("12345678901234567.895"))]
    t = app_call("totals", lines, "0", "0")
    assert t.subtotal == D("37037036703703703.69")


def test_random_invoices_match_reference():
    rnd = random.Random(8)
    calls, expected = [], []
    for _ in range(300):
        lines, ref_lines = [], []
        for _ in range(rnd.randint(1, 6)):
            qty = rnd.randint(1, 20)
            price = D(rnd.randint(0, 500000)) / D(1000)
            lines.append(("s", qty, price))
            ref_lines.append(ref_money(price * qty))
        pct = D(rnd.randint(0, 4000)) / D(100)
        rate = D(rnd.choice(["0", "0.07", "0.19", "0.2", "0.255"]))
        sub = sum(ref_lines, D("0.00"))
        disc = ref_money(sub * pct / 100)
        tax = ref_money((sub - disc) * rate)
        calls.append(("totals", lines, str(pct), str(rate)))
        expected.append(((sub, disc, tax, sub - disc + tax), ref_money(sub / len(lines))))
    for t, (amounts, average) in zip(app_calls(*calls), expected, strict=True):
        assert (t.subtotal, t.discount, t.tax, t.total) == amounts
        assert t.average_line == average


def test_cli_sample_output():
    res = cli("/app/invoices/sample.json")
    assert res.returncode == 0, res.stderr
    assert res.stdout == (
        "PEN-BLUE: 3 x 1.15 = 3.45 EUR\n"
        "ERASER: 1 x 1.005 = 1.01 EUR\n"
        "NOTEBOOK-A5: 2 x 4.445 = 8.89 EUR\n"
        "DESK-LAMP: 1 x 1234.5 = 1,234.50 EUR\n"
        "subtotal: 1,247.85 EUR\n"
        "discount: 155.98 EUR\n"
        "tax: 207.46 EUR\n"
        "total: 1,299.33 EUR\n")


def test_cli_empty_invoice(tmp_path):
    path = tmp_path / "empty.json"
    path.write_text(json.dumps({"currency": "USD", "lines": [], "tax_rate": "0.1"}))
    res = cli(str(path))
    assert res.returncode == 0, res.stderr
    assert res.stdout == "subtotal: 0.00 USD\ndiscount: 0.00 USD\ntax: 0.00 USD\ntotal: 0.00 USD\n"


def test_cli_invalid_invoice_exit_1(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"lines": [{"sku": "a", "qty": 0, "unit_price": "1"}]}))
    res = cli(str(path))
    assert res.returncode == 1
    assert res.stderr.startswith("error:")
    assert res.stdout == ""


def test_cli_missing_file_and_usage(tmp_path):
    res = cli(str(tmp_path / "nope.json"))
    assert res.returncode == 2 and res.stderr.strip()
    assert cli().returncode == 2
    assert cli("a.json", "b.json").returncode == 2
