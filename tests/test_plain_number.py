"""The one rule for a whole number read from a file or typed by a person."""

from __future__ import annotations

import pytest

from ctxview.plain_number import MAX_DIGITS, plain_number


@pytest.mark.parametrize("text, number", [
    ("0", 0), ("12", 12), ("007", 7), ("9" * MAX_DIGITS, int("9" * MAX_DIGITS)),
    ("0" * 5000 + "42", 42),  # leading zeros are not digits that count, and never reach int()
])
def test_plain_digits_are_read(text, number):
    assert plain_number(text) == number


@pytest.mark.parametrize("text", [
    "", "²", "①", "٣", "１２", "1_0", " 7", "7 ", "-1", "+1", "1.5", "0x10", "1e3",
    "9" * (MAX_DIGITS + 1), "9" * 5000,  # int() refuses the second with an error of its own
])
def test_anything_else_is_none_and_never_an_error(text):
    assert plain_number(text) is None


def test_the_digit_cap_is_the_callers():
    assert plain_number("12345", 5) == 12345 and plain_number("123456", 5) is None
