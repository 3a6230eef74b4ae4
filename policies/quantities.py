"""Kubernetes resource quantities, read exactly as the API server reads them, into exact fractions.

    <quantity>     ::= <signedNumber><suffix>
    <signedNumber> ::= <number> | "+" <number> | "-" <number>
    <number>       ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
    <suffix>       ::= <binarySI> | <decimalExponent> | <decimalSI>
    <binarySI>     ::= Ki | Mi | Gi | Ti | Pi | Ei
    <decimalSI>    ::= n | u | m | "" | k | M | G | T | P | E
    <decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>   (an integer exponent)

How a value reaches the grammar is the API server's too (apimachinery `pkg/api/resource/quantity.go`,
`UnmarshalJSON`): JSON `null` is the zero quantity, surrounding quotes are removed and the text is
`strings.TrimSpace`d before parsing. `float()` is not that grammar: it accepts "inf", "nan" and
"1_000", and rounds "0.1". Fractions keep "1000m" exactly 1 and "1500m" exactly 3/2. JSON numbers
arrive as the Pulumi wire sends them: integers, and floats (`1` arrives as `1.0`).

Hostile sizes never reach Python's own limits: a quantity longer than `MAX_QUANTITY_CHARS` is refused
before any integer is built (Python refuses to convert strings of over 4300 digits), exponents are
capped, and an amount too large for the API server's 64-bit milli-value is reported as such.
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction
from typing import Any

from .limits import MAX_QUANTITY_CHARS, clipped

_QUANTITY_RE = re.compile(
    r"(?P<sign>[+-])?(?P<number>[0-9]+(\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<binary>Ki|Mi|Gi|Ti|Pi|Ei)|[eE](?P<exponent>[+-]?[0-9]+)|(?P<decimal>[numkMGTPE]?))"
)
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
    "P": Fraction(10**15), "E": Fraction(10**18),
}
#: What Go's `strings.TrimSpace` trims (`unicode.IsSpace`). Python's `str.strip()` also trims the
#: information separators U+001C-U+001F, which the API server keeps and then refuses.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
            "\u2028\u2029\u202f\u205f\u3000"
#: Kubernetes caps exponents far below this; the cap keeps a hostile "1e999999999" from hanging us.
_MAX_EXPONENT = 60


class QuantityError(ValueError):
    pass


class QuantityUnreadError(QuantityError):
    """A quantity the API server may accept that is past what is read here (too long, or too small an
    exponent to compute exactly): its amount is unknown, not refused."""


class QuantityTooLargeError(QuantityUnreadError):
    """A quantity the API server reads (its grammar, apimachinery `pkg/api/resource/quantity.go`
    `ParseQuantity`, takes any int32 exponent: "1e308" is one) whose exponent is past what is computed here
    exactly. `negative`: its sign, since a negative one is refused whatever its size."""

    def __init__(self, message: str, negative: bool) -> None:
        super().__init__(message)
        self.negative = negative


def shown(value: Any, limit: int = 24) -> str:
    """A value for a message: short, readable, never thousands of characters (a huge int is never
    converted whole: Python refuses ints of over 4300 digits to `str`)."""
    if isinstance(value, int) and abs(value) >= 10**MAX_QUANTITY_CHARS:  # never a bool: True is 1
        digits = math.floor(value.bit_length() * math.log10(2))  # within one of the count of its digits
        return f"a{' negative' if value < 0 else ''} number of about {digits} digits"
    text = repr(value) if isinstance(value, str) else str(value)
    length = len(value) if isinstance(value, str) else len(text)
    return clipped(text, limit, limit // 2, f"…{text[-4:]} ({length} characters)")


def parse_quantity(value: Any) -> Fraction:
    """The exact value of a quantity given as a JSON number, a quantity string, or null (zero)."""
    if value is None:
        return Fraction(0)
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is a boolean, not a quantity")
    if isinstance(value, int):
        if abs(value) >= 10**MAX_QUANTITY_CHARS:
            raise QuantityTooLargeError(f"{shown(value)} is far too large to be a quantity", value < 0)
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"{value!r} is not a finite number")
        return Fraction(value)
    if not isinstance(value, str):
        raise QuantityError(f"{shown(value)} is not a number or a quantity string")
    # Manifests repeat a handful of amounts ("1", "500m", "16Gi") thousands of times. Secret text (a
    # str subclass) is never kept past the request, so it is never remembered.
    if type(value) is str and len(value) <= MAX_QUANTITY_CHARS:
        return _parse_text(value)
    return _parse_text.__wrapped__(value)


@functools.lru_cache(maxsize=1024)
def _parse_text(value: str) -> Fraction:
    text = value.strip(_GO_SPACE)
    if len(text) > MAX_QUANTITY_CHARS:
        raise QuantityUnreadError(f"{shown(value)} is too long to be a quantity")
    match = _QUANTITY_RE.fullmatch(text)
    if not match:
        raise QuantityError(f"{shown(value)} is not a Kubernetes quantity (examples: 1, \"2\", \"1000m\")")
    digits = match["number"][:-1] if match["number"].endswith(".") else match["number"]
    number = Fraction(digits)
    if match["sign"] == "-":
        number = -number
    if match["binary"]:
        return number * _BINARY[match["binary"]]
    if match["exponent"] is not None:
        exponent = int(match["exponent"])
        if abs(exponent) > _MAX_EXPONENT:
            if number and exponent > 0:
                raise QuantityTooLargeError(f"{shown(value)} has an exponent out of range", number < 0)
            raise QuantityError(f"{shown(value)} has an exponent out of range")
        return number * Fraction(10) ** exponent
    return number * _DECIMAL[match["decimal"] or ""]


#: Fractional amounts below this (in absolute value) are printed through float (`:g`); larger ones as
#: their whole part, never converted through float.
_FLOAT_EXACT_BELOW = 10**15


def format_amount(amount: Fraction) -> str:
    """An amount as people write it, without ever converting a huge value through float."""
    if amount.denominator == 1:
        text = str(amount.numerator)
        return clipped(text, 24, 8, f"…({len(text)} digits)")
    if abs(amount.numerator) < _FLOAT_EXACT_BELOW * amount.denominator:  # |amount| < 10**15, in ints
        return f"{float(amount):g}"
    return f"about {amount.numerator // amount.denominator}"
