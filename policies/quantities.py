"""Kubernetes resource quantities, parsed by Kubernetes' own grammar into exact fractions.

    <quantity>     ::= <signedNumber><suffix>
    <signedNumber> ::= <number> | "+" <number> | "-" <number>
    <number>       ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
    <suffix>       ::= <binarySI> | <decimalExponent> | <decimalSI>
    <binarySI>     ::= Ki | Mi | Gi | Ti | Pi | Ei
    <decimalSI>    ::= n | u | m | "" | k | M | G | T | P | E
    <decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>   (an integer exponent)

`float()` is not that grammar: it accepts "inf", "nan", "1_000" and " 1", and rounds "0.1". Fractions
keep "1000m" exactly 1 and "1500m" exactly 3/2. JSON numbers are accepted as they cross the Pulumi
wire: integers, and floats (`1` arrives as `1.0`).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any

_QUANTITY_RE = re.compile(
    r"^(?P<sign>[+-])?(?P<number>[0-9]+(\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<binary>Ki|Mi|Gi|Ti|Pi|Ei)|[eE](?P<exponent>[+-]?[0-9]+)|(?P<decimal>[numkMGTPE]?))$"
)
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
    "P": Fraction(10**15), "E": Fraction(10**18),
}
#: Kubernetes caps exponents far below this; the cap keeps a hostile "1e999999999" from hanging us.
_MAX_EXPONENT = 60


class QuantityError(ValueError):
    pass


def parse_quantity(value: Any) -> Fraction:
    """The exact value of a quantity given as a JSON number or a Kubernetes quantity string."""
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is a boolean, not a quantity")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"{value!r} is not a finite number")
        return Fraction(value)
    if not isinstance(value, str):
        raise QuantityError(f"{value!r} is not a number or a quantity string")
    match = _QUANTITY_RE.match(value)
    if not match:
        raise QuantityError(f"{value!r} is not a Kubernetes quantity (examples: 1, \"2\", \"1000m\")")
    number = Fraction(match["number"] if not match["number"].endswith(".") else match["number"][:-1])
    if match["sign"] == "-":
        number = -number
    if match["binary"]:
        return number * _BINARY[match["binary"]]
    if match["exponent"] is not None:
        exponent = int(match["exponent"])
        if abs(exponent) > _MAX_EXPONENT:
            raise QuantityError(f"{value!r} has an exponent out of range")
        return number * Fraction(10) ** exponent
    return number * _DECIMAL[match["decimal"] or ""]


def format_amount(amount: Fraction) -> str:
    return str(amount.numerator) if amount.denominator == 1 else f"{float(amount):g}"
