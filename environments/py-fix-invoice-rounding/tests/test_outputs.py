import importlib
import json
import random
import subprocess
import sys
from decimal import ROUND_HALF_UP, Decimal

import pytest

sys.path.insert(0, "/app")


@pytest.fixture(scope="module")
def billing():
    for name in [m for m in sys.modules if m == "billing" or m.startswith("billing.")]:
        del sys.modules[name]
    return importlib.import_module("billing")


@pytest.fixture(scope="module")
def invoice_mod(billing):
    return importlib.import_module("billing.invoice")


def D(s):
    return Decimal(s)


def ref_money(x):
    return Decimal(x).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def cli(*args):
    return subprocess.run([sys.executable, "-m", "billing", *args], capture_output=True, text=True,
                          cwd="/app", timeout=60)


def test_package_imports_from_app(billing):
    assert billing.__file__.startswith("/app/billing/")


@pytest.mark.parametrize("raw, want", [
    ("1.005", "1.01"), ("2.675", "2.68"), ("-0.125", "-0.13"), ("0.125", "0.13"), ("2", "2.00"),
    ("1.004999", "1.00"), ("-2.5", "-2.50"), ("12345678901234567.895", "12345678901234567.90"),
])
def test_to_money_half_up(billing, raw, want):
    got = billing.to_money(raw)
    assert isinstance(got, Decimal)
    assert str(got) == want


def test_to_money_accepts_decimal_and_int(billing):
    assert str(billing.to_money(D("0.015"))) == "0.02"
    assert str(billing.to_money(7)) == "7.00"


def test_to_money_rejects_bad_input(billing):
    with pytest.raises(TypeError):
        billing.to_money(1.5)
    for bad in ["abc", "NaN", "Infinity", ""]:
        with pytest.raises(ValueError):
            billing.to_money(bad)


@pytest.mark.parametrize("amount, want", [
    (D("-1234.5"), "-1,234.50 EUR"), (D("1234567.891"), "1,234,567.89 EUR"), (D("0"), "0.00 EUR"),
    (D("-0.001"), "0.00 EUR"), (D("-0.005"), "-0.01 EUR"), (D("999.995"), "1,000.00 EUR"),
])
def test_format_money(billing, amount, want):
    assert billing.format_money(amount, "EUR") == want


def test_line_total_rounds_half_up(billing):
    assert billing.Line("x", 3, D("0.335")).total == D("1.01")
    assert billing.Line("y", 1, D("1.005")).total == D("1.01")
    assert billing.Line("z", 7, D("0.105")).total == D("0.74")


def test_tax_on_discounted_amount(billing):
    lines = [billing.Line("a", 1, D("100.00"))]
    t = billing.compute_totals(lines, "10", "0.2")
    assert (t.subtotal, t.discount, t.tax, t.total) == (D("100.00"), D("10.00"), D("18.00"), D("108.00"))


def test_totals_are_two_place_decimals(billing):
    t = billing.compute_totals([billing.Line("a", 3, D("0.333"))], "33.333", "0.07")
    for value in (t.subtotal, t.discount, t.tax, t.total, t.average_line):
        assert isinstance(value, Decimal)
        assert value.as_tuple().exponent == -2
    assert (t.subtotal, t.discount, t.tax, t.total) == (D("1.00"), D("0.33"), D("0.05"), D("0.72"))


def test_empty_invoice(billing):
    t = billing.compute_totals([], "50", "0.2")
    assert (t.subtotal, t.discount, t.tax, t.total, t.average_line) == (D("0.00"),) * 5


def test_average_line(billing):
    lines = [billing.Line("a", 1, D("10.00")), billing.Line("b", 1, D("0.01")), billing.Line("c", 2, D("0.01"))]
    assert billing.compute_totals(lines).average_line == D("3.34")


def test_discount_and_tax_bounds(billing):
    lines = [billing.Line("a", 1, D("80.00"))]
    assert billing.compute_totals(lines, "0", "0").total == D("80.00")
    assert billing.compute_totals(lines, "100", "0.25").total == D("0.00")
    for pct, rate in [("100.01", "0"), ("-1", "0"), ("5", "-0.01")]:
        with pytest.raises(billing.InvoiceError):
            billing.compute_totals(lines, pct, rate)


@pytest.mark.parametrize("qty", [0, -1, True, False, 1.5, "2", None])
def test_make_line_rejects_bad_qty(billing, invoice_mod, qty):
    with pytest.raises(billing.InvoiceError):
        invoice_mod.make_line({"sku": "x", "qty": qty, "unit_price": "1.00"})


def test_make_line_rules(billing, invoice_mod):
    line = invoice_mod.make_line({"sku": "ok", "qty": 2, "unit_price": "3.10"})
    assert line.total == D("6.20")
    assert invoice_mod.make_line({"sku": "i", "qty": 1, "unit_price": 5}).total == D("5.00")
    for price in ["-0.01", 1.25, "free"]:
        with pytest.raises(billing.InvoiceError):
            invoice_mod.make_line({"sku": "x", "qty": 1, "unit_price": price})


def test_exact_for_large_amounts(billing):
    lines = [billing.Line("big", 3, D("12345678901234567.895"))]
    t = billing.compute_totals(lines, "0", "0")
    assert t.subtotal == D("37037036703703703.69")


def test_random_invoices_match_reference(billing):
    rnd = random.Random(8)
    for _ in range(300):
        lines, ref_lines = [], []
        for _ in range(rnd.randint(1, 6)):
            qty = rnd.randint(1, 20)
            price = D(rnd.randint(0, 500000)) / D(1000)
            lines.append(billing.Line("s", qty, price))
            ref_lines.append(ref_money(price * qty))
        pct = D(rnd.randint(0, 4000)) / D(100)
        rate = D(rnd.choice(["0", "0.07", "0.19", "0.2", "0.255"]))
        sub = sum(ref_lines, D("0.00"))
        disc = ref_money(sub * pct / 100)
        tax = ref_money((sub - disc) * rate)
        t = billing.compute_totals(lines, str(pct), str(rate))
        assert (t.subtotal, t.discount, t.tax, t.total) == (sub, disc, tax, sub - disc + tax)
        assert t.average_line == ref_money(sub / len(lines))


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
