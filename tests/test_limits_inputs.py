"""Numbers as the owners' programs read them (`gpu_aks_policies.limits`, `quantities`).

The module they pin: `policies/limits.py`. Each test failed on the code before its fix."""

from __future__ import annotations

import pytest
from gpu_aks_policies.quantities import QuantityError, parse_quantity


@pytest.mark.parametrize("text, amount", [(" 1", 1), ("1\n", 1), ("\u00a01", 1), ("\u30001", 1), ("\x1c1", None),
                                          ("1\x1f", None), ("+1", 1), ("1e0", 1), ("1000m", 1), (".5", 0.5)])
def test_quantities_are_trimmed_as_the_api_server_trims_them(text, amount):
    # apimachinery's UnmarshalJSON trims with Go's strings.TrimSpace, which keeps U+001C-U+001F;
    # Python's str.strip() removed them, so the checker accepted what the API server refuses.
    if amount is None:
        with pytest.raises(QuantityError):
            parse_quantity(text)
    else:
        assert parse_quantity(text) == amount


def test_finite_numbers_are_one_check():
    from gpu_aks_policies.limits import is_finite_number, is_whole
    assert is_finite_number(10**400) and is_whole(10**400) and is_whole(3.0)
    for value in (True, float("nan"), float("inf"), "3", None):
        assert not is_finite_number(value) and not is_whole(value)
    assert is_finite_number(2.5) and not is_whole(2.5)


def test_go_integers_are_read_as_strconv_reads_them():
    from gpu_aks_policies.limits import go_int
    assert [go_int(text) for text in ("7", "-7", "+7", "007", "-9223372036854775808")] == [7, -7, 7, 7, -2**63]
    for text in ("", "+", "٧", "7_0", " 7", "7.0", "1e3", "9223372036854775808", "-9223372036854775809", "9" * 5000):
        assert go_int(text) is None, text
